"""The modes that audit the page: `a11y` (axe-core, else the built-in checks) and `vitals` (INP included)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from ..net import scrub_url
from .assets import inject_axe
from .registry import mode

if TYPE_CHECKING:  # pragma: no cover
    from playwright.sync_api import Page

    from .call import Call

# axe's own run, violations only; each node keeps its selector, its markup and what would fix it.
_AXE_RUN_JS = """() => axe.run(document, {resultTypes: ['violations']}).then(r => ({
  version: axe.version,
  violations: r.violations.map(v => ({rule: v.id, impact: v.impact, what: v.help, help_url: v.helpUrl,
    tags: v.tags, count: v.nodes.length,
    elements: v.nodes.map(n => ({target: n.target.map(String).join(' '), html: (n.html || '').slice(0, 300),
      fix: (n.failureSummary || '').trim()}))}))
}))"""

_IMPACT_ORDER = {"critical": 0, "serious": 1, "moderate": 2, "minor": 3}

# The built-in checks, for when the image has no axe-core: each a rule, what it found, and the fix.
_A11Y_JS = """() => {
  const out = [];
  const name = el => (el.getAttribute('aria-label') || el.getAttribute('title') || el.innerText || el.value || '').trim();
  const sel = el => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + (el.className && typeof el.className === 'string' ? '.' + el.className.trim().split(/\\s+/).join('.') : '');
  const add = (rule, what, fix, els) => { if (els.length) out.push({rule, what, fix, count: els.length, elements: els.map(sel)}); };
  add('image-alt', 'images with no alt attribute', 'give each an alt (alt="" when it is decorative)',
      [...document.querySelectorAll('img:not([alt])')]);
  add('label', 'form fields with no label', 'add a <label for>, aria-label or aria-labelledby',
      [...document.querySelectorAll('input:not([type=hidden]):not([type=submit]):not([type=button]), select, textarea')]
        .filter(el => !(el.labels && el.labels.length) && !el.getAttribute('aria-label') && !el.getAttribute('aria-labelledby') && !el.getAttribute('title')));
  add('button-name', 'buttons with no name', 'give the button text or an aria-label',
      [...document.querySelectorAll('button, [role=button]')].filter(el => !name(el) && !el.querySelector('img[alt]:not([alt=""])')));
  add('link-name', 'links with no name', 'give the link text or an aria-label',
      [...document.querySelectorAll('a[href]')].filter(el => !name(el) && !el.querySelector('img[alt]:not([alt=""])')));
  add('html-has-lang', 'a page with no lang', 'set <html lang="…">', document.documentElement.lang ? [] : [document.documentElement]);
  add('document-title', 'a page with no title', 'add a <title>', document.title.trim() ? [] : [document.documentElement]);
  const ids = {}; document.querySelectorAll('[id]').forEach(el => { (ids[el.id] = ids[el.id] || []).push(el); });
  add('duplicate-id', 'ids used more than once', 'make each id unique', Object.values(ids).filter(l => l.length > 1).flat());
  let last = 0; const skips = [];
  document.querySelectorAll('h1, h2, h3, h4, h5, h6').forEach(h => { const n = +h.tagName[1]; if (last && n > last + 1) skips.push(h); last = n; });
  add('heading-order', 'headings that skip a level', 'step headings down one level at a time', skips);
  return out;
}"""


def _fix(summary: str) -> str:
    """axe's failureSummary ("Fix any of the following:\n  a\n  b", blocks split by a blank line) as one
    line: "any of: a; b"."""
    said = []
    for block in summary.split("\n\n"):
        head, _, rest = block.strip().partition("\n")
        items = "; ".join(line.strip() for line in rest.splitlines() if line.strip())
        lead = head.strip().removeprefix("Fix ").removesuffix(" of the following:")
        said.append(f"{lead} of: {items}" if lead in ("any", "all") and items else " ".join((head.strip(), items)))
    return " — and ".join(said)


@mode("a11y", acts=False)
def read_a11y(call: "Call", page: "Page", args: dict) -> str:
    tool = call.tool
    if not inject_axe(page):
        return _built_in(call, page)
    found = page.evaluate(_AXE_RUN_JS)
    violations = sorted(found["violations"], key=lambda v: (_IMPACT_ORDER.get(v.get("impact") or "", 9), v["rule"]))
    report = {"engine": f"axe-core {found['version']}", "url": scrub_url(page.url), "violations": violations}
    tool.write_file(tool.sandbox / "outputs" / "a11y.json", json.dumps(report, indent=1, ensure_ascii=False).encode())
    if not violations:
        return f"axe-core {found['version']} found no violations on {scrub_url(page.url)}"
    lines = [
        f"axe-core {found['version']}: {len(violations)} rule{'s' if len(violations) != 1 else ''} broken on "
        f"{scrub_url(page.url)} (outputs/a11y.json)"
    ]
    for v in violations:
        lines.append(
            f"[{v['rule']}] {v.get('impact') or 'unrated'} — {v['what']} ({v['count']} "
            f"element{'s' if v['count'] != 1 else ''})"
        )
        for element in v["elements"][:5]:
            lines.append(f"    {element['target']}: {_fix(element['fix'])}")
        if v["count"] > 5:
            lines.append(f"    … and {v['count'] - 5} more in outputs/a11y.json")
    return "\n".join(lines)


def _built_in(call: "Call", page: "Page") -> str:
    tool = call.tool
    found = page.evaluate(_A11Y_JS)
    tool.write_file(tool.sandbox / "outputs" / "a11y.json", json.dumps(found, indent=1, ensure_ascii=False).encode())
    if not found:
        return "the built-in checks found nothing to fix (axe-core is not in this image; its rules go further)"
    return "axe-core is not in this image; the built-in checks ran instead\n" + "\n".join(
        f"[{v['rule']}] {v['count']} × {v['what']} — {v['fix']}\n    " + "\n    ".join(v["elements"][:5]) for v in found
    )


# Every interaction's longest event, kept from before the page's own code runs: INP needs the events as they
# happen (the browser's own buffer keeps only those over 104 ms). Idempotent: a page given it twice keeps one.
_INTERACTIONS_JS = """(() => {
  if (window.__foldrunInteractions) return;
  const seen = window.__foldrunInteractions = {};
  try {
    new PerformanceObserver(list => {
      for (const e of list.getEntries()) if (e.interactionId) seen[e.interactionId] = Math.max(seen[e.interactionId] || 0, e.duration);
    }).observe({type: 'event', buffered: true, durationThreshold: 16});
    new PerformanceObserver(list => {
      for (const e of list.getEntries()) if (e.interactionId) seen[e.interactionId] = Math.max(seen[e.interactionId] || 0, e.duration);
    }).observe({type: 'first-input', buffered: true});
  } catch (e) {}
})()"""


def watch_interactions(call: "Call", page: "Page") -> None:
    """Before the page opens (and on a session's page already open): record each interaction for INP."""
    page.add_init_script(_INTERACTIONS_JS)
    if page.url not in ("", "about:blank"):
        page.evaluate(_INTERACTIONS_JS)


_VITALS_JS = """() => new Promise(resolve => {
  const nav = performance.getEntriesByType('navigation')[0] || {};
  const paint = Object.fromEntries(performance.getEntriesByType('paint').map(p => [p.name, p.startTime]));
  let lcp = null, cls = 0;
  try { new PerformanceObserver(l => { for (const e of l.getEntries()) lcp = e.startTime; }).observe({type: 'largest-contentful-paint', buffered: true}); } catch (e) {}
  try { new PerformanceObserver(l => { for (const e of l.getEntries()) if (!e.hadRecentInput) cls += e.value; }).observe({type: 'layout-shift', buffered: true}); } catch (e) {}
  setTimeout(() => {
    const grade = (v, good, poor) => v === null ? null : v <= good ? 'good' : v <= poor ? 'needs improvement' : 'poor';
    const bytes = performance.getEntriesByType('resource').reduce((n, r) => n + (r.transferSize || 0), nav.transferSize || 0);
    const ms = v => v === null || v === undefined ? null : Math.round(v);
    // INP: the worst interaction, one in fifty left out (the 98th percentile web-vitals reports)
    const took = Object.values(window.__foldrunInteractions || {}).sort((a, b) => b - a);
    const inp = took.length ? took[Math.min(took.length - 1, Math.floor(took.length / 50))] : null;
    resolve({
      LCP: {value: ms(lcp), unit: ' ms', grade: grade(lcp, 2500, 4000)},
      CLS: {value: Math.round(cls * 1000) / 1000, grade: grade(cls, 0.1, 0.25)},
      FCP: {value: ms(paint['first-contentful-paint'] ?? null), unit: ' ms', grade: grade(paint['first-contentful-paint'] ?? null, 1800, 3000)},
      TTFB: {value: ms(nav.responseStart ?? null), unit: ' ms', grade: grade(nav.responseStart ?? null, 800, 1800)},
      INP: {value: ms(inp), unit: ' ms', grade: grade(inp, 200, 500), interactions: took.length},
      load: {value: ms(nav.loadEventEnd ?? null), unit: ' ms'},
      weight: {value: bytes, unit: ' bytes'},
    });
  }, 300);
})"""


@mode("vitals", capability="vitals", acts=False, prepare=watch_interactions)
def read_vitals(call: "Call", page: "Page", args: dict) -> str:
    tool = call.tool
    vitals = page.evaluate(_VITALS_JS)
    tool.write_file(tool.sandbox / "outputs" / "vitals.json", json.dumps(vitals, indent=1).encode())
    lines = []
    for key, v in vitals.items():
        if key == "INP" and v["value"] is None:
            lines.append("INP: none — no interaction in this call (a click, a tap or a key in actions gives one)")
            continue
        lines.append(
            f"{key}: {v['value']}{v.get('unit', '')}"
            + (f" ({v['grade']})" if v.get("grade") else "")
            + (f" over {v['interactions']} interaction{'s' if v['interactions'] != 1 else ''}" if key == "INP" else "")
        )
    return "\n".join(lines)
