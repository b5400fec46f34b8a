"""The skills an account can run: the platform's and the gallery shelf's, and the account library's own
(`skills/<name>/SKILL.md`).

The account's own skill of a name is nearer than the gallery's and hides it (the contract's nearest-wins). A
skill's version is the library changeset that last wrote its SKILL.md (`gallery` for the shelf's). Each is
read with the contract's parser, so a skill here is exactly what `foldrun check` sees.

    visible_skills(account) -> [VisibleSkill]          (by name)
    find_skill(account, name, version=None) -> VisibleSkill | None
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from accounts.models import Account
from foldrun.contract import Desk
from foldrun.contract.desk import SKILL, make_document
from foldrun.contract.findings import Finding
from foldrun.contract.model import skill_of
from foldrun.contract.skill_inputs import SkillDeclaration
from foldrun.gallery import gallery_files

from .services import file_at, files_at

GALLERY_VERSION = "gallery"
# The platform's own skills, offered over MCP only (smoke-uat: its checks are runs/skill_runs.py). They live
# beside this module, not on the gallery shelf, so no agent carries them in its context.
_BUILTIN = Path(__file__).resolve().parent / "builtin_skills"


@lru_cache(maxsize=1)
def _builtin_files() -> tuple[tuple[str, str], ...]:
    return tuple(
        (f"skills/{p.parent.name}/SKILL.md", p.read_text(encoding="utf-8")) for p in sorted(_BUILTIN.glob("*/SKILL.md"))
    )


@dataclass(frozen=True)
class VisibleSkill:
    name: str
    description: str
    version: str
    scope: str  # "library" (the account's own) or "gallery"
    path: str
    body: str
    declaration: SkillDeclaration
    problems: tuple[Finding, ...] = field(default=())

    @property
    def runnable(self) -> bool:
        return not any(p.level == "error" for p in self.problems)


def _skill_paths(files: dict[str, str]) -> dict[str, str]:
    out = {}
    for path, text in files.items():
        parts = path.split("/")
        if len(parts) == 3 and parts[0] == "skills" and parts[2] == "SKILL.md":
            out[path] = text
    return out


def _read(desk: Desk, path: str, text: str, scope: str, version: str) -> VisibleSkill:
    document = make_document(path, text, scope)
    if document.error is not None:
        return VisibleSkill(document.path_name, "", version, scope, path, "", SkillDeclaration(), (document.error,))
    skill = skill_of(desk, document)
    return VisibleSkill(
        skill.name, skill.description, version, scope, path, skill.body, skill.declaration, tuple(skill.problems)
    )


def visible_skills(account: Account) -> list[VisibleSkill]:
    revisions = files_at(account, None)
    library = _skill_paths({p: r.content for p, r in revisions.items() if r.encoding == "utf-8"})
    gallery = {**dict(_builtin_files()), **_skill_paths(gallery_files())}
    desk = Desk(files={}, library=library, gallery=gallery)
    found: dict[str, VisibleSkill] = {}
    for path, text in gallery.items():
        skill = _read(desk, path, text, "gallery", GALLERY_VERSION)
        found[skill.name] = skill
    for path, text in library.items():  # the account's own hides the gallery's of the same name
        skill = _read(desk, path, text, "library", str(revisions[path].number))
        found[skill.name] = skill
    return [found[name] for name in sorted(found) if _is_skill(found[name])]


def _is_skill(skill: VisibleSkill) -> bool:
    return bool(skill.name) and make_document(skill.path, "").kind == SKILL


def find_skill(account: Account, name: str, version: str | None = None) -> VisibleSkill | None:
    """The account's skill of this name; at a library version when asked (its SKILL.md as that changeset left it)."""
    skill = next((s for s in visible_skills(account) if s.name == name), None)
    if skill is None or version is None or version == skill.version:
        return skill
    if skill.scope != "library" or not version.isdigit():
        return None
    revision = file_at(account, None, skill.path, int(version))
    if revision is None:
        return None
    desk = Desk(files={}, library={skill.path: revision.content}, gallery={})
    return _read(desk, skill.path, revision.content, "library", str(revision.number))
