"""Form steps: fill, type, select, clear, focus, upload, paste, the clipboard, a dialog's answer and login."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...errors import WebToolError
from ..registry import step
from ..signin import login

if TYPE_CHECKING:  # pragma: no cover
    from playwright.sync_api import Page

    from ..call import Call


@step("fill", "type", acts=True)
def fill(call: "Call", page: "Page", name: str, value: Any, item: dict, index: int, timeout: float) -> None:
    text = call.secret_value(str(item["secret"])) if "secret" in item else item.get("text")
    if not isinstance(text, str):
        raise WebToolError(f'browse: step {index}: {name} needs "text" (or "secret", a secret\'s NAME)')
    locator = call.locate(page, value)
    if name == "fill":
        locator.fill(text, timeout=timeout)
    else:
        locator.press_sequentially(text, timeout=timeout)


@step("select", acts=True)
def select(call: "Call", page: "Page", name: str, value: Any, item: dict, index: int, timeout: float) -> None:
    choice = item.get("value")
    if choice is None:
        raise WebToolError(f'browse: step {index}: select needs "value"')
    locator = call.locate(page, value)
    try:
        locator.select_option(value=str(choice), timeout=min(timeout, 2000))
    except Exception:  # noqa: BLE001 - by the option's words, as a person reads it
        locator.select_option(label=str(choice), timeout=timeout)


@step("focus", acts=False)
def focus(call: "Call", page: "Page", name: str, value: Any, item: dict, index: int, timeout: float) -> None:
    call.locate(page, value).focus(timeout=timeout)


@step("clear", acts=False)
def clear(call: "Call", page: "Page", name: str, value: Any, item: dict, index: int, timeout: float) -> None:
    call.locate(page, value).clear(timeout=timeout)


@step("upload", acts=True)
def upload(call: "Call", page: "Page", name: str, value: Any, item: dict, index: int, timeout: float) -> None:
    source = call.tool.sandbox_file(item.get("file"), arg="upload file")
    call.locate(page, value).set_input_files(str(source), timeout=timeout)


@step("paste", acts=True)
def paste(call: "Call", page: "Page", name: str, value: Any, item: dict, index: int, timeout: float) -> None:
    if "file" in item:
        markup = call.tool.sandbox_file(item["file"], arg="paste file").read_text(encoding="utf-8")
    elif isinstance(item.get("html"), str):
        markup = item["html"]
    else:
        raise WebToolError(f'browse: step {index}: paste needs "html" or "file"')
    handled = call.locate(page, value).first.evaluate(_PASTE_JS, markup)
    call.notes.append(f"paste into {value} ({'the editor took it' if handled else 'inserted as HTML'})")


@step("clipboard", acts=True)
def clipboard(call: "Call", page: "Page", name: str, value: Any, item: dict, index: int, timeout: float) -> None:
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    if value == "write":
        page.evaluate("t => navigator.clipboard.writeText(t)", str(item.get("text") or ""))
    elif value == "read":
        call.no_script("a clipboard read")
        call.results.append({"clipboard": "read", "value": page.evaluate("() => navigator.clipboard.readText()")})
    else:
        raise WebToolError(f'browse: step {index}: clipboard is "write" (+ text) or "read"')


@step("dialog", acts=True)
def dialog(call: "Call", page: "Page", name: str, value: Any, item: dict, index: int, timeout: float) -> None:
    call.dialog = (str(value), item.get("text"))


@step("login", acts=True)
def login_step(call: "Call", page: "Page", name: str, value: Any, item: dict, index: int, timeout: float) -> None:
    login(call, page, str(value), item, timeout)


# A real paste: a ClipboardEvent carrying text/html, which rich editors handle themselves;
# an element that ignores it gets the HTML inserted, so headings, links and lists survive either way.
_PASTE_JS = """(el, html) => {
  el.focus();
  const data = new DataTransfer();
  data.setData('text/html', html);
  data.setData('text/plain', html.replace(/<[^>]+>/g, ''));
  const event = new ClipboardEvent('paste', {clipboardData: data, bubbles: true, cancelable: true});
  const handled = !el.dispatchEvent(event);
  if (!handled) {
    if (el.isContentEditable) { document.execCommand('insertHTML', false, html); }
    else if ('value' in el) { el.value += data.getData('text/plain'); el.dispatchEvent(new Event('input', {bubbles: true})); }
  }
  return handled;
}"""
