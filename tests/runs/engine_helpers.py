"""Desks for engine tests: an agent wired to the loopback fake provider."""

from __future__ import annotations

from foldrun.contract import Desk


def agent_md(name: str, fake, *, tools: str = "[read]", extra: str = "", body: str = "You research things.") -> str:
    return (
        f"---\nname: {name}\ndescription: test agent\ntools: {tools}\n"
        f"provider: {{name: anthropic, base_url: '{fake.base_url}', key: '${{ANTHROPIC_API_KEY}}', model: claude-sonnet-4-5}}\n"
        f"{extra}---\n{body}\n"
    )


def desk(files: dict[str, str], library: dict[str, str] | None = None) -> Desk:
    return Desk(files=files, library=library or {})


SECRETS = {"ANTHROPIC_API_KEY": "sk-ant-test-key-123456"}
