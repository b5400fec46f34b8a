"""`web action=extract`, foldrun's own: a page → JSON rows, with no second model unless asked.

`each=` a CSS selector (one row per match) and `fields=` name → selector inside
it, `a@href` for an attribute (selectolax). With no selectors, the page's own
structured data: JSON-LD, microdata and OpenGraph (extruct). `schema=` or
`prompt=` need a model to read the page, and foldrun's own has none (tools.md:
"None of foldrun's own has a second model in it"), so they need an extract
provider and are refused here in a sentence that says which. The rows are the
output, and the whole set lands in `outputs/extracted.json`, uncapped.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin

from selectolax.lexbor import LexborHTMLParser, SelectolaxError

from foldrun.contract import web_engines as W

from . import site
from .errors import WebToolError
from .providers.actions import schema_arg, url_arg

if TYPE_CHECKING:  # pragma: no cover
    from .tool import WebTool

MAX_SHOWN = 60_000
NEEDS_PROVIDER = (
    "web: extract by {arg} needs a model to read the page, and foldrun's own extract has none: name "
    "an extract provider in the agent's file (web: {{extract: "
    + W.ACTION_PROVIDERS["extract"][0]
    + "}} — or "
    + " or ".join(W.ACTION_PROVIDERS["extract"][1:])
    + "), or read the page with each= and "
    "fields="
)


def _fields(raw: object) -> dict[str, str] | None:
    if raw in (None, "", {}):
        return None
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            raise WebToolError(
                'extract fields= must be a JSON object of name → selector, such as {"name": "h3", "url": "a@href"}'
            ) from None
    if not isinstance(raw, dict) or not all(isinstance(v, str) and v.strip() for v in raw.values()):
        raise WebToolError('extract fields= must map each name to a CSS selector, such as {"url": "a@href"}')
    return {str(k): v.strip() for k, v in raw.items()}


def _value(scope: Any, spec: str, name: str) -> str | None:
    selector, _, attr = spec.rpartition("@") if "@" in spec else (spec, "", "")
    selector = selector.strip()
    try:
        node = scope.css_first(selector) if selector else scope
    except (SelectolaxError, UnicodeEncodeError):  # lexbor's message names no field; a lone surrogate is no text
        raise WebToolError(f"extract fields: {name}={spec!r} is not a CSS selector") from None
    if node is None:
        return None
    if attr:
        return node.attributes.get(attr.strip())
    return " ".join((node.text(separator=" ") or "").split())


def by_selectors(html: str, each: str | None, fields: dict[str, str] | None, base: str) -> list[dict]:
    tree = LexborHTMLParser(html)
    try:
        scopes = tree.css(each) if each else [tree.root]
    except (SelectolaxError, UnicodeEncodeError):  # not a selector lexbor parses, or text it cannot encode
        raise WebToolError(f"extract each={each!r} is not a CSS selector") from None
    rows = []
    for scope in scopes:
        if fields:
            row = {name: _value(scope, spec, name) for name, spec in fields.items()}
            for name, spec in fields.items():  # an href or src read relative becomes the absolute target
                if spec.endswith(("@href", "@src")) and row[name]:
                    row[name] = urljoin(base, row[name])
        else:
            row = {"text": " ".join((scope.text(separator=" ") or "").split())}
        rows.append(row)
    return rows


def structured(html: str, base: str) -> dict:
    import extruct

    try:
        data = extruct.extract(
            html, base_url=base, syntaxes=["json-ld", "microdata", "opengraph"], uniform=True, errors="ignore"
        )
    except Exception:  # noqa: BLE001 - a malformed block is the page's, not a failure of the call
        data = {}
    return {
        "json-ld": data.get("json-ld") or [],
        "microdata": data.get("microdata") or [],
        "opengraph": data.get("opengraph") or [],
    }


def run(tool: "WebTool", args: dict) -> str:
    url = url_arg(args, "extract")
    each = args.get("each")
    if each is not None and (not isinstance(each, str) or not each.strip()):
        raise WebToolError("extract each= must be a CSS selector, such as .listing")
    fields = _fields(args.get("fields"))
    schema, prompt = schema_arg(args), args.get("prompt")
    if (schema or prompt) and (each or fields):
        raise WebToolError("extract takes selectors (each=, fields=) or a model's reading (schema=, prompt=), not both")
    if schema or prompt:  # refused before the page is fetched: nothing is spent on a call that cannot answer
        raise WebToolError(NEEDS_PROVIDER.format(arg="schema=" if schema else "prompt="))
    got = site.get(tool, url)
    if got.location:
        got = site.get(tool, got.location) if site.same_site(got.location, site.origin_of(url)) else got
    if got.error:
        raise WebToolError(got.error)
    if got.location:
        raise WebToolError(f"{url} redirects to another host ({got.location}); extract from that URL if it is the page")
    if got.status >= 400:
        raise WebToolError(f"{url}: HTTP {got.status}, so nothing was extracted")
    if not got.is_html():
        raise WebToolError(
            f"{url} is {got.media_type or 'not HTML'} ({len(got.body):,} bytes), not a page to extract "
            f"from; fetch it with mode=raw and save= to keep it"
        )
    html = got.text
    if each or fields:
        data: Any = by_selectors(html, each.strip() if each else None, fields, url)
        how = "selectors"
        if not data:
            tool.log(f"web extract: each={each} matched nothing on {url}")
    else:
        data = structured(html, url)
        how = "structured data"
    text = json.dumps(data, ensure_ascii=False, indent=1)
    tool.write_file(tool.sandbox / "outputs" / "extracted.json", text.encode("utf-8"))
    count = len(data) if isinstance(data, list) else None
    tool.emit({"event": "extract", "url": url, "how": how, "rows": count})
    if len(text) > MAX_SHOWN:
        return (
            text[:MAX_SHOWN]
            + f"\n\n[cut at {MAX_SHOWN:,} of {len(text):,} characters; all of it is in outputs/extracted.json]"
        )
    return text
