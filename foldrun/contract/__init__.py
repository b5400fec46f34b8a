"""The file contract: parse, check and resolve desks. Pure Python, no Django.

The CLI (offline), deploy on the server and the run itself call these same
functions on the same files and print the same sentences.

    check(desk, mode="check"|"deploy") -> [Finding]      check.py
    check_folder(path) / check_files({path: bytes})      check.py (CLI / server)
    format_findings(findings) -> str                     check.py
    check_payload(path, data, max_bytes) -> Finding|None payload.py
    platform_from_versions(browser_versions) -> platform platform.py (check's platform=)
    Desk, Document, kinds                                desk.py
    Agent, Flow, Step, Tool, Skill, Concept, Defaults    model/ (agent_of, flow_of, tool_of, …)
    resolve_tool / resolve_skill / resolve_agent /
      granted_tools / agent_skills / effective_limits    resolve.py
    render_index / render_log / is_generated             generated.py
"""

from .check import check, check_files, check_folder, format_findings, has_errors, rule
from .desk import Desk, Document
from .findings import ContractError, Finding
from .generated import LogEntry, is_generated, render_index, render_log
from .payload import check_payload
from .platform import platform_from_versions

__all__ = [
    "check",
    "check_files",
    "check_folder",
    "format_findings",
    "has_errors",
    "rule",
    "Desk",
    "Document",
    "ContractError",
    "Finding",
    "LogEntry",
    "is_generated",
    "render_index",
    "render_log",
    "check_payload",
    "platform_from_versions",
]
