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
- `insert_rows(objs)`: `bulk_create` on PostgreSQL with its SQL compiled once (the UNNEST form, which does
  not depend on how many rows), each value prepared as Django's INSERT prepares it (`pre_save`,
  `get_db_prep_save`).

- `insert_with_rows(parent, rows, fk)`: a new row and the new rows pointing at it, in one statement (a
  data-modifying WITH), on PostgreSQL: outside a transaction, one statement needs no BEGIN and COMMIT of its own.

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
import re
import threading
from typing import Any, Callable

from django.db import connection, models
from django.db.models import signals
from django.db.models.constants import OnConflict
from django.db.models.query import get_related_populators
from django.db.models.sql import InsertQuery

from foldrun import batch
from foldrun.pgcursor import cursor, raw_cursor  # noqa: F401 - cursor() is this module's, raw_cursor re-exported


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
        compiler, db = self.compiler, connection.alias
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
        batch.send(sql, params, batch.one_row(f"saving {meta.label} {obj.pk}"))
        obj._state.db = connection.alias
        return
    with cursor() as cur:
        cur.execute(sql, params)
        updated = cur.rowcount
    if updated != 1:
        obj.save(update_fields=names)  # Django says what a save of no row does
        return
    obj._state.db = connection.alias


_INSERTS: dict[tuple, str] = {}


def insert_rows(objs: list[models.Model], *, update_conflicts: bool = False, unique_fields: tuple[str, ...] = (),
                update_fields: tuple[str, ...] = ()) -> None:
    """`Model.objects.bulk_create(objs, …)` for new rows of one model (their keys set from RETURNING), its SQL
    compiled once per process: on PostgreSQL's UNNEST form one statement fits any number of rows."""
    model = type(objs[0])
    manager = model._default_manager
    meta = model._meta
    fields = [f for f in meta.concrete_fields if not f.generated and not isinstance(f, models.AutoField)]
    if (connection.vendor != "postgresql" or any(o.pk is not None or type(o) is not model for o in objs)
            or any(hasattr(f, "get_placeholder") for f in fields)):
        manager.bulk_create(objs, update_conflicts=update_conflicts, unique_fields=unique_fields or None,
                            update_fields=update_fields or None)
        return
    key = (connection.alias, model, update_conflicts, unique_fields, update_fields)
    for obj in objs:
        obj._prepare_related_fields_for_save(operation_name="bulk_create")
    columns = _columns(objs, fields)
    if columns is None:
        manager.bulk_create(objs, update_conflicts=update_conflicts, unique_fields=unique_fields or None,
                            update_fields=update_fields or None)
        return
    sql = _INSERTS.get(key)
    if sql is None:
        sql = _compile_insert(model, fields, objs, update_conflicts, unique_fields, update_fields)
    if sql is None:
        manager.bulk_create(objs, update_conflicts=update_conflicts, unique_fields=unique_fields or None,
                            update_fields=update_fields or None)
        return
    rows_sql = _values_form(sql, len(objs), len(fields))

    def keys(cur: Any) -> None:
        for obj, row in zip(objs, cur.fetchall()):
            for value, field in zip(row, meta.db_returning_fields):
                setattr(obj, field.attname, value)
            obj._state.adding, obj._state.db = False, connection.alias

    # At once, or held with the transaction's other writes (foldrun/batch.py): the keys are set when it is made.
    if rows_sql is None:
        batch.send(sql, columns, keys)
    else:  # one value per placeholder, row after row (see _values_form)
        batch.send(rows_sql, [column[n] for n in range(len(objs)) for column in columns], keys)


def _columns(objs: list[models.Model], fields: list) -> list[list] | None:
    """Each field's values for `objs`, prepared as Django's INSERT prepares them; None when one is an expression
    (Django writes it otherwise)."""
    columns = [[f.get_db_prep_save(f.pre_save(obj, True), connection=connection) for obj in objs] for f in fields]
    if any(hasattr(value, "as_sql") or hasattr(value, "resolve_expression") for column in columns for value in column):
        return None
    return columns


def insert_with_rows(parent: models.Model, rows: list[models.Model], fk: str, *,
                     only_if: tuple[str, list] | None = None) -> bool | None:
    """Write the new `parent` and the new `rows` (of one model, each pointing at `parent` by its foreign key `fk`)
    in one statement, `WITH p AS (INSERT … parent RETURNING key) INSERT … rows SELECT … FROM p, (VALUES …)`, every
    value prepared as insert_rows prepares it and every key set from RETURNING. Outside a transaction that
    statement is a transaction of its own: both are written or neither (a unique constraint either one breaks
    raises IntegrityError and leaves nothing). Returns False, having written nothing, where it cannot be
    written so (not PostgreSQL, no rows or more than VALUES_MAX_ROWS, a value insert_rows would hand to the
    ORM): the caller writes them as before. `only_if` (SQL, values): a condition the statement writes nothing
    unless it holds when the statement runs — then None, nothing written."""
    if connection.vendor != "postgresql" or not rows or len(rows) > VALUES_MAX_ROWS or parent.pk is not None:
        return False
    pmodel, model = type(parent), type(rows[0])
    pfields, fields = _insertable(pmodel), _insertable(model)
    link = model._meta.get_field(fk)
    if (link not in fields or link.remote_field.model is not pmodel
            or pmodel._meta.db_returning_fields != [pmodel._meta.pk]
            or any(o.pk is not None or type(o) is not model or getattr(o, fk) is not parent for o in rows)
            or any(hasattr(f, "get_placeholder") for f in (*pfields, *fields))):
        return False
    parent._prepare_related_fields_for_save(operation_name="bulk_create")
    others = [f for f in fields if f is not link]
    for obj in rows:
        obj._prepare_related_fields_for_save(operation_name="bulk_create", fields=others)
    pcolumns, columns = _columns([parent], pfields), _columns(rows, others)
    if pcolumns is None or columns is None:
        return False
    condition, condition_params = only_if or ("", [])
    key = (connection.alias, pmodel, model, fk, len(rows), condition)
    sql = _WITH_ROWS.get(key)
    if sql is None:
        sql = _compile_with_rows(parent, rows, fk, pfields, fields, condition)
        if sql is None:
            return False
        _WITH_ROWS[key] = sql
    params = [column[0] for column in pcolumns] + list(condition_params) + [column[n] for n in range(len(rows))
                                                                            for column in columns]
    with cursor() as cur:
        cur.execute(sql, params)
        returned = cur.fetchall()
    if not returned:
        return None  # the condition did not hold: the parent was not written, so neither were its rows
    for obj, row in zip(rows, returned):
        for value, field in zip(row, model._meta.db_returning_fields):
            setattr(obj, field.attname, value)
        setattr(obj, link.attname, row[-1])
        obj._state.adding, obj._state.db = False, connection.alias
    parent.pk = returned[0][-1]
    parent._state.adding, parent._state.db = False, connection.alias
    return True


_WITH_ROWS: dict[tuple, str] = {}


def _insertable(model: type[models.Model]) -> list:
    return [f for f in model._meta.concrete_fields if not f.generated and not isinstance(f, models.AutoField)]


def _compile_with_rows(parent: models.Model, rows: list[models.Model], fk: str, pfields: list,
                       fields: list, condition: str = "") -> str | None:
    """insert_with_rows's statement for this many rows, from the INSERTs Django writes for each model, the parent
    written only where `condition` holds; None if they are not of the form it is written from."""
    pmodel, model = type(parent), type(rows[0])
    quote = connection.ops.quote_name
    psql = _INSERTS.get((connection.alias, pmodel, False, (), ())) or _compile_insert(pmodel, pfields, [parent],
                                                                                       False, (), ())
    # Compiled with the rows' key to the parent still None: only the SQL is kept, not the values.
    sql = _INSERTS.get((connection.alias, model, False, (), ())) or _compile_insert(model, fields, rows, False, (), ())
    parent_sql = _values_form(psql, 1, len(pfields)) if psql else None
    found = _UNNEST.search(sql) if sql else None
    types = re.findall(r"\(%s\)::(.+?)\[\]", found.group(1)) if found else []
    tail = sql[found.end():] if found else ""
    if parent_sql is None or len(types) != len(fields) or not tail.startswith(" RETURNING "):
        return None
    if condition:  # INSERT … SELECT * FROM (VALUES (…)) AS g WHERE condition RETURNING …
        head, _, rest = parent_sql.partition(" VALUES ")
        row, returning, after = rest.partition(" RETURNING ")
        parent_sql = f"{head} SELECT * FROM (VALUES {row}) AS g WHERE {condition}{returning}{after}"
    at = fields.index(model._meta.get_field(fk))
    names = [f"c{n}" for n in range(len(fields)) if n != at]
    chosen = [f"p.{quote(pmodel._meta.pk.column)}" if n == at else f"v.c{n}" for n in range(len(fields))]
    values = ", ".join("(" + ", ".join([f"%s::{t}" for n, t in enumerate(types) if n != at] + [str(i)]) + ")"
                       for i in range(len(rows)))
    # Ordered as the VALUES are, so RETURNING gives the keys in the rows' order (as bulk_create's INSERT does).
    return (f"WITH p AS ({parent_sql}) {sql[:found.start()]}SELECT {', '.join(chosen)} FROM p, (VALUES {values}) "
            f"AS v({', '.join([*names, 'o'])}) ORDER BY v.o{tail}, "
            f"{quote(model._meta.db_table)}.{quote(model._meta.get_field(fk).column)}")


# The most rows an INSERT is written for as VALUES rather than UNNEST (each count is its own prepared statement).
VALUES_MAX_ROWS = 8
_UNNEST = re.compile(r"SELECT \* FROM UNNEST\((.*?)\)(?= ON CONFLICT| RETURNING|$)")


@functools.lru_cache(maxsize=64)
def _values_form(sql: str, rows: int, width: int) -> str | None:
    """Django's UNNEST INSERT `sql` written for `rows` rows as `VALUES (%s::type, …), …` with the same types, or
    None (more rows than VALUES_MAX_ROWS, or SQL not of that form). Bound on the server, each value is then one
    parameter psycopg dumps in C; UNNEST's arrays are dumped element by element in Python, which was most of
    what the try and trace INSERTs cost this process."""
    found = _UNNEST.search(sql) if rows <= VALUES_MAX_ROWS else None
    types = re.findall(r"\(%s\)::(.+?)\[\]", found.group(1)) if found else []
    if len(types) != width:
        return None
    row = "(" + ", ".join(f"%s::{t}" for t in types) + ")"
    return sql[:found.start()] + "VALUES " + ", ".join([row] * rows) + sql[found.end():]


def _compile_insert(model: type[models.Model], fields: list, objs: list, update_conflicts: bool,
                    unique_fields: tuple[str, ...], update_fields: tuple[str, ...]) -> str | None:
    """The INSERT Django writes for two or more of these rows (its UNNEST form), kept; None if it is not that form."""
    meta = model._meta
    query = InsertQuery(model, on_conflict=OnConflict.UPDATE if update_conflicts else None,
                        update_fields=[meta.get_field(n) for n in update_fields] or None,
                        unique_fields=[meta.get_field(n) for n in unique_fields] or None)
    query.insert_values(fields, objs if len(objs) > 1 else [objs[0], objs[0]])
    compiler = query.get_compiler(connection=connection)
    compiler.returning_fields = meta.db_returning_fields
    statements = compiler.as_sql()
    if len(statements) != 1 or "UNNEST(" not in statements[0][0]:
        return None
    sql = statements[0][0]
    _INSERTS[(connection.alias, model, update_conflicts, unique_fields, update_fields)] = sql
    return sql
