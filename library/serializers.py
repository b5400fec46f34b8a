"""The shapes the library API reads and answers."""
from __future__ import annotations

from rest_framework import serializers

from foldrun.contract import Finding

from .actions import RawFile, WriteResult
from .models import Changeset, Revision
from .services import changeset_dict


class FileInSerializer(serializers.Serializer):
    path = serializers.CharField(allow_blank=True, trim_whitespace=False)
    content = serializers.CharField(allow_blank=True, trim_whitespace=False)
    encoding = serializers.ChoiceField(choices=["utf-8", "base64"], default="utf-8")


class PushSerializer(serializers.Serializer):
    """`{"message", "files": [{path, content, encoding}], "delete": [path], "prune"}`."""

    message = serializers.CharField(allow_blank=True, required=False, default="", trim_whitespace=False)
    files = FileInSerializer(many=True, required=False, default=list)
    delete = serializers.ListField(child=serializers.CharField(allow_blank=True), required=False, default=list)
    prune = serializers.BooleanField(required=False, default=False)

    def raw_files(self) -> list[RawFile]:
        return [RawFile(f["path"], f["content"], f["encoding"]) for f in self.validated_data["files"]]


class CheckSerializer(serializers.Serializer):
    files = FileInSerializer(many=True, required=False, default=list)
    mode = serializers.ChoiceField(choices=["check", "deploy"], default="check")
    delete = serializers.ListField(child=serializers.CharField(allow_blank=True), required=False, default=list)


class RollbackSerializer(serializers.Serializer):
    to = serializers.IntegerField(min_value=0)
    message = serializers.CharField(allow_blank=True, required=False, default="", trim_whitespace=False)


class EditSerializer(serializers.Serializer):
    content = serializers.CharField(allow_blank=True, trim_whitespace=False)
    message = serializers.CharField(allow_blank=True, required=False, default="", trim_whitespace=False)


class InstallSerializer(serializers.Serializer):
    workspace = serializers.CharField(required=False, allow_null=True, default=None)


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
