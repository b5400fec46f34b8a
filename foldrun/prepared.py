"""Statements compiled once per process, for the few a run's steps make on every step.

A step's closing transaction makes the same statements on every step of every run, and building and compiling
them with the ORM cost several times what the database spends on them (profiled on a 50-step run: the lock
query's building and compiling ~3.7 ms of CPU against ~0.5 ms executing it; an INSERT of three trace lines
~1.7 ms; a step's full-row UPDATE ~1 ms — on a loaded machine, where every figure is inflated alike).

- `Prepared(build, **markers)`: a queryset Django builds and compiles once, with marker values no real call
  passes; its SQL is kept with where each value goes, and each call binds its own values there and makes the
  model instances as the queryset would (select_related, annotations, each field's converters).
- `update_sql` / `update_params`: an UPDATE of named fields of one row, each value prepared as Django's
  UPDATE prepares it (`get_db_prep_save`).
- `save_fields(obj, names)`: `obj.save(update_fields=names)` (or `obj.save()`) of a row that exists, as that
  compiled UPDATE.
- INSERTs, compiled once too: foldrun/inserts.py.

- `cursor()` (foldrun/pgcursor.py, shared with foldrun/batch.py): on PostgreSQL a cursor that sends its values apart from the statement (server-side binding) and
  has the server keep the statement's plan (a prepared statement, per connection): the statements above are
  the same text on every step, and psycopg writing each value into the text as a quoted literal
  (client-side binding, Django's default) was most of what running one cost this process. Wrapped as
  `connection.cursor()` wraps its own, so each statement is counted and logged alike. Each statement's %s
  placeholders are rewritten as $1, $2… once per process, however many values it has (psycopg's own cache
  stops at 50).

Whatever these cannot write as Django would — an expression among the values, a field with its own
placeholder, a database other than PostgreSQL — goes through the ORM as before.
"""
from __future__ import annotations

import functools
import threading
from typing import Any, Callable

from django.db import connection, models
from django.db.models import signals
from django.db.models.query import get_related_populators

from foldrun import batch
from foldrun.pgcursor import cursor, db, raw_cursor  # noqa: F401 - cursor() is this module's, raw_cursor re-exported


class Prepared:
    """A queryset compiled once per process and database, run again with other values (see the module)."""

    def __init__(self, build: Callable[..., models.QuerySet], **markers: Any) -> None:
        # `markers`: one value per parameter of `build`, of the parameter's type, that no real call passes
        # (a negative key, a string no holder id can be): where it lands in the compiled parameters is where
        # that parameter goes.
        self.build = build
        self.markers = markers
        self._compiled: dict[str, tuple | None] = {}
        self._lock = threading.Lock()

    def all(self, **values: Any) -> list[models.Model]:
        """The queryset's rows for these values, as `list(build(**values))` gives them."""
        bound = self._bound(values)
        if bound is None:
            return list(self.build(**values))
        sql, params, reader = bound
        with cursor() as cur:
            cur.execute(sql, params)
            rows = cur.fetchall()
        return reader.instances(rows)

    def _bound(self, values: dict[str, Any]) -> tuple[str, list, "_Reader"] | None:
        """The compiled statement with these values in place, and how its rows become instances; None where the
        ORM must run it (another database, a lock outside a transaction, a queryset that cannot be kept)."""
        connection = db()
        compiled = self._compiled.get(connection.alias, False) if connection.vendor == "postgresql" else None
        if compiled is False:
            compiled = self._compile()
        if compiled is None:
            return None
        sql, slots, reader, locking = compiled
        if locking and not connection.in_atomic_block:
            return None  # the ORM says why a lock needs a transaction
        return sql, [values[name] if name is not None else constant for name, constant in slots], reader

    def first(self, **values: Any) -> models.Model | None:
        rows = self.all(**values)
        return rows[0] if rows else None

    def _compile(self) -> tuple | None:
        with self._lock:
            queryset = self.build(**self.markers)
            compiler = queryset.query.get_compiler(connection=connection)
            locking = queryset.query.select_for_update
            if locking and not connection.in_atomic_block:
                return None  # compiled on its first use inside a transaction
            sql, params = compiler.as_sql()
            slots: list[tuple[str | None, Any]] = []
            found: set[str] = set()
            for param in params:
                name = next((n for n, m in self.markers.items() if type(param) is type(m) and param == m), None)
                slots.append((name, None if name else param))
                if name:
                    found.add(name)
            # Every marker must have landed in the parameters, and none in the SQL text itself: else this
            # queryset is not one whose values can be bound again, and it always goes through the ORM.
            usable = found == set(self.markers) and not any(str(m) in sql for m in self.markers.values())
            compiled = (sql, slots, _Reader(compiler), bool(locking)) if usable else None
            self._compiled[connection.alias] = compiled
            return compiled


def together(*calls: tuple[Prepared, dict[str, Any]]) -> list[list[models.Model]]:
    """Each (query, values)'s rows, as `query.all(**values)` gives them, the statements sent in one flight — one
    round trip instead of one each (with the transaction's BEGIN when they are its first, foldrun/pgengine) —
    and run by the server in the order given, so the locks they take are taken in that order. For statements
    whose values do not depend on each other's rows. Where any of them cannot be kept, one after another."""
    bound = [query._bound(values) for query, values in calls]
    connection = db()
    if any(b is None for b in bound) or len(bound) < 2:
        return [query.all(**values) for query, values in calls]
    cursors = [cursor() for _ in bound]
    try:
        # Errors as Django's cursors raise them: what fails is known only once the flight has come back.
        with connection.wrap_database_errors, connection.connection.pipeline():
            for cur, (sql, params, _reader) in zip(cursors, bound):
                cur.execute(sql, params)
        return [reader.instances(cur.fetchall()) for cur, (_sql, _params, reader) in zip(cursors, bound)]
    finally:
        for cur in cursors:
            cur.close()


class _Reader:
    """How `compiler`'s rows become model instances, as Django's ModelIterable makes them — worked out once per
    compiled query (the columns' converters, the related models' populators) rather than on every call."""

    def __init__(self, compiler: Any) -> None:
        select, klass_info = compiler.select, compiler.klass_info
        self.compiler = compiler
        self.alias = compiler.connection.alias  # the database its rows come from (one Prepared per alias)
        self.model = klass_info["model"]
        select_fields = klass_info["select_fields"]
        self.start, self.end = select_fields[0], select_fields[-1] + 1
        self.init_list = [f[0].target.attname for f in select[self.start:self.end]]
        self.populators = get_related_populators(klass_info, select, connection.alias)
        self.annotations = list((compiler.annotation_col_map or {}).items())
        fields = [s[0] for s in select[0:compiler.col_count]]
        self.converters = compiler.get_converters(fields)
        # A composite key's columns come back regrouped by results_iter: that case goes through it each time.
        self.plain = not compiler.has_composite_fields(fields)

    def instances(self, rows: list) -> list[models.Model]:
        compiler, db = self.compiler, self.alias
        if compiler.has_extra_select:
            rows = [row[:compiler.col_count] for row in rows]
        if not self.plain:
            rows = compiler.results_iter([rows])
        elif self.converters:
            rows = compiler.apply_converters(rows, self.converters)
        start, end, model_cls, init_list = self.start, self.end, self.model, self.init_list
        out = []
        for row in rows:
            obj = model_cls.from_db(db, init_list, row[start:end])
            for populator in self.populators:
                populator.populate(row, obj)
            for name, position in self.annotations:
                setattr(obj, name, row[position])
            out.append(obj)
        return out


@functools.lru_cache(maxsize=64)
def update_sql(model: type[models.Model], names: tuple[str, ...], where: tuple[str, ...], vendor: str) -> str:
    """`UPDATE <table> SET <names> = %s … WHERE <where> = %s AND …` for `model` (`vendor`: the cache key)."""
    quote, meta = connection.ops.quote_name, model._meta
    sets = ", ".join(f"{quote(meta.get_field(n).column)} = %s" for n in names)
    condition = " AND ".join(f"{quote(meta.get_field(n).column)} = %s" for n in where)
    return f"UPDATE {quote(meta.db_table)} SET {sets} WHERE {condition}"


def update_params(model: type[models.Model], values: dict[str, Any], where: dict[str, Any]) -> list | None:
    """The parameters of update_sql(model, tuple(values), tuple(where)), each prepared as Django's UPDATE and its
    exact lookups prepare them; None when a value is one Django would write otherwise (an expression, a field
    with its own placeholder)."""
    meta = model._meta
    connection = db()
    params = []
    for name, value in values.items():
        field = meta.get_field(name)
        if hasattr(value, "resolve_expression") or hasattr(field, "get_placeholder"):
            return None
        if hasattr(value, "prepare_database_save"):
            if not field.remote_field:
                return None
            value = value.prepare_database_save(field)
        params.append(field.get_db_prep_save(value, connection=connection))
    for name, value in where.items():
        field = meta.get_field(name)
        params.append(field.get_db_prep_value(field.get_prep_value(value), connection, prepared=True))
    return params


def save_fields(obj: models.Model, names: list[str] | tuple[str, ...] | None = None) -> None:
    """`obj.save(update_fields=names)` — `obj.save()` when `names` is None — of a row that exists, as one UPDATE
    whose SQL is made once per process (update_sql), each value as Django's save gives it (`pre_save`). Django's
    save itself wherever it would do more than that UPDATE: another database, a model with its own save() or
    with receivers of its save signals, deferred fields, a value it writes otherwise, no row updated (Django
    then raises, or inserts)."""
    model = type(obj)
    meta = model._meta
    connection = db()
    if (connection.vendor != "postgresql" or obj._state.adding or obj.pk is None
            or obj._state.db not in (None, connection.alias) or model.save is not models.Model.save
            or signals.pre_save.has_listeners(model) or signals.post_save.has_listeners(model)
            or (names is None and obj.get_deferred_fields())):
        obj.save(update_fields=names)
        return
    if names is None:
        fields = [f for f in meta.local_concrete_fields if not f.primary_key and not f.generated]
    else:
        fields = [meta.get_field(name) for name in dict.fromkeys(names)]
    if not fields:
        obj.save(update_fields=names)
        return
    values = {f.name: f.pre_save(obj, False) for f in fields}
    key = meta.pk.name
    params = update_params(model, values, {key: obj.pk})
    if params is None:
        obj.save(update_fields=names)
        return
    sql = update_sql(model, tuple(values), (key,), connection.vendor)
    if batch.holding():
        # Held with the transaction's other writes (foldrun/batch.py); a row that exists, locked by the caller,
        # is updated, and anything else raises there.
        batch.send_one_row(sql, params, f"saving {meta.label} {obj.pk}")
        obj._state.db = connection.alias
        return
    with cursor() as cur:
        cur.execute(sql, params)
        updated = cur.rowcount
    if updated != 1:
        obj.save(update_fields=names)  # Django says what a save of no row does
        return
    obj._state.db = connection.alias
