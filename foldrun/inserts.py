"""INSERTs whose SQL is compiled once per process, as foldrun/prepared.py's statements are (see there why).

- `insert_rows(objs)`: `bulk_create` on PostgreSQL with its SQL compiled once (the UNNEST form, which does
  not depend on how many rows), each value prepared as Django's INSERT prepares it (`pre_save`,
  `get_db_prep_save`).
- `insert_with_rows(parent, rows, fk)`: a new row and the new rows pointing at it, in one statement (a
  data-modifying WITH), on PostgreSQL: outside a transaction, one statement needs no BEGIN and COMMIT of its own.

Whatever these cannot write as Django would — an expression among the values, a field with its own
placeholder, a database other than PostgreSQL — goes through the ORM.
"""
from __future__ import annotations

import functools
import re
from typing import Any

from django.db import connection, models
from django.db.models.constants import OnConflict
from django.db.models.sql import InsertQuery

from foldrun import batch
from foldrun.pgcursor import cursor, db


_INSERTS: dict[tuple, str] = {}


def insert_rows(objs: list[models.Model], *, update_conflicts: bool = False, unique_fields: tuple[str, ...] = (),
                update_fields: tuple[str, ...] = ()) -> None:
    """`Model.objects.bulk_create(objs, …)` for new rows of one model (their keys set from RETURNING), its SQL
    compiled once per process: on PostgreSQL's UNNEST form one statement fits any number of rows."""
    connection = db()
    model = type(objs[0])
    manager = model._default_manager
    meta = model._meta
    fields = _insertable(model)
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
    connection = db()
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
    raises IntegrityError and leaves nothing). Up to VALUES_MAX_ROWS rows are written as VALUES, more as one
    UNNEST of a column array each (one statement text for any count). Returns False, having written nothing,
    where it cannot be written so (not PostgreSQL, no rows, a value insert_rows would hand to the ORM): the
    caller writes them as before. `only_if` (SQL, values): a condition the statement writes nothing
    unless it holds when the statement runs — then None, nothing written."""
    connection = db()
    if connection.vendor != "postgresql" or not rows or parent.pk is not None:
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
    # As a set: Django tests each of the model's fields for membership, which in a list compared every pair.
    checked = frozenset(others)
    for obj in rows:
        obj._prepare_related_fields_for_save(operation_name="bulk_create", fields=checked)
    pcolumns, columns = _columns([parent], pfields), _columns(rows, others)
    if pcolumns is None or columns is None:
        return False
    condition, condition_params = only_if or ("", [])
    many = len(rows) > VALUES_MAX_ROWS
    key = (connection.alias, pmodel, model, fk, "unnest" if many else len(rows), condition)
    sql = _WITH_ROWS.get(key)
    if sql is None:
        sql = _compile_with_rows(parent, rows, fk, pfields, fields, condition, many=many)
        if sql is None:
            return False
        _WITH_ROWS[key] = sql
    params = [column[0] for column in pcolumns] + list(condition_params)
    params += columns if many else [column[n] for n in range(len(rows)) for column in columns]
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


@functools.cache
def _insertable(model: type[models.Model]) -> tuple:
    # Asked on every INSERT this module makes (a run's start, a step's trace lines): a model's fields do not
    # change while the process lives.
    return tuple(f for f in model._meta.concrete_fields if not f.generated and not isinstance(f, models.AutoField))


def _compile_with_rows(parent: models.Model, rows: list[models.Model], fk: str, pfields: list,
                       fields: list, condition: str = "", *, many: bool = False) -> str | None:
    """insert_with_rows's statement for this many rows (`many`: for any number, each column one array), from the
    INSERTs Django writes for each model, the parent written only where `condition` holds; None if they are not
    of the form it is written from."""
    pmodel, model = type(parent), type(rows[0])
    quote = connection.ops.quote_name
    psql = _INSERTS.get((connection.alias, pmodel, False, (), ())) or _compile_insert(pmodel, pfields, [parent],
                                                                                       False, (), ())
    # Compiled with the rows' key to the parent still None: only the SQL is kept, not the values.
    sql = _INSERTS.get((connection.alias, model, False, (), ())) or _compile_insert(model, fields, rows, False, (), ())
    parent_sql = _values_form(psql, 1, len(pfields)) if psql else None
    found = _UNNEST.search(sql) if sql else None
    types = _unnest_types(found)
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
    if many:  # the rows' n-th values are the n-th elements of the arrays; WITH ORDINALITY numbers them
        source = ("UNNEST(" + ", ".join(f"(%s)::{t}[]" for n, t in enumerate(types) if n != at)
                  + ") WITH ORDINALITY")
    else:
        source = "(VALUES " + ", ".join("(" + ", ".join([f"%s::{t}" for n, t in enumerate(types) if n != at]
                                                        + [str(i)]) + ")" for i in range(len(rows))) + ")"
    # Ordered as the rows are given, so RETURNING gives the keys in their order (as bulk_create's INSERT does).
    return (f"WITH p AS ({parent_sql}) {sql[:found.start()]}SELECT {', '.join(chosen)} FROM p, {source} "
            f"AS v({', '.join([*names, 'o'])}) ORDER BY v.o{tail}, "
            f"{quote(model._meta.db_table)}.{quote(model._meta.get_field(fk).column)}")


def column_types(model: type[models.Model], fields: list) -> list[str] | None:
    """The SQL type Django's INSERT casts each of `fields` to (as its UNNEST form writes them), for a statement
    that writes `model`'s rows from a SELECT; None if Django does not write that form for them."""
    sql = _INSERTS.get((connection.alias, model, False, (), ())) or _compile_insert(model, fields, [model(), model()],
                                                                                     False, (), ())
    found = _UNNEST.search(sql) if sql else None
    types = _unnest_types(found)
    return types if len(types) == len(fields) else None


def _unnest_types(found: re.Match | None) -> list[str]:
    """The type each `(%s)::type[]` array of an UNNEST (as _UNNEST found it) is cast to, in order."""
    return re.findall(r"\(%s\)::(.+?)\[\]", found.group(1)) if found else []


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
    types = _unnest_types(found)
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
    query.insert_values(list(fields), objs if len(objs) > 1 else [objs[0], objs[0]])
    compiler = query.get_compiler(connection=connection)
    compiler.returning_fields = meta.db_returning_fields
    statements = compiler.as_sql()
    if len(statements) != 1 or "UNNEST(" not in statements[0][0]:
        return None
    sql = statements[0][0]
    _INSERTS[(connection.alias, model, update_conflicts, unique_fields, update_fields)] = sql
    return sql
