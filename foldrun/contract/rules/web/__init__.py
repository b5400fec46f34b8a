"""`web:` blocks (and `language:` / `region:`): the check rules.

spec/tools.md, "Reaching the web" through "Tuning the account's own engine".
A block may sit in AGENTS.md, an agent or a flow; the rules read the raw
frontmatter dict. What each engine and provider can do comes from
`foldrun.contract.web_engines` — the one table the run and the gallery `web`
tool read too, so a pair refused here is refused there in the same words.

    web:
      actions: [search, fetch, crawl]        # what it may do — all eight when absent
      search: exa                            # or {name: exa, key: ${MY_EXA_KEY}}, or a SearXNG block
      fetch: jina
      browse:                                # a vendor's name, or the browser's block
        engine: chrome
        identities: {au-mobile: {device: "Pixel 7", locale: en-AU}}
        via: browserbase
        vendor_session: {proxy: {country: AU}}

Codes start with `web.`. The check is one object (`_WebCheck`) built from a
part per concern: `answers` (who answers an action), `search`, `browse` (the
browser's block and identities) over `settings` (the values a block and an
identity share) and `vendors` (`via:` and `vendor_session:`), all on `base`.
"""

from __future__ import annotations

import re
from typing import Any, Iterator

from ... import web_engines as W
from ...check import Context, rule
from ...desk import AGENT, Desk, Document
from ...findings import Finding
from ..providers import Emitter, block_documents, did_you_mean, shown
from .base import as_list, dotted, is_tag
from .browse import BrowseChecks
from .search import SearchChecks

WEB_KEYS: tuple[str, ...] = ("actions",) + W.WEB_ACTIONS

_REGION_RE = re.compile(r"^[A-Za-z]{2}$")


class _WebCheck(SearchChecks, BrowseChecks):
    """One document's `web:` block."""

    def run(self, web: Any) -> None:
        path = ("web",)
        if not isinstance(web, dict):
            self.error(
                path,
                "web must be a block naming who answers each action, e.g. web: {search: exa, fetch: jina}.",
                "web.shape",
            )
            return
        for key in web:
            if key not in WEB_KEYS:
                self.error(
                    path + (key,),
                    f"web.{key} is not a web key{did_you_mean(key, WEB_KEYS)} The keys are {', '.join(WEB_KEYS)}.",
                    "web.unknown_key",
                )
        allowed = self.check_actions(web)
        for action in W.WEB_ACTIONS:
            if action not in web or web[action] is None:
                continue
            if allowed is not None and action not in allowed:
                self.warning(
                    path + (action,),
                    f"web.{action} names who answers {action}, but web.actions does not allow {action}, so it is never used; "
                    f"add {action} to web.actions or drop web.{action}.",
                    "web.action_not_allowed",
                )
            if action == "search":
                self.check_search(web[action])
            elif action == "browse":
                self.check_browse(web[action])
            else:
                self.check_long_or_short(action, web[action])
        self.check_declared_secrets()
        self.check_granted()

    def check_granted(self) -> None:
        """An agent's `web:` block configures a tool it must also be granted."""
        if self.document.kind != AGENT:
            return
        tools = self.document.meta.get("tools")
        names = as_list(tools) or []
        if "web" not in [str(n).strip() for n in names]:
            self.warning(
                ("web",),
                "web: is set, but this agent is not granted the web tool, so the block does nothing; add web to tools: or drop web:.",
                "web.not_granted",
            )

    def check_actions(self, web: dict) -> set[str] | None:
        if "actions" not in web:
            return None
        actions = web["actions"]
        if not isinstance(actions, list):
            self.error(
                ("web", "actions"),
                "web.actions must be a list of actions, e.g. actions: [search, fetch]; leave it out for all eight.",
                "web.actions",
            )
            return None
        for index, action in enumerate(actions):
            if action not in W.WEB_ACTIONS:
                self.error(
                    ("web", "actions", index),
                    f"web.actions: {shown(action)} is not an action{did_you_mean(action, W.WEB_ACTIONS)} "
                    f"The eight are {', '.join(W.WEB_ACTIONS)}.",
                    "web.actions",
                )
        return {a for a in actions if isinstance(a, str)}

    def check_declared_secrets(self) -> None:
        """An agent still declares every secret its block reads under `secrets:`."""
        if self.document.kind != AGENT or not self.secret_names:
            return
        declared = self.document.meta.get("secrets")
        declared_names = {str(s) for s in declared} if isinstance(declared, list) else set()
        for path, name in self.secret_names:
            if name not in declared_names:
                self.warning(
                    path,
                    f"{dotted(path)} reads the secret {name}, which this agent does not declare under secrets:; "
                    "add it there, or the step is not given it.",
                    "web.secret_undeclared",
                )


def _check_language_and_region(document: Document, emit: Emitter) -> None:
    meta = document.meta
    if "language" in meta and not is_tag(meta["language"]):
        emit(
            ("language",),
            "error",
            f"language: {shown(meta['language'])} is not a language tag; write one such as en, en-AU or pt-BR.",
            "web.language",
        )
    if "region" in meta and not (isinstance(meta["region"], str) and _REGION_RE.match(meta["region"])):
        emit(
            ("region",),
            "error",
            f"region: {shown(meta['region'])} is not a country code; write a two-letter one such as au or us.",
            "web.region",
        )


@rule("web")
def check_web_blocks(desk: Desk, ctx: Context) -> Iterator[Finding]:
    """Every `web:` block, `language:` and `region:` in AGENTS.md, agents and flows."""
    for document in block_documents(desk):
        meta = document.meta
        if "web" not in meta and "language" not in meta and "region" not in meta:
            continue
        emit = Emitter(document)
        if "web" in meta:
            _WebCheck(desk, document, emit, ctx.platform).run(meta["web"])
        _check_language_and_region(document, emit)
        yield from emit.findings
