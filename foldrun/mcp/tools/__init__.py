"""The tool modules. Importing this package registers every fixed tool.

Each module registers its own tools at import; add a module's import here in the
commit that adds the module.
"""

from . import quick  # noqa: F401,E402 - registers scrape, screenshot, pdf, crawl
from . import sessions  # noqa: F401,E402 - registers create_session, list_sessions, get_session, stop_session
from . import tasks  # noqa: F401,E402 - registers run_task, get_task, smoke_test, get_report
from . import skills  # noqa: F401,E402 - registers list_skills, run_skill, get_skill_run and the skill_<name> tools
