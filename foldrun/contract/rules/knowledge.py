"""knowledge/ and memory/: concepts need `type:`; index.md and log.md are
generated and not edited by hand."""

from __future__ import annotations

from ..check import rule
from ..desk import CONCEPT, GENERATED
from ..findings import Finding
from ..generated import concept_root, generated_edit_finding, render_index
from ..model import concept_of


@rule("knowledge.concepts")
def concepts(desk, context):
    for document in desk.of_kind(CONCEPT):
        if document.parsed is not None:
            yield from concept_of(desk, document).problems


@rule("knowledge.generated")
def generated(desk, context):
    indexes = [d for d in desk.of_kind(GENERATED) if d.path.endswith("/index.md")]
    if not indexes:
        return
    for document in indexes:
        root = concept_root(document.path)
        if root is None or document.path != f"{root}/index.md":
            continue
        members = {
            path[len(root) + 1 :]: desk.files[path]
            for path in desk.files_under("workspace", root)
            if path.endswith(".md") and path.rsplit("/", 1)[-1] not in ("index.md", "log.md")
        }
        if render_index(members).strip() != document.text.strip():
            finding = generated_edit_finding(document.path)
            yield Finding(finding.file, finding.line, "warning", finding.message, finding.code)
