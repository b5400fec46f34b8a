"""The shapes the library API reads and answers."""

from __future__ import annotations

from rest_framework import serializers

from foldrun.contract import Finding
from foldrun.openapi import StrictBooleanField, StrictCharField, StrictIntegerField

from .actions.checks import RawFile
from .actions.writes import WriteResult
from .models import Changeset, Revision
from .services import changeset_dict


class FileContentField(StrictCharField):
    """A file's content as sent, NUL bytes and lone surrogates included.

    DRF's CharField refuses those as "files: 1: content: Null characters are
    not allowed.", naming a list position. The library's own byte check
    (`check_payload`, the one the CLI runs offline) refuses them instead,
    naming the file: where text belongs they are not text, and in storage/
    they are bytes like any other."""

    def __init__(self, **kwargs) -> None:
        from django.core.validators import ProhibitNullCharactersValidator
        from rest_framework.validators import ProhibitSurrogateCharactersValidator

        super().__init__(regex_pattern=r"^", **kwargs)
        self.validators = [
            v
            for v in self.validators
            if not isinstance(v, (ProhibitNullCharactersValidator, ProhibitSurrogateCharactersValidator))
        ]


class FileInSerializer(serializers.Serializer):
    path = StrictCharField(allow_blank=True)
    content = FileContentField(allow_blank=True, trim_whitespace=False)
    encoding = serializers.ChoiceField(choices=["utf-8", "base64"], default="utf-8")


class PushSerializer(serializers.Serializer):
    """`{"message", "files": [{path, content, encoding}], "delete": [path], "prune"}`."""

    message = StrictCharField(allow_blank=True, required=False, default="")
    files = FileInSerializer(many=True, required=False, default=list)
    delete = serializers.ListField(child=StrictCharField(allow_blank=True), required=False, default=list)
    prune = StrictBooleanField(required=False, default=False)

    def raw_files(self) -> list[RawFile]:
        return [RawFile(f["path"], f["content"], f["encoding"]) for f in self.validated_data["files"]]


class CheckFileInSerializer(FileInSerializer):
    """A file laid over the scope for a check: any path and content — what is wrong with them is a finding."""


class CheckSerializer(serializers.Serializer):
    files = CheckFileInSerializer(many=True, required=False, default=list)
    mode = serializers.ChoiceField(choices=["check", "deploy"], default="check")
    delete = serializers.ListField(child=StrictCharField(allow_blank=True), required=False, default=list)


class RollbackSerializer(serializers.Serializer):
    to = StrictIntegerField(min_value=0, max_value=2**31 - 1)
    message = StrictCharField(allow_blank=True, required=False, default="")


class EditSerializer(serializers.Serializer):
    content = FileContentField(allow_blank=True)
    message = StrictCharField(allow_blank=True, required=False, default="")


class InstallSerializer(serializers.Serializer):
    workspace = StrictCharField(
        required=False,
        allow_null=True,
        allow_blank=True,
        default=None,
        help_text="a workspace to install into; the account library when absent or empty",
    )


def findings_list(findings: list[Finding]) -> list[dict]:
    return [f.to_dict() for f in findings]


def write_result(result: WriteResult) -> dict:
    """The push/deploy answer: `{revision, changed, warnings}`."""
    return {
        "revision": changeset_dict(result.changeset) if result.changeset is not None else None,
        "changed": result.changed,
        "warnings": findings_list(result.warnings),
    }


def revision_dict(revision: Revision, changeset: Changeset) -> dict:
    """One file at one changeset, as history lists it."""
    return {
        "number": revision.number,
        "id": changeset.public_id,
        "file_revision_id": revision.public_id,
        "who": changeset.who,
        "when": changeset.created_at.isoformat(),
        "message": changeset.message,
        "kind": changeset.kind,
        "sha256": revision.sha256,
        "size": revision.size,
        "deleted": revision.deleted,
    }


# ---------------------------------------------------------------- OpenAPI
# The answers are plain dicts built by the views; these shapes let
# /api/schema/ document them (drf-spectacular cannot guess them). Only the
# schema reads them.

ACTIONS = ["added", "modified", "deleted"]
ENCODINGS = ["utf-8", "base64"]


class FindingOut(serializers.Serializer):
    file = serializers.CharField()
    line = serializers.IntegerField(allow_null=True)
    level = serializers.ChoiceField(choices=["error", "warning"])
    message = serializers.CharField()
    code = serializers.CharField()


class ChangesetOut(serializers.Serializer):
    id = serializers.CharField(help_text="rev_…")
    number = serializers.IntegerField()
    kind = serializers.CharField()
    message = serializers.CharField()
    author = serializers.CharField()
    created_at = serializers.DateTimeField()


class ChangedOut(serializers.Serializer):
    path = serializers.CharField()
    action = serializers.ChoiceField(choices=ACTIONS)


class WriteResultOut(serializers.Serializer):
    revision = ChangesetOut(allow_null=True, help_text="null when nothing changed")
    changed = ChangedOut(many=True)
    warnings = FindingOut(many=True)


class CheckResultOut(serializers.Serializer):
    ok = serializers.BooleanField()
    errors = serializers.IntegerField()
    warnings = serializers.IntegerField()
    findings = FindingOut(many=True)


class FileHeadOut(serializers.Serializer):
    path = serializers.CharField()
    sha256 = serializers.CharField()
    size = serializers.IntegerField()
    revision = serializers.IntegerField()
    encoding = serializers.ChoiceField(choices=ENCODINGS)
    gallery = serializers.CharField(allow_null=True, help_text="gallery · current / gallery · differs")


class FilesOut(serializers.Serializer):
    revision = serializers.IntegerField()
    results = FileHeadOut(many=True)


class FileOut(serializers.Serializer):
    path = serializers.CharField()
    content = serializers.CharField(help_text="text, or base64 when encoding is base64")
    encoding = serializers.ChoiceField(choices=ENCODINGS)
    sha256 = serializers.CharField()
    size = serializers.IntegerField()
    revision = ChangesetOut()
    gallery = serializers.CharField(allow_null=True)


class FileRevisionOut(serializers.Serializer):
    number = serializers.IntegerField()
    id = serializers.CharField()
    file_revision_id = serializers.CharField()
    who = serializers.CharField()
    when = serializers.DateTimeField()
    message = serializers.CharField()
    kind = serializers.CharField()
    sha256 = serializers.CharField()
    size = serializers.IntegerField()
    deleted = serializers.BooleanField()


class HistoryOut(serializers.Serializer):
    path = serializers.CharField()
    results = FileRevisionOut(many=True)


class RevisionRowOut(ChangesetOut):
    files = serializers.IntegerField(help_text="how many files the revision changed")


class RevisionsOut(serializers.Serializer):
    count = serializers.IntegerField()
    page = serializers.IntegerField()
    page_size = serializers.IntegerField()
    next = serializers.URLField(allow_null=True)
    results = RevisionRowOut(many=True)


class RevisionChangeOut(ChangedOut):
    sha256 = serializers.CharField()
    size = serializers.IntegerField()


class RevisionOut(serializers.Serializer):
    revision = ChangesetOut()
    changed = RevisionChangeOut(many=True)


class FileDiffOut(ChangedOut):
    diff = serializers.CharField(help_text="a unified diff")


class DiffOut(serializers.Serializer):
    path = serializers.CharField(required=False, help_text="with ?path=: the one file")
    diff = serializers.CharField(required=False, help_text="with ?path=: its unified diff")
    files = FileDiffOut(many=True, required=False, help_text="without ?path=: every file changed")

    def get_fields(self):
        fields = super().get_fields()
        # `from` is a Python keyword: declared here rather than as an attribute.
        fields["from"] = serializers.IntegerField()
        fields["to"] = serializers.IntegerField()
        return fields


class UseOut(serializers.Serializer):
    workspace = serializers.CharField(allow_null=True)
    agent = serializers.CharField(allow_null=True)
    path = serializers.CharField(required=False)


class LibraryEntryOut(serializers.Serializer):
    path = serializers.CharField()
    scope = serializers.ChoiceField(choices=["library", "gallery"])
    kind = serializers.CharField()
    name = serializers.CharField(allow_null=True)
    granted_by = UseOut(many=True)
    overridden_by = UseOut(many=True)
    gallery = serializers.CharField(allow_null=True)


class LibraryOut(serializers.Serializer):
    results = LibraryEntryOut(many=True)


class ShelfFileOut(serializers.Serializer):
    path = serializers.CharField()
    sha256 = serializers.CharField()
    size = serializers.IntegerField()


class CopyOut(serializers.Serializer):
    scope = serializers.ChoiceField(choices=["library", "workspace"])
    workspace = serializers.CharField(allow_null=True)
    mark = serializers.CharField()


class ShelfToolOut(serializers.Serializer):
    name = serializers.CharField()
    description = serializers.CharField()
    files = ShelfFileOut(many=True)
    kept = serializers.BooleanField()
    mark = serializers.CharField(allow_null=True)
    copies = CopyOut(many=True)


class GalleryOut(serializers.Serializer):
    results = ShelfToolOut(many=True)


class ShelfFileWithContentOut(ShelfFileOut):
    content = serializers.CharField()


class GalleryToolOut(serializers.Serializer):
    name = serializers.CharField()
    files = ShelfFileWithContentOut(many=True)


# A path as the contract takes one (foldrun.contract.paths): segments of letters, digits, '.', '-', '_', '@', '+'
# and inner spaces, at most 400 characters; and base64 as b64decode(validate=True) takes it.
PATH_PATTERN = r"^[A-Za-z0-9._@+-](?:[A-Za-z0-9 ._@+-]*[A-Za-z0-9._@+-])?(?:/[A-Za-z0-9._@+-](?:[A-Za-z0-9 ._@+-]*[A-Za-z0-9._@+-])?)*$"
BASE64_PATTERN = r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$"


def openapi_file_variants(result: dict, generator, request, public) -> dict:
    """drf-spectacular postprocessing hook: a file in a push or deploy body is text (`encoding` utf-8, the
    default) or base64 — two shapes (oneOf), so the schema says what content each encoding takes and what a
    path looks like; a file that does not is refused (422, each finding named). A check's files
    (CheckFileIn) stay any strings: what is wrong with them is the check's answer."""
    schemas = result.get("components", {}).get("schemas", {})
    if "FileInRequest" not in schemas:
        return result
    path = {
        "type": "string",
        "minLength": 1,
        "maxLength": 400,
        "pattern": PATH_PATTERN,
        "description": "relative to the desk: agents/…, flows/…, tools/…, knowledge/…, storage/…",
    }
    # A push's or deploy's `delete:` names files by the same paths (never empty); a check's stays any strings.
    if "PushRequest" in schemas:
        schemas["PushRequest"]["properties"]["delete"]["items"] = {
            **path,
            "description": "a file to delete, relative to the desk",
        }
    schemas["FileInRequest"] = {
        "oneOf": [
            {
                "type": "object",
                "title": "TextFile",
                "required": ["path", "content"],
                "properties": {
                    "path": path,
                    "content": {"type": "string", "description": "the file's text"},
                    "encoding": {"type": "string", "enum": ["utf-8"], "default": "utf-8"},
                },
            },
            {
                "type": "object",
                "title": "Base64File",
                "required": ["path", "content", "encoding"],
                "properties": {
                    "path": path,
                    "content": {"type": "string", "pattern": BASE64_PATTERN, "description": "the bytes, base64"},
                    "encoding": {"type": "string", "enum": ["base64"]},
                },
            },
        ]
    }
    return result
