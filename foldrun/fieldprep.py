"""A field's value for the database, as Django's save prepares it, without Django's generic walk for the plain
cases a step's rows are made of.

`Field.get_db_prep_save` goes through several methods for every value (the expression check, the lazy-string
check, `to_python`, the backend's adapt hook). A one-step run prepares about 125 values that way — the run and
step rows at its start, the claim's try, the trace lines, the end's UPDATEs — and the walk was near a tenth of
the Python a run costs. For a field of one of Django's own plain classes (not a subclass: one may prepare
otherwise) holding a value of the exact type that class stores, or None, the result is known and is given
directly: the string, the boolean, the integer wrapped by the backend's adapt hook, the aware datetime through
the backend's hook. Everything else — another field class, another type, a naive datetime (Django warns and
converts), an expression — takes Django's own path, so the result is always Django's.
"""
from __future__ import annotations

import datetime as dt
import functools
from typing import Any

from django.db import models

_PLAIN = {models.CharField: "str", models.TextField: "str", models.BooleanField: "bool",
          models.DateTimeField: "datetime",
          **{cls: "int" for cls in (models.IntegerField, models.BigIntegerField, models.SmallIntegerField,
                                    models.PositiveIntegerField, models.PositiveBigIntegerField,
                                    models.PositiveSmallIntegerField)}}
_TYPE = {"str": str, "bool": bool, "int": int, "datetime": dt.datetime}


@functools.cache
def _kind(field: models.Field) -> tuple[str, str] | None:
    """(what the field stores, its internal type) for a plain field; None for any other."""
    kind = _PLAIN.get(type(field))
    if kind is None or (kind == "datetime" and (field.auto_now or field.auto_now_add)):
        return None  # a stamp's pre_save sets the time: left to Django
    return kind, field.get_internal_type()


def prep_save(field: models.Field, value: Any, connection) -> Any:
    """`field.get_db_prep_save(value, connection)`, the same result."""
    plain = _kind(field)
    if plain is not None:
        if value is None:
            return None
        kind, internal = plain
        if type(value) is _TYPE[kind]:
            if kind == "int":
                return connection.ops.adapt_integerfield_value(value, internal)
            if kind == "datetime":
                if value.tzinfo is not None:
                    return connection.ops.adapt_datetimefield_value(value)
            else:
                return value
    return field.get_db_prep_save(value, connection=connection)


def prep_new(field: models.Field, obj: models.Model, connection) -> Any:
    """The value an INSERT of `obj` writes for `field`: `field.pre_save(obj, True)`, prepared as above."""
    if _kind(field) is not None:
        return prep_save(field, getattr(obj, field.attname), connection)
    return field.get_db_prep_save(field.pre_save(obj, True), connection=connection)
