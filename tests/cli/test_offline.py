"""Commands that need no server: init, check, and how failures read."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import foldrun
from foldrun.cli import cmd_desk_files
from foldrun.contract import Desk, check

BAD_NOTIFY = "---\nnotify: {email: ops@example.com, events: [sometimes]}\n---\nThe desk.\n"


def test_init_scaffolds_a_desk_that_check_passes_with_no_errors(cli, tmp_path):
    desk = tmp_path / "seo"
    created = cli("init", desk, "--name", "seo-desk")
    assert created.code == 0
    assert created.lines[0] == f"Created the seo-desk desk in {desk}:"
    checked = cli("check", desk)
    assert checked.code == 0
    assert checked.lines[-1].startswith("0 errors, ")
    assert [f.format() for f in check(Desk.from_folder(desk), mode="check") if f.level == "error"] == []


def test_init_writes_one_of_each_kind_of_file(cli, tmp_path):
    cli("init", tmp_path / "desk", "--name", "seo-desk")
    files = sorted(p.relative_to(tmp_path / "desk").as_posix() for p in (tmp_path / "desk").rglob("*") if p.is_file())
    assert files == [
        "AGENTS.md",
        "agents/assistant/agent.md",
        "flows/hello.md",
        "knowledge/about-this-desk.md",
        "skills/plain-summary/SKILL.md",
        "tools/word-count.md",
    ]
    concept = (tmp_path / "desk/knowledge/about-this-desk.md").read_text()
    assert "\ntype: Reference\n" in concept
    assert "the seo-desk desk" in concept


def test_init_names_the_desk_after_its_folder_by_default(cli, tmp_path):
    result = cli("init", tmp_path / "My Desk")
    assert result.lines[0] == f"Created the my-desk desk in {tmp_path / 'My Desk'}:"


def test_init_never_overwrites_a_file(cli, tmp_path):
    (tmp_path / "AGENTS.md").write_text("mine\n")
    result = cli("init", tmp_path)
    assert result.code == 1
    assert result.err == (
        f"{tmp_path / 'AGENTS.md'} already exists; init never overwrites a file, so pick a new or empty folder.\n"
    )
    assert (tmp_path / "AGENTS.md").read_text() == "mine\n"


def test_check_prints_each_finding_as_the_contract_formats_it_then_a_summary(cli, tmp_path):
    (tmp_path / "AGENTS.md").write_text(BAD_NOTIFY)
    expected = [f.format() for f in check(Desk.from_folder(tmp_path), mode="check")]
    result = cli("check", tmp_path)
    assert result.code == 1
    assert result.lines == expected + ["1 error, 0 warnings"]
    assert result.lines[0] == (
        "AGENTS.md:2: error: notify: unknown event 'sometimes'; the events are failed, completed, blocked, "
        "awaiting-approval, quarantined, sla, budget."
    )


def test_check_json_prints_the_findings_with_their_counts_and_the_secrets_needed(cli, tmp_path):
    (tmp_path / "AGENTS.md").write_text(BAD_NOTIFY)
    result = cli("check", tmp_path, "--json")
    assert result.code == 1
    assert (result.json["ok"], result.json["errors"], result.json["warnings"]) == (False, 1, 0)
    assert [f["level"] for f in result.json["findings"]] == ["error"]
    assert result.json["findings"][0]["file"] == "AGENTS.md"
    assert result.json["findings"][0]["line"] == 2
    assert (result.json["secrets"], result.json["missing"]) == ([], [])


def test_check_on_a_missing_folder_says_so_in_one_sentence(cli, tmp_path):
    result = cli("check", tmp_path / "nowhere")
    assert result.code == 1
    assert result.out == ""
    assert result.err == f"{tmp_path / 'nowhere'} does not exist.\n"


def test_a_command_that_needs_a_server_says_to_log_in(cli, tmp_path):
    for argv in (("workspaces",), ("approve", "run_x", "1", "--to", "d"), ("workspaces", "delete", "d", "--yes")):
        result = cli(*argv)
        assert result.code == 1
        assert result.err == (
            "No foldrun server is configured; run `foldrun login --url URL` with the address "
            "`./scripts/start` printed (or set FOLDRUN_URL and FOLDRUN_TOKEN).\n"
        ), argv


def test_an_unreachable_server_is_one_sentence_naming_it(cli, monkeypatch, canned_server):
    server = canned_server({})
    url = server.url
    server.close()
    monkeypatch.setenv("FOLDRUN_URL", url)
    monkeypatch.setenv("FOLDRUN_TOKEN", "frt_not-a-real-one")
    result = cli("workspaces")
    assert result.code == 1
    assert result.err_lines == [f"Could not reach {url}: [Errno 111] Connection refused."]
    assert "frt_" not in result.err + result.out


def test_an_html_error_page_becomes_one_sentence(cli, monkeypatch, canned_server):
    server = canned_server({"/api/workspaces": (502, "text/html", b"<html><h1>Bad Gateway</h1></html>")})
    monkeypatch.setenv("FOLDRUN_URL", server.url)
    monkeypatch.setenv("FOLDRUN_TOKEN", "frt_x")
    result = cli("workspaces")
    assert result.code == 1
    assert result.err == "The server answered 502 Bad Gateway to GET /api/workspaces.\n"
    assert "Traceback" not in result.err


def test_a_listing_wrapped_in_results_is_shown_like_a_bare_one(cli, monkeypatch, canned_server):
    body = {"results": [{"name": "rank-desk", "id": "ws_1", "created_at": "2026-11-30T07:00:00Z", "description": ""}]}
    server = canned_server({"/api/workspaces": (200, "application/json", json.dumps(body).encode())})
    monkeypatch.setenv("FOLDRUN_URL", server.url)
    monkeypatch.setenv("FOLDRUN_TOKEN", "frt_x")
    result = cli("workspaces")
    assert result.lines == [
        "NAME       ID    CREATED           DESCRIPTION",
        "rank-desk  ws_1  2026-11-30 07:00",
    ]


def test_pull_refuses_a_path_that_would_leave_the_folder(cli, monkeypatch, canned_server, tmp_path):
    listing = [{"path": "AGENTS.md"}, {"path": "../outside.md"}]
    server = canned_server(
        {
            "/api/workspaces/rank-desk/files": (200, "application/json", json.dumps(listing).encode()),
            "/api/workspaces/rank-desk/files/AGENTS.md": (
                200,
                "application/json",
                b'{"content": "hi", "encoding": "utf-8"}',
            ),
        }
    )
    monkeypatch.setenv("FOLDRUN_URL", server.url)
    monkeypatch.setenv("FOLDRUN_TOKEN", "frt_x")
    result = cli("pull", "--to", "rank-desk", tmp_path / "desk")
    assert result.code == 1
    assert (
        result.err
        == "Refused to write a pulled file: ../outside.md: '..' is refused; a path must stay inside the desk.\n"
    )
    assert not (tmp_path / "outside.md").exists()
    assert not (tmp_path / "desk" / "AGENTS.md").exists()


def test_pull_refuses_to_write_through_a_symlink_out_of_the_folder(cli, monkeypatch, canned_server, tmp_path):
    listing = [{"path": "knowledge/x.md"}]
    server = canned_server(
        {
            "/api/workspaces/rank-desk/files": (200, "application/json", json.dumps(listing).encode()),
        }
    )
    (tmp_path / "desk").mkdir()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "desk" / "knowledge").symlink_to(tmp_path / "elsewhere")
    monkeypatch.setenv("FOLDRUN_URL", server.url)
    monkeypatch.setenv("FOLDRUN_TOKEN", "frt_x")
    result = cli("pull", "--to", "rank-desk", tmp_path / "desk")
    assert result.code == 1
    assert result.err == f"Refused to write 'knowledge/x.md': it would land outside {tmp_path / 'desk'}.\n"


def test_a_push_reads_text_as_is_binary_as_base64_and_skips_git_and_node_modules(tmp_path):
    (tmp_path / "AGENTS.md").write_text("é\n", encoding="utf-8")
    (tmp_path / "storage").mkdir()
    (tmp_path / "storage" / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\xff")
    for skipped in (".git/config", "node_modules/x/index.js", ".venv/bin/python", ".foldrun/workspace"):
        (tmp_path / skipped).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / skipped).write_text("skip me")
    files, total = cmd_desk_files.read_desk_files(tmp_path)
    assert files == [
        {"path": "AGENTS.md", "content": "é\n", "encoding": "utf-8"},
        {
            "path": "storage/logo.png",
            "content": base64.b64encode(b"\x89PNG\r\n\x1a\n\xff").decode(),
            "encoding": "base64",
        },
    ]
    assert total == 3 + 9


def test_a_push_refuses_a_path_the_contract_refuses_before_sending_anything(cli, monkeypatch, canned_server, tmp_path):
    server = canned_server({})
    (tmp_path / "AGENTS.md").write_text("The desk.\n")
    (tmp_path / "odd#name.md").write_text("x")
    monkeypatch.setenv("FOLDRUN_URL", server.url)
    monkeypatch.setenv("FOLDRUN_TOKEN", "frt_x")
    result = cli("push", tmp_path, "--to", "rank-desk")
    assert result.code == 1
    assert result.err.startswith("Cannot push: odd#name.md: 'odd#name.md' has characters foldrun does not accept")
    assert server.requests == []


def test_push_without_a_workspace_says_how_to_name_one(cli, monkeypatch, tmp_path):
    monkeypatch.setenv("FOLDRUN_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("FOLDRUN_TOKEN", "frt_x")
    (tmp_path / "flows").mkdir()
    result = cli("push", tmp_path)
    assert result.code == 1
    assert result.err == f"Name a workspace with --to WS; {tmp_path / '.foldrun' / 'workspace'} does not say one.\n"


def test_a_cmd_module_dropped_into_the_package_adds_its_command(cli, tmp_path, monkeypatch):
    import foldrun.cli

    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / "cmd_zz_hello.py").write_text(
        textwrap.dedent("""
        def register(subparsers, common):
            p = subparsers.add_parser("hello", parents=[common])
            p.add_argument("who")
            p.set_defaults(func=hello)

        def hello(args, ctx):
            ctx.out.result({"hello": args.who, "home": str(ctx.config_dir)}, "hello " + args.who)
            return 3
    """)
    )
    monkeypatch.setattr(foldrun.cli, "__path__", list(foldrun.cli.__path__) + [str(tmp_path / "plugins")])
    monkeypatch.delitem(sys.modules, "foldrun.cli.cmd_zz_hello", raising=False)
    text = cli("hello", "world")
    as_json = cli("hello", "world", "--json")
    assert (text.code, text.out) == (3, "hello world\n")
    assert as_json.json == {"hello": "world", "home": os.environ["FOLDRUN_HOME"]}


def test_an_unexpected_error_is_one_sentence_not_a_traceback(cli, tmp_path, monkeypatch):
    import foldrun.cli

    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / "cmd_zz_boom.py").write_text(
        textwrap.dedent("""
        def register(subparsers, common):
            subparsers.add_parser("boom", parents=[common]).set_defaults(func=lambda args, ctx: 1 / 0)
    """)
    )
    monkeypatch.setattr(foldrun.cli, "__path__", list(foldrun.cli.__path__) + [str(tmp_path / "plugins")])
    monkeypatch.delitem(sys.modules, "foldrun.cli.cmd_zz_boom", raising=False)
    result = cli("boom")
    assert result.code == 1
    assert result.err == (
        "foldrun failed unexpectedly: division by zero. Run it again with FOLDRUN_DEBUG=1 to see where, "
        "and report it with that output.\n"
    )


def test_version_without_a_server_prints_the_client_version(cli):
    result = cli("version")
    assert (result.code, result.out) == (0, f"foldrun {foldrun.__version__}\n")


def test_the_cli_runs_on_a_laptop_without_django_or_celery(tmp_path):
    # Block django and celery outright, as on a laptop that has only httpx and PyYAML.
    script = textwrap.dedent(f"""
        import sys
        class Block:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in ("django", "celery", "rest_framework", "kombu"):
                    raise ImportError("blocked: " + name)
        sys.meta_path.insert(0, Block())
        from foldrun.cli.main import main
        assert main(["init", {str(tmp_path / "desk")!r}]) == 0
        assert main(["check", {str(tmp_path / "desk")!r}]) == 0
        print("django" in sys.modules, "celery" in sys.modules)
    """)
    env = dict(os.environ, FOLDRUN_HOME=str(tmp_path / "home"))
    env.pop("DJANGO_SETTINGS_MODULE", None)
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env=env,
        cwd=str(Path(foldrun.__file__).parent.parent),
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "False False"
    # Every cmd_*.py module loaded, none of them needing Django; check's only remark is the secrets the desk needs.
    assert done.stderr.splitlines()[0] == "This desk needs 1 secret:"
    assert "could not be loaded" not in done.stderr


def test_check_resolves_tools_from_a_local_copy_of_the_library(cli, tmp_path):
    cli("init", tmp_path / "desk", "--name", "seo-desk")
    agent = tmp_path / "desk/agents/assistant/agent.md"
    agent.write_text(agent.read_text().replace("tools: [read, word-count]", "tools: [read, word-count, crm]"))
    (tmp_path / "library/tools").mkdir(parents=True)
    (tmp_path / "library/tools/crm.md").write_text(
        "---\ntransport: http\nname: crm\ndescription: The CRM. GET to read.\nbase: https://crm.example.com/api\n---\n"
    )
    alone = cli("check", tmp_path / "desk")
    with_library = cli("check", tmp_path / "desk", "--library", tmp_path / "library")
    assert alone.code == 1
    assert alone.lines[0].startswith(
        "agents/assistant/agent.md:4: error: tools: grants crm, which is not a built-in group"
    )
    assert (with_library.code, with_library.lines[-1]) == (0, "0 errors, 0 warnings")


def test_check_knows_the_gallery_shelf_offline(cli, tmp_path):
    cli("init", tmp_path / "desk", "--name", "seo-desk")
    agent = tmp_path / "desk/agents/assistant/agent.md"
    agent.write_text(agent.read_text().replace("tools: [read, word-count]", "tools: [read, word-count, web]"))
    result = cli("check", tmp_path / "desk")
    assert (result.code, result.lines[-1]) == (0, "0 errors, 0 warnings")


def test_no_command_prints_the_commands_and_exits_2(cli):
    result = cli()
    assert result.code == 2
    assert result.out == ""
    assert result.err.startswith("usage: foldrun [-h] [-V] [--json] <command> ...")
    assert "    push " in result.err and "    check " in result.err and "    login " in result.err


def test_an_unknown_command_is_a_usage_error(cli):
    result = cli("frobnicate")
    assert result.code == 2
    assert len(result.err_lines) == 1
    assert result.err.startswith("foldrun: argument <command>: invalid choice: 'frobnicate' (choose from ")
    assert result.err.endswith(". See `foldrun --help`.\n")


def test_a_missing_argument_names_the_command(cli):
    result = cli("workspaces", "create")
    assert (result.code, result.err) == (
        2,
        "foldrun workspaces create: the following arguments are required: NAME. "
        "See `foldrun workspaces create --help`.\n",
    )


def test_the_installed_console_script_checks_a_desk(tmp_path):
    script = Path(sys.executable).parent / "foldrun"
    env = dict(os.environ, FOLDRUN_HOME=str(tmp_path / "home"))
    made = subprocess.run([str(script), "init", str(tmp_path / "desk")], capture_output=True, text=True, env=env)
    checked = subprocess.run([str(script), "check", str(tmp_path / "desk")], capture_output=True, text=True, env=env)
    assert made.returncode == checked.returncode == 0
    assert checked.stdout.splitlines()[-1] == "0 errors, 0 warnings"


def test_a_paginated_listing_is_followed_to_its_end_on_the_same_server(cli, monkeypatch, canned_server):
    def page(numbers, next_url):
        rows = [
            {
                "number": n,
                "kind": "push",
                "author": "alice@example.com",
                "created_at": "2026-11-30T07:00:00",
                "message": f"m{n}",
                "files": 1,
            }
            for n in numbers
        ]
        return (200, "application/json", json.dumps({"next": next_url, "results": rows}).encode())

    server = canned_server(
        {
            "/api/workspaces/rank-desk/revisions": page(
                [3, 2], "https://proxy.example.com/api/workspaces/rank-desk/revisions?page=2"
            ),
            "/api/workspaces/rank-desk/revisions?page=2": page([1], None),
        }
    )
    monkeypatch.setenv("FOLDRUN_URL", server.url)
    monkeypatch.setenv("FOLDRUN_TOKEN", "frt_x")
    result = cli("log", "--to", "rank-desk", "--json")
    assert [r["number"] for r in result.json] == [3, 2, 1]
    assert server.requests == [
        ("GET", "/api/workspaces/rank-desk/revisions"),
        ("GET", "/api/workspaces/rank-desk/revisions?page=2"),
    ]


def test_version_prints_the_browsers_the_server_reports(cli, monkeypatch, canned_server):
    answer = {"version": "0.9.0", "api": 1, "browsers": ["chromium"], "browser_versions": {"chromium": "156.0.7000.1"}}
    server = canned_server({"/api/version": (200, "application/json", json.dumps(answer).encode())})
    monkeypatch.setenv("FOLDRUN_URL", server.url)
    result = cli("version")
    assert result.lines == [
        f"foldrun {foldrun.__version__}",
        f"server 0.9.0 at {server.url} (api 1)",
        "browsers: chromium 156.0.7000.1",
    ]


def test_version_with_the_server_down_still_prints_the_client_version(cli, monkeypatch, canned_server):
    server = canned_server({})
    url = server.url
    server.close()
    monkeypatch.setenv("FOLDRUN_URL", url)
    result = cli("version")
    assert (result.code, result.out) == (1, f"foldrun {foldrun.__version__}\n")
    assert result.err == f"server: Could not reach {url}: [Errno 111] Connection refused.\n"
