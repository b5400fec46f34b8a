"""foldrun/fieldprep.py gives every field of the rows a run writes the value Django's own save would give it:
the same value, of the same type (a backend's integer wrapper included), for plain and for other values."""
from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from django.db import connection
from django.utils import timezone
from django.utils.functional import lazy

from foldrun.fieldprep import prep_new, prep_save
from runs.models import Artifact, Run, Step, TraceEvent, Try

AWARE = timezone.now()
NAIVE = dt.datetime(2026, 12, 6, 12, 0)
VALUES = [None, "", "text", 0, 7, -3, 2**40, True, False, AWARE, NAIVE, Decimal("0.000018"), {"a": [1]}, [],
          lazy(lambda: "lazy", str)()]


def same(field, value):
    try:
        expected = field.get_db_prep_save(value, connection=connection)
    except Exception as exc:  # noqa: BLE001 - then ours must refuse it the same way
        with pytest.raises(type(exc)):
            prep_save(field, value, connection)
        return
    got = prep_save(field, value, connection)
    assert type(got) is type(expected), (field, value)
    assert getattr(got, "obj", got) == getattr(expected, "obj", expected), (field, value)


@pytest.mark.django_db
@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # a naive datetime: Django warns, and so do we through it
@pytest.mark.parametrize("model", [Run, Step, Try, TraceEvent, Artifact])
def test_each_field_of_a_runs_rows_gets_what_djangos_save_gives_it(model):
    for field in model._meta.concrete_fields:
        for value in VALUES:
            same(field, value)


@pytest.mark.django_db
def test_a_new_rows_values_are_what_djangos_insert_writes():
    step = Step(run_id=1, index=2, agent="writer", task="Write.", status="queued", queued_at=AWARE)
    for field in Step._meta.concrete_fields:
        expected = field.get_db_prep_save(field.pre_save(step, True), connection=connection)
        got = prep_new(field, step, connection)
        assert type(got) is type(expected) and getattr(got, "obj", got) == getattr(expected, "obj", expected), field
