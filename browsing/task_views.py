"""REST reads of tasks, skill runs and reports: GET /v1/tasks/<id>, /v1/tasks/<id>/report.json, /v1/skill-runs/<id>,
/v1/skill-runs/<id>/report.json."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from accounts.access import ScopedAPIView
from accounts.models import Account
from foldrun.api import ApiError

from .errors import SessionError
from .models import SkillRun, Task
from .reports import read_report, scoped_report, task_record
from .serializers import ReportSerializer, SkillRunSerializer, TaskSerializer
from .skill_results import skill_record


def _found(account: Account, public_id: str, kind: type) -> Task | SkillRun:
    try:
        found = scoped_report(account, public_id)
    except SessionError as exc:
        raise ApiError(exc.message, code=exc.code, status_code=404) from None
    if not isinstance(found, kind):
        raise ApiError(
            f"No {'task' if kind is Task else 'skill run'} {public_id[:60]} in this account.",
            code="not_found",
            status_code=404,
        )
    return found


class TaskView(ScopedAPIView):
    @extend_schema(
        operation_id="tasks_read",
        responses={200: TaskSerializer},
        description="A task of the browser agent (tsk_…), as run_task and get_task return it.",
    )
    def get(self, request, task_id: str):
        return Response(task_record(_found(self.account, task_id, Task)))


class TaskReportView(ScopedAPIView):
    @extend_schema(
        operation_id="tasks_report",
        responses={200: ReportSerializer},
        description="A task's test report: the same as get_report with the task id.",
    )
    def get(self, request, task_id: str):
        return Response(read_report(_found(self.account, task_id, Task)))


class SkillRunReportView(ScopedAPIView):
    @extend_schema(
        operation_id="skill_runs_report",
        responses={200: ReportSerializer},
        description="A skill run's test report (a smoke test's run_…): the same as get_report.",
    )
    def get(self, request, run_id: str):
        return Response(read_report(_found(self.account, run_id, SkillRun)))


class SkillRunView(ScopedAPIView):
    @extend_schema(
        operation_id="skill_runs_read",
        responses={200: SkillRunSerializer},
        description="A skill run (run_…), as get_skill_run returns it: its status, summary, counts and "
        "result. A failed run is a result; error, denied and cancelled mean it could not run.",
    )
    def get(self, request, run_id: str):
        return Response(skill_record(_found(self.account, run_id, SkillRun)))
