"""`mode=react`: the React component tree, read from the fibers React keeps on the DOM, with simple props and
keys; `outputs/react.txt`. A production build shows its minified names — what the page shipped.

React (16 to 19) hangs its fiber tree on the DOM: the root container carries `__reactContainer$…` (or, before
18, `_reactRootContainer`), every rendered node `__reactFiber$…`. The walk lists the components only — function,
class, forwardRef and memo (under its own name) — nested as they render, each with its key and the props that are plain values.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..net import scrub_url
from .registry import mode

if TYPE_CHECKING:  # pragma: no cover
    from playwright.sync_api import Page

    from .call import Call

MAX_LINES = 2000

_TREE_JS = """(limit) => {
  const roots = [];
  for (const el of document.querySelectorAll('*')) {
    const key = Object.keys(el).find(k => k.startsWith('__reactContainer$'));
    if (key && el[key]) roots.push(el[key].stateNode ? el[key].stateNode.current || el[key] : el[key]);
    else if (el._reactRootContainer) {
      const legacy = el._reactRootContainer._internalRoot || el._reactRootContainer;
      if (legacy.current) roots.push(legacy.current);
    }
  }
  const nameOf = type => {
    if (!type) return null;
    if (typeof type === 'function') return type.displayName || type.name || 'Anonymous';
    if (typeof type === 'object') {
      if (type.displayName) return type.displayName;
      if (type.render) return 'ForwardRef(' + (type.render.displayName || type.render.name || 'Anonymous') + ')';
      if (type.type) return 'Memo(' + (nameOf(type.type) || 'Anonymous') + ')';
    }
    return null;
  };
  const plain = v => v === null || ['string', 'number', 'boolean'].includes(typeof v);
  const shown = v => typeof v === 'string' ? JSON.stringify(v.length > 60 ? v.slice(0, 57) + '…' : v) : String(v);
  const lines = [];
  let more = 0;
  const walk = (fiber, depth) => {
    for (let f = fiber; f; f = f.sibling) {
      // 0 function, 1 class, 11 forwardRef, 15 simple memo (its type is the component itself); a memo (14)
      // wraps a fiber of the component it memoises, which is listed in its place
      const component = [0, 1, 11, 15].includes(f.tag) && nameOf(f.tag === 15 ? f.type : f.elementType || f.type);
      if (component) {
        if (lines.length >= limit) { more++; } else {
          const props = Object.entries(f.memoizedProps || {}).filter(([k, v]) => k !== 'children' && plain(v))
            .map(([k, v]) => k + '=' + shown(v));
          const key = f.key !== null && f.key !== undefined ? f.key : f.tag === 0 && f.return && f.return.tag === 14 ? f.return.key : null;
          lines.push('  '.repeat(depth) + component + (key !== null ? ' key=' + JSON.stringify(String(key)) : '')
            + (props.length ? ' ' + props.join(' ') : ''));
        }
      }
      if (f.child) walk(f.child, component ? depth + 1 : depth);
    }
  };
  for (const root of roots) walk(root.child, 0);
  return {roots: roots.length, lines, more};
}"""


@mode("react", acts=False)
def read_react(call: "Call", page: "Page", args: dict) -> str:
    tool = call.tool
    found = page.evaluate(_TREE_JS, MAX_LINES)
    if not found["roots"]:
        return (
            f"no React tree on {scrub_url(page.url)}: no element carries React's fibers (a page that renders "
            f"after it loads needs wait_for= its content first)"
        )
    lines = found["lines"] or ["(the tree renders no components of its own: only elements)"]
    if found["more"]:
        lines.append(f"… and {found['more']} more components (the first {MAX_LINES:,} are listed)")
    text = "\n".join(lines)
    tool.write_file(tool.sandbox / "outputs" / "react.txt", (text + "\n").encode())
    return text
