"""`web.browse:`: a vendor's name or the browser's block — its keys, its
engine and what that engine can do, its lists, and its identities."""

from __future__ import annotations

import re
from typing import Any, Iterator

from ... import web_engines as W
from ...paths import PathError, normalise_path
from ..providers import closest, did_you_mean, shown
from .answers import AnswerChecks
from .base import HOST_RE, dotted
from .settings import SettingsChecks
from .vendors import VendorChecks

# Keys of the `web.browse:` block: how the browser presents itself, what it may
# do, where it renders. Everything here is a default a call may override,
# except the locks (`allowed_domains`, `deny`).
BROWSE_BLOCK_KEYS: tuple[str, ...] = (
    "engine",
    "browser",
    "version",
    "via",
    "headless",
    "user_agent",
    "device",
    "locale",
    "timezone",
    "geolocation",
    "permissions",
    "color_scheme",
    "headers",
    "proxy",
    "auth",
    "block",
    "cookies",
    "cookie_domain",
    "storage",
    "storage_origin",
    "captcha",
    "captcha_solver",
    "dialogs",
    "dialog_text",
    "live",
    "live_view",
    "video",
    "allowed_domains",
    "deny",
    "boundaries",
    "init",
    "extensions",
    "webgpu",
    "ignore_https_errors",
    "state_key",
    "identities",
    "vendor_session",
    "session",
)
# What one call does stays in the call: there is no block key for any of these.
CALL_ONLY_KEYS: tuple[str, ...] = (
    "url",
    "wait_for",
    "mode",
    "actions",
    "interactive",
    "js",
    "capture",
    "limit",
    "expect",
    "confirm",
    "routes",
    "identity",
    "state",
    "trace",
    "har",
    "within",
    "depth",
    "compact",
    "delta",
    "annotate",
    "visual",
    "cpu_profile",
    "max_output",
    "against",
)
# Who the browser *is*: "Engine, device, locale, timezone, user agent, proxy,
# headers, geolocation, colour scheme, block list and a cookie secret".
IDENTITY_KEYS: tuple[str, ...] = (
    "engine",
    "browser",
    "device",
    "locale",
    "timezone",
    "user_agent",
    "proxy",
    "headers",
    "geolocation",
    "color_scheme",
    "block",
    "cookies",
    "cookie_domain",
)

# The Chrome major a user agent claims: Chrome/154.0.0.0 (CriOS/ on iOS).
_CHROME_MAJOR_RE = re.compile(r"\b(?:Chrome|CriOS)/(\d+)(?:\.|\b)")


class BrowseChecks(AnswerChecks, SettingsChecks, VendorChecks):
    """The `web.browse:` block and its identities."""

    def check_browse(self, value: Any) -> None:
        path = ("web", "browse")
        if isinstance(value, str):
            self.check_provider_name("browse", value, path)
            return
        if not isinstance(value, dict):
            self.error(
                path,
                "web.browse must be a vendor's name (browse: browserbase) or the browser's block, e.g. browse: {engine: chrome, locale: en-AU}.",
                "web.shape",
            )
            return
        block = value
        for key in block:
            if key in CALL_ONLY_KEYS:
                self.error(
                    path + (key,),
                    f"web.browse.{key} belongs to a call, not to the file — what one call does stays in the call; "
                    f"pass {key}= on the web action=browse call.",
                    "web.browse_call_key",
                )
            elif key not in BROWSE_BLOCK_KEYS:
                near = ["via"] if key == "name" else closest(key, BROWSE_BLOCK_KEYS, limit=1)
                hint = f"; did you mean {near[0]}?" if near else f". The keys are {', '.join(BROWSE_BLOCK_KEYS)}."
                self.error(path + (key,), f"web.browse.{key} is not a web.browse key{hint}", "web.browse_unknown_key")
        self.check_settings(block, path, is_identity=False)
        engine = self.block_engine(block, path)
        vendor = None
        if "via" in block and isinstance(block["via"], str):
            self.check_provider_name("browse", block["via"], path + ("via",))
            vendor = block["via"].strip().lower() if block["via"].strip().lower() in W.BROWSE_VENDORS else None
        if engine and vendor is None:
            for capability, key in self.capabilities(block):
                if not W.engine_can(engine, capability):
                    self.error(
                        path + (key,), f"web.browse: {W.engine_refusal(engine, capability)}.", "web.engine_capability"
                    )
        if vendor is None:
            self.check_pinned_user_agent(block, path, engine)
        self.check_live(block, path)
        self.check_browse_lists(block, path)
        if "identities" in block:
            self.check_identities(block, path, engine, vendor)
        self.check_vendor(block, path, vendor)

    def check_pinned_user_agent(self, block: dict, path: tuple, engine: str | None) -> None:
        """spec/tools.md, "A pinned user agent has to keep up with Chrome": a
        pinned `user_agent:` claiming another Chrome major than the browser
        that sends it — on chrome the platform's Google Chrome (Chromium where
        it has none), on chromium (the default) its Chromium — is a warning,
        in check and deploy alike. Known only when the platform is: offline
        with no server, nothing is said. A vendor's browser (via:) is not ours
        to compare."""
        agent = block.get("user_agent")
        claimed = _CHROME_MAJOR_RE.search(agent) if isinstance(agent, str) else None
        engine = engine or W.DEFAULT_ENGINE
        if claimed is None or engine not in ("chromium", "chrome"):
            return
        major = self.platform.get(f"{engine}_major")
        browser = "Google Chrome" if engine == "chrome" and major is not None else "Chromium"
        if major is None and engine == "chrome":
            major = self.platform.get("chromium_major")  # chrome falls back to Chromium where it is not installed
        if major is None or int(claimed.group(1)) == major:
            return
        where = dotted(path)
        self.warning(
            path + ("user_agent",),
            f"{where}.user_agent claims Chrome {claimed.group(1)}, but the browser that sends it is {browser} {major}; "
            f"a site sees the mismatch beside the client hints and the JavaScript engine, which say {major} — "
            f"drop the pin so the user agent follows the browser, or raise it to Chrome/{major}.",
            "web.user_agent_stale",
        )

    def block_engine(self, block: dict, path: tuple) -> str | None:
        """The engine a block (or identity) names, after `engine`/`browser` agree."""
        engines = {key: W.engine_name(block[key]) for key in ("engine", "browser") if isinstance(block.get(key), str)}
        refusal = W.engine_disagreement(dotted(path), block.get("engine"), block.get("browser"))
        if refusal:
            self.error(path + ("browser",), f"{refusal}.", "web.engine_unknown")
        return engines.get("engine") or engines.get("browser")

    @staticmethod
    def capabilities(block: dict) -> Iterator[tuple[str, str]]:
        """(capability in the engine table, the key that asks for it) for a block or identity."""
        yield from W.settings_capabilities(block)

    def check_live(self, block: dict, path: tuple) -> None:
        if block.get("live") is not True:
            return
        for key in ("video", "auth", "device"):
            if block.get(key):
                self.warning(
                    path + (key,),
                    f"web.browse.{key} does nothing beside live: true — a live page does not support video, har, auth or device; "
                    "the call says so and carries on without it.",
                    "web.live_unsupported",
                )

    def check_browse_lists(self, block: dict, path: tuple) -> None:
        if "allowed_domains" in block:
            items = block["allowed_domains"]
            if not isinstance(items, list):
                self.error(
                    path + ("allowed_domains",),
                    'web.browse.allowed_domains must be a list of domains, e.g. [portal.example.com, "*.example-cdn.com"].',
                    "web.allowed_domains",
                )
            else:
                for index, item in enumerate(items):
                    host = item[2:] if isinstance(item, str) and item.startswith("*.") else item
                    if not isinstance(host, str) or not HOST_RE.match(host):
                        self.error(
                            path + ("allowed_domains", index),
                            f"web.browse.allowed_domains: {shown(item)} is not a domain; write a host such as portal.example.com "
                            "or a glob such as *.example.com — no scheme, no path.",
                            "web.allowed_domains",
                        )
        if "deny" in block:
            items = block["deny"]
            if not isinstance(items, list):
                self.error(
                    path + ("deny",),
                    "web.browse.deny must be a list of actions, e.g. deny: [eval, download, upload].",
                    "web.deny",
                )
            else:
                for index, item in enumerate(items):
                    if item not in W.DENYABLE:
                        self.error(
                            path + ("deny", index),
                            f"web.browse.deny: {shown(item)} is not an action, so denying it would deny nothing"
                            f"{did_you_mean(item, W.DENYABLE)}",
                            "web.deny",
                        )
        for key, what in (("init", "scripts"), ("extensions", "unpacked extensions")):
            if key not in block:
                continue
            items = block[key]
            if not isinstance(items, list):
                self.error(
                    path + (key,),
                    f"web.browse.{key} must be a list of workspace paths of {what}.",
                    "web.workspace_path",
                )
                continue
            for index, item in enumerate(items):
                if not self.workspace_path_exists(item, folder=key == "extensions"):
                    self.error(
                        path + (key, index),
                        f"web.browse.{key}: {shown(item)} is not {'a folder' if key == 'extensions' else 'a file'} in this workspace; "
                        f"{key}: takes workspace paths of {what}, e.g. {'extensions/my-extension' if key == 'extensions' else 'scripts/stub-analytics.js'}.",
                        "web.workspace_path",
                    )

    def workspace_path_exists(self, item: Any, *, folder: bool) -> bool:
        if not isinstance(item, str):
            return False
        try:
            path = normalise_path(item)
        except PathError:
            return False
        if folder:
            return any(name.startswith(path + "/") for name in self.desk.files)
        return path in self.desk.files

    # ------------------------------------------------------------ identities

    def check_identities(self, block: dict, path: tuple, block_engine: str | None, vendor: str | None) -> None:
        identities = block["identities"]
        ipath = path + ("identities",)
        if not isinstance(identities, dict):
            self.error(
                ipath,
                'web.browse.identities must map a name to who the browser is, e.g. au-mobile: {device: "Pixel 7", locale: en-AU}.',
                "web.identity",
            )
            return
        block_caps = dict(self.capabilities(block))
        for name, identity in identities.items():
            here = ipath + (name,)
            where = dotted(here)
            if not isinstance(identity, dict):
                self.error(
                    here,
                    f"{where} must be a block of identity settings, e.g. {{locale: en-AU, timezone: Australia/Sydney}}.",
                    "web.identity",
                )
                continue
            for key in identity:
                if key in CALL_ONLY_KEYS:
                    self.error(
                        here + (key,),
                        f"{where}.{key} belongs to a call, not to an identity — an identity is who the browser is "
                        f"({', '.join(IDENTITY_KEYS)}); pass {key}= on the call.",
                        "web.identity_call_key",
                    )
                elif key not in IDENTITY_KEYS:
                    self.error(
                        here + (key,),
                        f"{where}.{key} is not an identity key{did_you_mean(key, IDENTITY_KEYS)} "
                        f"An identity takes {', '.join(IDENTITY_KEYS)}.",
                        "web.identity_unknown_key",
                    )
            self.check_settings(identity, here, is_identity=True)
            own_engine = self.block_engine(identity, here)
            engine = own_engine or block_engine
            if vendor is None:
                self.check_pinned_user_agent(identity, here, engine)
            if not engine or vendor is not None:
                continue
            own_caps = dict(self.capabilities(identity))
            for capability in {**block_caps, **own_caps}:
                # A pair made only of the block's own settings is the block's finding, not this identity's.
                if (own_engine or capability in own_caps) and not W.engine_can(engine, capability):
                    key = own_caps.get(capability) or ("engine" if "engine" in identity else "browser")
                    self.error(
                        here + (key,), f"{where}: {W.engine_refusal(engine, capability)}.", "web.engine_capability"
                    )
