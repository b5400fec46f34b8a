from django.apps import AppConfig


class RunsConfig(AppConfig):
    name = "runs"
    verbose_name = "Runs"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # The registry loader: runs connects what it adds to the apps below it (they never import runs —
        # .importlinter's apps-one-way): a finished run is charged to its account's credits, and the home
        # and workspace pages get their runs parts (foldrun/pageparts.py).
        from accounts.credits import charge_finished_run
        from accounts.signals import home_parts
        from library.signals import workspace_parts

        from . import browser_tasks, pages_workspace
        from .signals import run_event

        run_event.connect(charge_finished_run, dispatch_uid="accounts.credits.charge_run")
        run_event.connect(browser_tasks.task_run_ended, dispatch_uid="runs.browser_task_ended")
        home_parts.connect(pages_workspace.home_part, dispatch_uid="runs.home_part")
        workspace_parts.connect(pages_workspace.workspace_part, dispatch_uid="runs.workspace_part")
