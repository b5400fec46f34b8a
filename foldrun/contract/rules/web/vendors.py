"""A vendor's browser (`via:`): what reaches it, and its `vendor_session:`
options, each refused where that vendor has no such option."""

from __future__ import annotations

from typing import Any

from ... import web_engines as W
from ..providers import did_you_mean, one_of, reference_name, secret_name_problem, shown
from .base import WebCheckBase, as_list, dotted


class VendorChecks(WebCheckBase):
    """`via:` a vendor and its `vendor_session:`."""

    def check_vendor(self, block: dict, path: tuple, vendor: str | None) -> None:
        if vendor is not None:
            for key in ("proxy", "block"):
                if block.get(key):
                    self.warning(
                        path + (key,),
                        f"web.browse.{key} does not reach {vendor}'s browser — it is a launch option, and the vendor launched it; "
                        f"ask the vendor's session for it (vendor_session: {{{key}: …}}).",
                        "web.vendor_launch_option",
                    )
        if vendor == "zenrows":
            places = [(path, block)]
            if isinstance(block.get("identities"), dict):
                places += [(path + ("identities", n), i) for n, i in block["identities"].items() if isinstance(i, dict)]
            for where_path, settings in places:
                for key in ("user_agent", "device"):
                    if key in settings:
                        self.error(
                            where_path + (key,),
                            f"{dotted(where_path)}.{key} is refused beside via: zenrows — "
                            "ZenRows' browser refuses a changed user agent or device.",
                            "web.vendor_refuses",
                        )
        has_old, has_new = "session" in block, "vendor_session" in block
        if has_old and has_new:
            self.error(
                path + ("session",),
                "web.browse writes both session: and vendor_session:; session: is the old name of vendor_session: — keep vendor_session: alone.",
                "web.vendor_session_both",
            )
            return
        if not (has_old or has_new):
            return
        key = "vendor_session" if has_new else "session"
        if has_old:
            self.warning(
                path + ("session",),
                "web.browse.session: is now called vendor_session: (renamed 2026-10-01, because a call's session= is a "
                "named saved login, a different thing); rename it.",
                "web.vendor_session_renamed",
            )
        self.check_vendor_session(block[key], path + (key,), block, vendor)

    def check_vendor_session(self, session: Any, path: tuple, block: dict, vendor: str | None) -> None:
        where = dotted(path)
        via = block.get("via").strip().lower() if isinstance(block.get("via"), str) else None
        if via == "cdp":
            self.error(
                path,
                f"{where} asks a vendor's browser for its options, but via: cdp is a browser of your own with no vendor session; drop it.",
                "web.vendor_session_no_vendor",
            )
            return
        if vendor is None:
            if via is None:
                self.error(
                    path,
                    f"{where} asks a vendor's browser for its options, but no vendor is named; add via: "
                    f"{one_of(W.BROWSE_VENDORS[:-1])} beside it.",
                    "web.vendor_session_no_vendor",
                )
            return
        if not isinstance(session, dict):
            self.error(
                path,
                f"{where} must be a block of the vendor's options, e.g. {{proxy: {{country: AU}}, captcha: true}}.",
                "web.vendor_session",
            )
            return
        for key, value in session.items():
            here = path + (key,)
            if key not in W.VENDOR_SESSION_KEYS:
                self.error(
                    here,
                    f"{where}.{key} is not a vendor_session key{did_you_mean(key, W.VENDOR_SESSION_KEYS)} "
                    f"The keys are {', '.join(W.VENDOR_SESSION_KEYS)}.",
                    "web.vendor_session",
                )
                continue
            if not self.vendor_has(vendor, key, here):
                continue
            if key == "proxy":
                self.check_vendor_proxy(value, here, vendor)
            elif key in ("region", "timeout"):
                refused = W.vendor_value_refusal(vendor, key, value, f"{where}.{key}")
                if refused:
                    self.error(here, refused, "web.vendor_session")
            elif key in ("captcha", "stealth", "record") and not isinstance(value, bool):
                self.error(here, f"{where}.{key} must be true or false.", "web.vendor_session")
            elif key == "keep":
                if not isinstance(value, str) or not value.strip():
                    self.error(
                        here,
                        f"{where}.keep must be a name for the saved login, e.g. keep: client-portal.",
                        "web.vendor_session",
                    )
                for beside in ("user_agent", "device", "locale", "timezone", "identities"):
                    if beside in block:
                        self.error(
                            path[:-1] + (beside,),
                            f"web.browse.{beside} is refused beside {where}.keep — {vendor}'s kept {W.VENDOR_SESSION_OPTIONS['keep'][vendor].removeprefix('a ')} "
                            "is the vendor's own browser context as it stands.",
                            "web.vendor_keep_conflict",
                        )
            elif key == "block":
                items = as_list(value)
                if items is None:
                    self.error(here, f"{where}.block must be a list of ads, trackers or cookies.", "web.vendor_session")
                    continue
                for index, word in enumerate(items):
                    if word not in W.VENDOR_BLOCK_WORDS:
                        self.error(
                            here + (index,),
                            f"{where}.block: {shown(word)} is not one of ads, trackers, cookies.",
                            "web.vendor_session",
                        )
                    elif W.vendor_block_refusal(vendor, word, f"{where}.block"):
                        self.error(
                            here + (index,),
                            W.vendor_block_refusal(vendor, word, f"{where}.block"),
                            "web.vendor_session_unsupported",
                        )
            elif key == "options" and not isinstance(value, dict):
                self.error(
                    here,
                    f"{where}.options must be a mapping of the vendor's own fields, as its docs name them.",
                    "web.vendor_session",
                )

    def vendor_has(self, vendor: str, setting: str, path: tuple) -> bool:
        refused = W.vendor_session_refusal(vendor, setting, dotted(path))
        if refused is None:
            return True
        self.error(path, refused, "web.vendor_session_unsupported")
        return False

    def check_vendor_proxy(self, value: Any, path: tuple, vendor: str) -> None:
        where = dotted(path)
        if isinstance(value, bool):
            return
        if not isinstance(value, dict):
            self.error(
                path,
                f"{where} must be true, {{country, state, city}} or {{own: MY_PROXY_SECRET}}.",
                "web.vendor_session",
            )
            return
        for key, item in value.items():
            here = path + (key,)
            if key not in ("country", "state", "city", "own"):
                self.error(
                    here,
                    f"{where}.{key} is not a proxy setting{did_you_mean(key, ('country', 'state', 'city', 'own'))} "
                    "It takes country, state, city, or own.",
                    "web.vendor_session",
                )
                continue
            if not self.vendor_has(vendor, f"proxy.{key}", here):
                continue
            if key == "own":
                problem = secret_name_problem(item, f"{where}.own", "MY_PROXY_SECRET")
                if problem:
                    self.error(here, problem, "web.secret_value")
                elif isinstance(item, str):
                    self.secret_names.append((here, reference_name(item) or item))
            elif key == "country" and W.vendor_country_refusal(vendor, value, where):
                self.error(here, W.vendor_country_refusal(vendor, value, where), "web.vendor_session")
            elif key == "state" and W.vendor_state_refusal(vendor, value, where):
                self.error(here, W.vendor_state_refusal(vendor, value, where), "web.vendor_session_unsupported")
            elif key == "state" and W.vendor_state_code_refusal(vendor, value, where):
                self.error(here, W.vendor_state_code_refusal(vendor, value, where), "web.vendor_session")
            elif not isinstance(item, str):
                self.error(
                    here,
                    f"{where}.{key} is not text; write it as one string, e.g. {key}: {'NY' if key == 'state' else 'Sydney'}.",
                    "web.vendor_session",
                )
            elif key == "city" and W.vendor_city_refusal(vendor, value, where):
                self.error(here, W.vendor_city_refusal(vendor, value, where), "web.vendor_session_unsupported")
