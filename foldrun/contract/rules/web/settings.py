"""The value checks a `web.browse:` block and each of its identities share:
text, secrets, cookies, locale, time zone, geolocation, headers."""

from __future__ import annotations

import re
import zoneinfo
from typing import Any
from urllib.parse import urlparse

from ... import web_engines as W
from ..providers import did_you_mean, one_of, reference_name, secret_name_problem, shown
from .base import HOST_RE, WebCheckBase, as_list, dotted, is_tag

TEXT_KEYS: dict[str, str] = {  # key -> an example value for the message
    "engine": "chrome",
    "browser": "chrome",
    "version": "stable",
    "via": "browserbase",
    "user_agent": '"Mozilla/5.0 (…)"',
    "device": '"Pixel 7"',
    "locale": "en-AU",
    "timezone": "Australia/Sydney",
    "cookies": "MEDIUM_COOKIES",
    "cookie_domain": ".medium.com",
    "storage": "SITE_STORAGE",
    "storage_origin": "https://www.example.com",
    "proxy": "PROXY_AU",
    "auth": "SITE_BASIC_AUTH",
    "captcha": "CAPSOLVER_KEY",
    "captcha_solver": "capsolver",
    "state_key": "BROWSER_STATE_KEY",
    "geolocation": '"-33.87,151.21"',
    "color_scheme": "dark",
    "dialogs": "accept",
    "dialog_text": '"yes"',
}
SECRET_KEYS: tuple[str, ...] = ("cookies", "storage", "proxy", "auth", "captcha", "state_key")
BOOL_KEYS: tuple[str, ...] = ("headless", "live", "live_view", "webgpu", "ignore_https_errors", "boundaries")
# A header whose value is a credential: written without `${NAME}` it is a secret in a file.
CREDENTIAL_HEADERS: tuple[str, ...] = ("authorization", "proxy-authorization", "x-api-key", "api-key", "x-auth-token")

_GEO_RE = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*,\s*(-?\d+(?:\.\d+)?)\s*$")
_REF_IN_TEXT_RE = re.compile(r"\$\{([^}]*)\}")


def _is_timezone(value: str) -> bool:
    try:
        zoneinfo.ZoneInfo(value)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return False
    return True


class SettingsChecks(WebCheckBase):
    """The values of a browser block or an identity."""

    def check_settings(self, block: dict, path: tuple, *, is_identity: bool) -> None:
        """Value checks shared by the block and each identity."""
        where = dotted(path)
        for key, example in TEXT_KEYS.items():
            if key in block and not isinstance(block[key], str):
                self.error(
                    path + (key,),
                    f"{where}.{key} is not text; write it as one string, e.g. {key}: {example}.",
                    "web.browse_not_text",
                )
        for key in ("engine", "browser"):
            value = block.get(key)
            if isinstance(value, str) and W.engine_name(value) is None:
                self.error(
                    path + (key,),
                    f"{where}.{key}: {shown(value)} is not an engine{did_you_mean(value, W.ENGINE_SPELLINGS)} "
                    "The engines are chromium (the default), chrome, firefox, safari (webkit also works), lightpanda and obscura.",
                    "web.engine_unknown",
                )
        for key in SECRET_KEYS:
            value = block.get(key)
            if isinstance(value, str):
                problem = secret_name_problem(value, f"{where}.{key}", TEXT_KEYS[key])
                if problem:
                    self.error(path + (key,), problem, "web.secret_value")
                else:
                    self.secret_names.append((path + (key,), reference_name(value) or value))
        if isinstance(block.get("cookies"), str) and "cookie_domain" not in block:
            self.error(
                path + ("cookies",),
                f"{where}.cookies needs cookie_domain: beside it, the site the cookies belong to (e.g. cookie_domain: .medium.com); "
                "without it every page the agent opens would be handed that site's session.",
                "web.cookie_domain_missing",
            )
        if isinstance(block.get("cookie_domain"), str) and not HOST_RE.match(block["cookie_domain"].lstrip(".")):
            self.error(
                path + ("cookie_domain",),
                f"{where}.cookie_domain must be a domain such as .medium.com.",
                "web.browse_value",
            )
        if isinstance(block.get("locale"), str) and not is_tag(block["locale"]):
            self.error(
                path + ("locale",),
                f"{where}.locale: {shown(block['locale'])} is not a locale; write a language tag such as en-AU or pt-BR.",
                "web.locale",
            )
        if isinstance(block.get("timezone"), str) and not _is_timezone(block["timezone"]):
            self.error(
                path + ("timezone",),
                f"{where}.timezone: {shown(block['timezone'])} is not a time zone; write an IANA name such as Australia/Sydney.",
                "web.timezone",
            )
        if isinstance(block.get("geolocation"), str):
            match = _GEO_RE.match(block["geolocation"])
            if not match or not (-90 <= float(match.group(1)) <= 90 and -180 <= float(match.group(2)) <= 180):
                self.error(
                    path + ("geolocation",),
                    f'{where}.geolocation must be "lat,lng" the page will see, e.g. "-33.87,151.21".',
                    "web.browse_value",
                )
        for key, choices in (
            ("color_scheme", ("light", "dark")),
            ("dialogs", ("accept", "dismiss")),
            ("captcha_solver", W.CAPTCHA_SOLVERS),
        ):
            if isinstance(block.get(key), str) and block[key] not in choices:
                self.error(path + (key,), f"{where}.{key} must be {one_of(choices)}.", "web.browse_value")
        if "headers" in block:
            self.check_headers(block["headers"], path + ("headers",))
        if "block" in block and as_list(block["block"]) is None:
            self.error(
                path + ("block",),
                f'{where}.block must be resource types and host globs, e.g. block: "image,font,*.doubleclick.net".',
                "web.browse_value",
            )
        if is_identity:
            return
        for key in BOOL_KEYS:
            if key in block and not isinstance(block[key], bool):
                self.error(path + (key,), f"{where}.{key} must be true or false.", "web.browse_value")
        if "video" in block and not (
            isinstance(block["video"], bool) or (isinstance(block["video"], str) and block["video"].endswith(".webm"))
        ):
            self.error(path + ("video",), f"{where}.video must be true, false or a .webm path.", "web.browse_value")
        if "permissions" in block:
            items = as_list(block["permissions"])
            bad = [p for p in items or [None] if p not in W.PERMISSIONS]
            if bad:
                self.error(
                    path + ("permissions",),
                    f"{where}.permissions may grant only {one_of(W.PERMISSIONS)}.",
                    "web.browse_value",
                )
        if isinstance(block.get("storage"), str) and "storage_origin" not in block:
            self.error(
                path + ("storage",),
                f"{where}.storage needs storage_origin: beside it, the origin the storage belongs to (e.g. https://www.example.com) — "
                "storage is walled off per origin.",
                "web.storage_origin",
            )
        if isinstance(block.get("storage_origin"), str):
            origin = urlparse(block["storage_origin"])
            if (
                origin.scheme not in ("http", "https")
                or not origin.hostname
                or origin.path not in ("", "/")
                or origin.query
            ):
                self.error(
                    path + ("storage_origin",),
                    f"{where}.storage_origin must be an origin, a scheme and a host such as https://www.example.com; "
                    ".example.com cannot name one.",
                    "web.storage_origin",
                )

    def check_headers(self, headers: Any, path: tuple) -> None:
        where = dotted(path)
        if not isinstance(headers, dict):
            self.error(
                path,
                f"{where} must be a mapping of header names to values; a ${{NAME}} in a value is read from that secret.",
                "web.browse_value",
            )
            return
        for name, value in headers.items():
            lowered = str(name).lower()
            if lowered == "cookie":
                self.error(
                    path + (name,),
                    f"{where}.{name} is refused: cookies go in cookies:, as a secret's NAME, with cookie_domain: beside it.",
                    "web.header_cookie",
                )
                continue
            if not isinstance(value, str):
                self.error(
                    path + (name,),
                    f"{where}.{name} is not text; write the header's value as one string.",
                    "web.browse_not_text",
                )
                continue
            refs = _REF_IN_TEXT_RE.findall(value)
            for ref in refs:
                if reference_name("${" + ref + "}"):
                    self.secret_names.append((path + (name,), ref))
                else:
                    self.error(
                        path + (name,),
                        f"{where}.{name} holds a ${{…}} that is not a secret's NAME; write ${{NAME}} in capitals, digits and underscores.",
                        "web.secret_value",
                    )
            if lowered in CREDENTIAL_HEADERS and not refs:
                self.error(
                    path + (name,),
                    f"{where}.{name} holds a credential written into the file; keep the value in the vault and write ${{NAME}} in its place.",
                    "web.secret_value",
                )
