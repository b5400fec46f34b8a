"""The browse registry: every step and mode registered once, beside its handler, and held against the engine table."""

from foldrun.contract import web_engines as W
from foldrun.web import browse
from foldrun.web.browse.registry import MODES, STEPS, acting_modes

KINDS = {"pointer", "forms", "keyboard", "navigation", "storage", "network", "reading", "webmcp", "captcha"}


def test_every_step_and_mode_needs_a_row_of_the_engine_table():
    needs = {f"step {s.name}": s.capability for s in STEPS.values()} | {
        f"mode={m.name}": m.capability for m in MODES.values()
    }
    assert {what: row for what, row in needs.items() if row not in W.BROWSE_ENGINE_LIMITS} == {}


def test_a_step_or_mode_the_engine_table_names_needs_its_own_row():
    rows = set(W.BROWSE_ENGINE_LIMITS)
    assert {s.name: s.capability for s in STEPS.values() if s.name in rows} == {
        "screenshot": "screenshot",
        "pdf": "pdf",
        "mock": "mock",
        "webmcp": "webmcp",
    }
    assert {m.name: m.capability for m in MODES.values() if m.name in rows} == {
        "screenshot": "screenshot",
        "pdf": "pdf",
        "vitals": "vitals",
        "aria": "aria",
        "webmcp": "webmcp",
    }
    assert STEPS["unmock"].capability == "mock"
    assert W.BROWSE_ENGINE_LIMITS[STEPS["click"].capability] == frozenset()  # every engine drives a page


def test_the_built_lists_are_read_from_the_registry():
    assert browse.BUILT_STEPS == tuple(name for name in W.BROWSE_STEP_ACTIONS if name in STEPS)
    assert browse.BUILT_MODES == tuple(name for name in W.BROWSE_MODES if name in MODES)
    assert set(W.BROWSE_MODES) == set(MODES)  # every mode the spec lists runs here
    unbuilt = set(W.BROWSE_STEP_ACTIONS) - set(STEPS)
    assert unbuilt == set()  # every step the spec lists runs here
    assert browse.ACTING_STEPS == {s.name for s in STEPS.values() if s.acts} | unbuilt


def test_the_acting_steps_are_the_specs_writes_and_its_looks_are_reads():
    writes = {"click", "fill", "type", "press", "select", "upload", "login", "dialog", "solve", "eval"}
    looks = {"goto", "scroll", "wait", "screenshot", "extract", "hover"}
    assert writes <= browse.ACTING_STEPS
    assert looks.isdisjoint(browse.ACTING_STEPS)
    assert browse.acts({"actions": [{"if": "#x", "then": [{"click": "#go"}]}]}) is True
    assert browse.acts({"actions": [{"goto": "/b"}, {"screenshot": "b"}]}) is False
    assert browse.acts({"actions": [{"solve": True}]}) is True  # solving a captcha is an act
    assert STEPS["solve"].acts and STEPS["solve"].capability == "captcha"
    assert browse.acts({"actions": [{"tap": "#go"}, {"swipe": "up"}]}) is True


def test_each_step_lives_in_the_module_of_its_kind():
    assert {s.kind for s in STEPS.values()} == KINDS
    assert {name: s.kind for name, s in STEPS.items() if s.handler.__module__.rsplit(".", 1)[-1] != s.kind} == {}
    assert STEPS["click"].kind == "pointer" and STEPS["fill"].kind == "forms" and STEPS["press"].kind == "keyboard"
    assert STEPS["goto"].kind == "navigation" and STEPS["cookie"].kind == "storage" and STEPS["mock"].kind == "network"
    assert STEPS["get"].kind == "reading"


def test_every_mode_is_registered_with_whether_it_acts():
    assert all(isinstance(m.acts, bool) for m in MODES.values())
    unbuilt = set(W.BROWSE_MODES) - set(MODES)
    assert acting_modes() == {m.name for m in MODES.values() if m.acts} | unbuilt
    assert browse.acts({"mode": "a11y"}) is False
