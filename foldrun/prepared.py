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
- `insert_rows(objs)`: `bulk_create` on PostgreSQL with its SQL compiled once (the UNNEST form, which does
  not depend on how many rows), each value prepared as Django's INSERT prepares it (`pre_save`,
  `get_db_prep_save`).

Whatever these cannot write as Django would — an expression among the values, a field with its own
placeholder, a database other than PostgreSQL — goes through the ORM as before.
"""
from __future__ import annotations

import functools
import threading
from typing import Any, Callable

from django.db import connection, models
from django.db.models.constants import OnConflict
from django.db.models.query import get_related_populators
from django.db.models.sql import InsertQuery


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
        compiled = self._compiled.get(connection.alias, False) if connection.vendor == "postgresql" else None
        if compiled is False:
            compiled = self._compile()
        if compiled is None:
            return list(self.build(**values))
        sql, slots, compiler, locking = compiled
        if locking and not connection.in_atomic_block:
            return list(self.build(**values))  # the ORM says why a lock needs a transaction
        params = [values[name] if name is not None else constant for name, constant in slots]
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            rows = cursor.fetchall()
        return _instances(compiler, rows)

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
            compiled = (sql, slots, compiler, bool(locking)) if usable else None
            self._compiled[connection.alias] = compiled
            return compiled


def _instances(compiler: Any, rows: list) -> list[models.Model]:
    """Model instances from `rows` of `compiler`'s SQL, made as Django's ModelIterable makes them."""
    db = connection.alias
    select, klass_info, annotation_col_map = compiler.select, compiler.klass_info, compiler.annotation_col_map
    model_cls = klass_info["model"]
    select_fields = klass_info["select_fields"]
    start, end = select_fields[0], select_fields[-1] + 1
    init_list = [f[0].target.attname for f in select[start:end]]
    populators = get_related_populators(klass_info, select, db)
    if compiler.has_extra_select:
        rows = [row[:compiler.col_count] for row in rows]
    out = []
    for row in compiler.results_iter([rows]):
        obj = model_cls.from_db(db, init_list, row[start:end])
        for populator in populators:
            populator.populate(row, obj)
        for name, position in (annotation_col_map or {}).items():
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
    columns = [[f.get_db_prep_save(f.pre_save(obj, True), connection=connection) for obj in objs] for f in fields]
    if any(hasattr(value, "as_sql") or hasattr(value, "resolve_expression") for column in columns for value in column):
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
    with connection.cursor() as cursor:
        cursor.execute(sql, columns)
        returned = cursor.fetchall()
    for obj, row in zip(objs, returned):
        for value, field in zip(row, meta.db_returning_fields):
            setattr(obj, field.attname, value)
        obj._state.adding, obj._state.db = False, connection.alias


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
