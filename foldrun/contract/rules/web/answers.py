"""Who answers an action: a provider's name, short (`fetch: jina`) or long
(`fetch: {name: jina, key: ${MY_KEY}}`), checked against the one table the run
reads too."""

from __future__ import annotations

from typing import Any

from ... import web_engines as W
from ...desk import AGENT
from ..providers import did_you_mean, effective_provider_name, key_reference_problem
from .base import WebCheckBase, dotted

LONG_FORM_KEYS: tuple[str, ...] = ("name", "key")


class AnswerChecks(WebCheckBase):
    """The provider an action names."""

    def check_provider_name(self, action: str, name: Any, path: tuple) -> None:
        """The run refuses the same names in the same words: both read web_capabilities."""
        where = dotted(path)
        if (
            action == "browse"
            and isinstance(name, str)
            and W.engine_name(name.strip().lower())
            and name.strip().lower() not in W.providers_for(action)
        ):
            word = name.strip().lower()
            self.error(
                path,
                f"{where}: {word} is an engine, not a vendor; write web: {{browse: {{engine: {word}}}}}.",
                "web.provider_cannot",
            )
            return
        refused = W.provider_refusal(action, name)
        if refused is not None:
            code, sentence = refused
            if code == "web.provider_unknown" and (not isinstance(name, str) or not name.strip()):
                self.error(path, f"{where} must {sentence}.", code)
            else:
                self.error(path, f"{where}: {sentence}" + ("" if sentence.endswith((".", "?")) else "."), code)
            return
        self.check_model_provider(action, name.strip().lower(), path)

    def check_model_provider(self, action: str, name: str, path: tuple) -> None:
        """A model provider's own search or fetch runs only while that provider is the one answering."""
        if name not in W.MODEL_PROVIDER_ACTIONS.get(action, {}):
            return
        provider = effective_provider_name(self.desk, self.document)
        holder = "agent" if self.document.kind == AGENT else "file"
        sentence = W.model_provider_refusal(action, name, provider, holder)
        if sentence:
            self.error(path, f"{dotted(path)}: {sentence}.", "web.model_provider_mismatch")

    def check_long_or_short(self, action: str, value: Any, extra_keys: tuple[str, ...] = ()) -> dict | None:
        """`fetch: jina` or `fetch: {name: jina, key: ${MY_KEY}}`; returns the long form's dict."""
        path = ("web", action)
        if isinstance(value, str):
            self.check_provider_name(action, value, path)
            return None
        if not isinstance(value, dict):
            self.error(
                path,
                f"web.{action} must be a provider's name, e.g. {action}: {W.providers_for(action)[0]}, "
                f"or the long form {{name: {W.providers_for(action)[0]}, key: ${{NAME}}}}.",
                "web.shape",
            )
            return None
        if not extra_keys:
            for key in value:
                if key not in LONG_FORM_KEYS:
                    self.error(
                        path + (key,),
                        f"web.{action}.{key} is not a key of the long form{did_you_mean(key, LONG_FORM_KEYS)} "
                        f"It takes name: and key: ${{NAME}}.",
                        "web.unknown_key",
                    )
        if "name" in value:
            self.check_provider_name(action, value["name"], path + ("name",))
        elif not extra_keys:
            self.error(
                path,
                f"web.{action} has no name:; name who answers {action}, e.g. {{name: {W.providers_for(action)[0]}, key: ${{NAME}}}}.",
                "web.provider_unknown",
            )
        if "key" in value:
            problem = key_reference_problem(value["key"], f"web.{action}.key")
            if problem:
                self.error(path + ("key",), problem, "web.key_not_reference")
        return value
