"""Everything one browse call holds while it runs, and the guards it applies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ..errors import WebToolError
from ..net import GuardProxy, NoSuchHost, PrivateAddress, Refused, checked_addresses, scrub_url
from .claims import ClaimsMixin
from .context import ContextMixin
from .deadline import Deadline, seconds_of
from .refs import RefsMixin
from .storage import StorageMixin
from .util import allow_host_match, domain_match

if TYPE_CHECKING:  # pragma: no cover
    from playwright.sync_api import Page

    from ..tool import WebTool


class Call(ContextMixin, StorageMixin, RefsMixin, ClaimsMixin):
    """Everything one browse call holds while it runs."""

    def __init__(self, tool: "WebTool", args: dict) -> None:
        self.tool = tool
        self.args = args
        self.deadline = Deadline(seconds_of(args.get("timeout")))  # run() starts the clock once the browser is there
        block = tool.config.get("browse")
        self.block: dict = block if isinstance(block, dict) else {}
        self.notes: list[str] = []  # lines at the top of the output (what a ref matched, a fallback)
        self.results: list[dict] = []  # get / eval answers
        self.page_failures: list[str] = []  # the page's own errors, one line each
        self.refused_hosts: dict[str, str] = {}
        self.session_key = str(args.get("session") or "default")
        self.secrets: dict[str, str] = {}  # name -> value used in this call, redacted from every output
        self.kept: dict[str, str] = {}  # the same from earlier calls in its session: redacted, nothing more
        self.seeded: bool | str = False  # cookies (True) or "storage" from a secret (or "unrecorded"): no script
        self.secrets_in_steps = False  # a fill/type from a secret somewhere in the steps
        self.dialog: tuple[str, Any] = (
            str(args.get("dialogs") or self.block.get("dialogs") or "dismiss"),
            args.get("dialog_text") or self.block.get("dialog_text"),
        )
        self.console: list[dict] = []
        self.network: list[dict] = []
        self.exchanges: dict[str, list[str]] = {"request": [], "response": []}  # URLs, when a step waits on one
        self.main_response: dict = {}
        self.captured: list = []  # responses the `capture` glob matched
        self.saved_captures: list[dict] = []
        self.proxy: GuardProxy | None = None
        self.har_target: Path | None = None  # `har`: every request and response, written when the context closes
        self.recording: Any = None  # `video`: a watch.Recording, encoded when the call ends
        self.recordings: dict[str, Any] = {}  # what the call kept to watch it by: trace, har, video (for the Run page)
        self.fresh_page: "Page | None" = None  # the first tab of a spare context (spare.py), when it had one
        self.page: "Page | None" = None  # the tab the steps act on (a `tab` step moves it)
        self.scope: Any = None  # the frame a `frame` step chose, else None (the page)
        self.tabs: dict[str, "Page"] = {}  # labels given to tabs opened with "new"
        self.listened: list["Page"] = []  # pages whose failures and console this call records
        self.listeners: list[tuple] = []  # (page, event, handler): dropped after a call on a session's page
        self.known_tabs = 1  # tabs open when the steps last switched: more means a click opened one
        self.init: list[tuple[str, str]] = []  # (path, source): the init scripts every page runs first
        self.pointer: tuple[float, float] | None = None  # where a "human" move left the pointer
        self.captcha: Any = None  # `captcha=`: the call's solver (captcha.Solving), else None
        identities = self.block.get("identities") if isinstance(self.block.get("identities"), dict) else {}
        wanted = args.get("identity")
        if wanted and wanted not in identities:
            raise WebToolError(
                f"browse: identity={wanted} is not in web.browse.identities"
                + (f"; the identities are {', '.join(identities)}" if identities else "")
            )
        self.identity: dict = dict(identities.get(wanted) or {}) if wanted else {}
        self.vendor: Any = None  # vendors.Opened: the call browses on a vendor's browser

    # -- guards ------------------------------------------------------------------
    def allowed_domains(self) -> list[str] | None:
        """The block's list is a lock; a call's may only narrow it."""
        block = [str(d).lower() for d in self.block.get("allowed_domains") or []] or None
        call = self.args.get("allowed_domains")
        if isinstance(call, str):
            call = [d.strip() for d in call.split(",") if d.strip()]
        call = [str(d).lower() for d in call or []] or None
        if block and call:
            wider = [d for d in call if not any(domain_match(d.lstrip("*."), b) for b in block)]
            if wider:
                raise WebToolError(
                    f"browse: allowed_domains= may only narrow the agent's list; "
                    f"{', '.join(wider)} is outside web.browse.allowed_domains"
                )
            return call
        return call or block

    def connect_policy(self, host: str, port: int) -> list[str]:
        """What the context's proxy may connect to for `host` (checked addresses), or Refused."""
        self.domain_policy(host)
        return self.address_policy(host, port)

    def domain_policy(self, host: str) -> None:
        """Refused when `host` is outside allowed_domains (also for a host only the user's proxy reaches)."""
        domains = self.allowed_domains()
        if domains and not any(domain_match(host.lower(), d) for d in domains):
            raise Refused(f"{host} is outside this agent's allowed_domains ({', '.join(domains)})")

    def address_policy(self, host: str, port: int) -> list[str]:
        """The checked addresses to connect to (the page's host, or the user's proxy when there is one)."""
        if self.tool.allow_private:
            return [host]
        return checked_addresses(host, port)

    def proxy_refusal(self, url: str) -> str | None:
        """The reason the proxy refused this URL's host during this call, if it did."""
        if self.proxy is None:
            return None
        host = (urlsplit(url).hostname or "").lower()
        return next((reason for refused, reason in reversed(self.proxy.refusals) if refused.lower() == host), None)

    def host_refusal(self, url: str) -> str | None:
        """Why the browser may not reach this URL's host, or None."""
        parts = urlsplit(url)
        if parts.scheme in ("data", "blob", "about"):
            return None
        host = (parts.hostname or "").lower()
        if not host:
            return None
        if host in self.refused_hosts:
            return self.refused_hosts[host] or None
        reason = ""
        domains = self.allowed_domains()
        through = self.tool.session_allow_hosts  # a browser session's allowHosts: the user's proxy reaches them
        if domains and not any(domain_match(host, d) for d in domains):
            reason = f"{host} is outside this agent's allowed_domains ({', '.join(domains)})"
        elif any(allow_host_match(host, pattern) for pattern in through):
            pass  # the session's guard sends it through the user's own proxy (only the proxy's address is checked)
        elif not self.tool.allow_private:
            try:
                checked_addresses(host, parts.port or (443 if parts.scheme in ("https", "wss") else 80))
            except PrivateAddress as exc:
                reason = str(exc)
            except NoSuchHost as exc:
                reason = str(exc)
            if reason and through:
                reason += (
                    f"; this session reaches only {', '.join(through)} through its proxy (allowHosts), and "
                    f"{host} is not among them"
                )
        self.refused_hosts[host] = reason
        return reason or None

    def denied(self, name: str, what: str | None = None) -> None:
        """`deny:` names actions; `what` is the same thing by another name — a wait on a function is `eval`,
        a new tab `goto` (spec "What this agent's browser may do")."""
        deny = [str(d) for d in self.block.get("deny") or []]
        if name in deny or (name in ("eval",) and "js" in deny):
            if what is None:
                raise WebToolError(f"browse: the action {name} is denied to this agent (web.browse.deny)")
            covering = name if name in deny else "js"
            raise WebToolError(
                f"browse: {what} is denied to this agent — web.browse.deny names {covering}, which covers it"
            )

    # -- the page ----------------------------------------------------------------
    def setting(self, key: str) -> Any:
        """A call argument beats the identity, and the identity beats the block's own defaults."""
        if self.args.get(key) not in (None, ""):
            return self.args[key]
        if self.identity.get(key) not in (None, ""):
            return self.identity[key]
        return self.block.get(key)

    def redact(self, text: str) -> str:
        for name, value in {**self.kept, **self.secrets}.items():
            if value and len(value) >= 4:
                text = text.replace(value, f"[secret {name}]")
        return text

    def with_what_it_did(self, head: str) -> str:
        """A refusal or failure mid-call, with the notes and results the call had before it (redacted): the
        call's other results are kept, not lost with the step that failed."""
        if "\n\nWhat it had done:\n" in head:
            return self.redact(head)
        done = (["\n".join(self.notes)] if self.notes else []) + (
            [json.dumps(self.results, indent=1, ensure_ascii=False, default=str)] if self.results else []
        )
        return self.redact(head + ("\n\nWhat it had done:\n" + "\n\n".join(done) if done else ""))

    def no_script(self, what: str) -> None:
        """`js`, `eval` and script by another name never run beside a secret's cookies or a filled secret."""
        self.denied("js" if what == "js" else "eval", None if what in ("js", "eval") else what)
        if self.seeded == "unrecorded":  # browse/kept.py: a kept vendor profile, and no seed book to ask
            raise WebToolError(
                f"browse: {what} does not run beside vendor_session.keep here — nothing outside the "
                f"workspace records whether a secret signed the kept profile in, so it is treated as "
                f"signed in"
            )
        if self.seeded == "storage":
            raise WebToolError(
                f"browse: {what} does not run in a call that carries web.browse.storage, or in a "
                f"session it seeded — an expression in the page could hand over the token"
            )
        if self.seeded:
            raise WebToolError(
                f"browse: {what} does not run in a call that carries cookies from a secret, or in a "
                f"session those cookies seeded — document.cookie is one expression away"
            )
        if self.secrets_in_steps or self.secrets:
            raise WebToolError(
                f"browse: {what} does not run in a call that fills a secret — script could read the "
                f"field; sign in with session= and read in the next call"
            )

    def navigate(self, page: "Page", url: str) -> None:
        reason = self.host_refusal(url)
        if reason:
            raise WebToolError(f"browse: {scrub_url(url)} was not opened — {reason}")
        seen = len(self.proxy.refusals) if self.proxy is not None else 0
        try:
            response = page.goto(url, wait_until="load", timeout=self.deadline.clip(self.tool.browse_timeout * 1000))
        except Exception as exc:  # noqa: BLE001 - every failure to open is a sentence below
            host = (urlsplit(url).hostname or "").lower()
            refused = self.refused_hosts.get(host) or (
                self.proxy.refusals[-1][1] if self.proxy is not None and len(self.proxy.refusals) > seen else None
            )
            if refused:
                raise WebToolError(f"browse: {scrub_url(url)} was not opened — {refused}") from None
            message = str(exc).split("\n", 1)[0]
            if "ERR_INVALID_AUTH_CREDENTIALS" in message:
                held = (
                    "the user:pass in auth= was refused"
                    if self.setting("auth")
                    else "pass auth=, the NAME of a secret holding user:pass"
                )
                raise WebToolError(f"browse: {scrub_url(url)} asks for HTTP basic auth; {held}") from None
            if "Download is starting" in message:
                raise WebToolError(
                    f"browse: {scrub_url(url)} is a download, not a page — fetch it with mode=raw and "
                    f"save= to keep the bytes"
                ) from None
            raise WebToolError(f"browse: {scrub_url(url)} did not open: {message}") from None
        if response is not None and response.status == 403 and self.proxy_refusal(response.url):
            hop = "" if response.url == url else f" (redirected to {scrub_url(response.url)})"
            raise WebToolError(f"browse: {scrub_url(url)} was not opened{hop} — {self.proxy_refusal(response.url)}")
        if response is not None:
            hops = []
            request = response.request.redirected_from
            while request is not None:
                hops.insert(0, scrub_url(request.url))
                request = request.redirected_from
            headers = {k: v for k, v in response.headers.items() if k.lower() != "set-cookie"}  # Set-Cookie withheld
            self.main_response = {
                "url": scrub_url(response.url),
                "status": response.status,
                "redirects": hops,
                "contentType": headers.get("content-type"),
                "headers": headers,
            }
            if response.status >= 400:
                self.notes.append(f"the page answered HTTP {response.status}")
