"""`expect` claims and `confirm`: what the page must show, as it stands."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

from ..errors import WebToolError

if TYPE_CHECKING:  # pragma: no cover
    from playwright.sync_api import Page


class ClaimsMixin:
    """Checking a claim against the page."""

    def check_expectations(self, page: "Page", claims: list[dict]) -> None:
        """The call's `expect=` claims after its actions: each a ✓ or ✗ note; any that failed fails the call, the
        notes its sentence."""
        failed = []
        for claim in claims:
            problem = self.claim(page, claim, "expect") if "expect" in claim else 'a claim is {"expect": …}'
            self.notes.append(
                f"expect {'✓' if problem is None else '✗'} {json.dumps(claim, ensure_ascii=False)[:120]}"
                + (f" — {problem}" if problem else "")
            )
            if problem:
                failed.append(problem)
        if failed:
            raise WebToolError(self.redact("browse: " + "\n".join(self.notes)))

    def claim(self, page: "Page", step: dict, key: str) -> str | None:
        """None when the claim holds, else what was found instead."""
        subject = step.get(key)
        if subject in ("url", "title", "text"):
            actual = page.url if subject == "url" else page.title() if subject == "title" else page.inner_text("body")
            return _compare(subject, actual, step)
        locator = self.locate(page, subject)
        if step.get("gone"):
            return None if locator.count() == 0 or not locator.first.is_visible() else f"{subject} is still there"
        if "count" in step:
            count = locator.count()
            return None if count == int(step["count"]) else f"{subject}: {count} found, not {step['count']}"
        first = locator.first
        if locator.count() == 0 or not first.is_visible():  # the page as it stands: a claim does not wait
            return f"{subject} is not on the page"
        if "text" in step and str(step["text"]) not in first.inner_text():
            return f"{subject} reads {first.inner_text()[:120]!r}, without {step['text']!r}"
        if "value" in step and first.input_value() != str(step["value"]):
            return f"{subject} holds {first.input_value()!r}, not {step['value']!r}"
        if "checked" in step and first.is_checked() != bool(step["checked"]):
            return f"{subject} is {'' if first.is_checked() else 'not '}checked"
        if "enabled" in step and first.is_enabled() != bool(step["enabled"]):
            return f"{subject} is {'' if first.is_enabled() else 'not '}enabled"
        if "attr" in step:
            return _compare(f"{subject}@{step['attr']}", first.get_attribute(str(step["attr"])) or "", step)
        return None

    def confirm(self, page: "Page", selector: str) -> None:
        """Reload, and require the selector in what the server now returns."""
        page.reload(wait_until="load")
        locator = page.get_by_text(selector[5:]) if selector.startswith("text=") else self.locate(page, selector)
        if locator.count() == 0:
            raise WebToolError(
                f"browse: confirm={selector} is not on the page after a reload — the change did not "
                f"stick. Do not retry: a refused write is a session or a permission, not a flake"
            )
        self.notes.append(f"confirm ✓ {selector} after a reload")


def _compare(label: str, actual: str, step: dict) -> str | None:
    if "equals" in step:
        return None if actual == str(step["equals"]) else f"{label} is {actual[:160]!r}, not {step['equals']!r}"
    if "contains" in step:
        return None if str(step["contains"]) in actual else f"{label} is {actual[:160]!r}, without {step['contains']!r}"
    if "matches" in step:
        return (
            None
            if re.search(str(step["matches"]), actual)
            else f"{label} is {actual[:160]!r}, not matching {step['matches']!r}"
        )
    return None if actual else f"{label} is empty"
