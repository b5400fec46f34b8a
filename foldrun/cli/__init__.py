"""The `foldrun` command line. Runs on laptops: it imports no Django, only
httpx, PyYAML and `foldrun.contract` — and those only when a command needs
them. Every `cmd_*` module is imported by every call (`--version` included),
so it keeps to the standard library and the CLI's own light modules; what
only some commands need (the contract, the engine, the MCP SDK) goes through
`foldrun.cli.loader` (tests/cli/test_the_cli_answers_at_once.py holds this).

Adding commands (the plugin convention)
---------------------------------------
`foldrun.cli.main` imports every module named `foldrun/cli/cmd_*.py` (in
name order) and calls its `register(subparsers, common)`:

- `subparsers` is the top-level `argparse` subparsers action; add your
  commands with `subparsers.add_parser("name", parents=[common], help=...)`.
- `common` is a parent parser carrying the global `--json` flag. Pass it as
  `parents=[common]` to every parser you add (sub-subcommands too), then read
  the flag as `ctx.out.json_mode` (never `args.json`, which may be unset).
- Bind each command to its handler with `parser.set_defaults(func=handler)`.
  A handler is `handler(args, ctx) -> int | None` (None means exit 0).

`ctx` (a `foldrun.cli.main.Context`) offers:

- `ctx.api` — an `ApiClient` (`foldrun.cli.client`) signed in with the stored
  or `$FOLDRUN_URL`/`$FOLDRUN_TOKEN` credentials:
  `ctx.api.get(path, params=...)`, `.post(path, json=...)`, `.put`, `.patch`,
  `.delete(path)` return parsed JSON (None for an empty body);
  `ctx.api.list(path)` returns a listing's items whether the server sent an
  array or `{"results": [...]}` (following `next`). `path` may be written
  `/api/workspaces`, `/workspaces` or `workspaces`. Escape a desk path in a
  URL with `client.quote_path(path)`. Any failure raises `ApiFailure`
  (`.message` is the server's sentence, `.status`, `.code`, `.details`);
  touching `ctx.api` when not signed in raises `NotSignedIn`.
- `ctx.out` — an `Output` (`foldrun.cli.output`): `ctx.out.table(rows,
  [("key", "HEADER"), ("when", "WHEN", short_time)], empty="No runs yet.")`
  prints aligned columns, or the rows as JSON under `--json`;
  `ctx.out.result(data, "sentence")` prints one answer (JSON or text);
  `ctx.out.line(text)` / `.json(data)` print to stdout; `.note(text)` and
  `.error(text)` to stderr; `.progress(text)` updates one stderr line on a
  terminal only; `.colour(text, "32")` colours on a terminal only.
- `ctx.config_dir` — `~/.foldrun/` or `$FOLDRUN_HOME` (a `Path`).
- `ctx.config` — the effective `Config` (`url`, `token`, sources);
  `ctx.signed_in` says whether both are set.

To fail, raise `foldrun.cli.client.CliError("One sentence.")` (exit 1, or
`exit_code=`; `code=` and `details=` — what, name, where, choices — for
scripts) or let an `ApiFailure` through: `main` prints its message on
stderr and exits non-zero, or under `--json` prints `{"error": {...}}` on
stdout. Never print a token or a traceback. Test commands
in-process with `foldrun.cli.main.main([...])` and capsys; see `tests/cli/`.
"""
