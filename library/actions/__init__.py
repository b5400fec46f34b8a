"""Writes to library files. Every write is one Changeset (see models).

`writes.do_write_files` is the single door: pushes, deploys, dashboard edits,
runs writing memory/state, rollbacks and gallery updates all come through it.
The `check_*` functions turn what a person or a run sent into validated
`FileWrite`s, or raise `WriteRefused` naming every file that was refused —
in which case nothing is written.

- `writes` — `do_write_files`, the types every door shares (`FileWrite`,
  `WriteResult`, `WriteRefused`) and the generated index.md/log.md;
- `checks` — `check_files` and `RawFile`: what was sent, validated;
- `pushes` — `check_and_write` (push, deploy), `do_edit_file`, `do_rollback`;
- `run_files` — `do_write_run_files`, what a run writes;
- `gallery` — `do_install_gallery_tool`, `sync_gallery_copies`.

Reading (`files_at`, `file_at`, the gallery marks) is in library.services,
which never imports these modules.
"""
