"""Secrets: names in files, values in the vault. A value pasted where a name
belongs, or anywhere in any file, is refused — naming the file and line,
never echoing the value."""

from __future__ import annotations

import re

from ..check import rule
from ..desk import AGENT, AGENTS_MD, FLOW, SKILL, TOOL
from ..findings import Finding
from ..model import PLACEHOLDER_RE, SECRET_NAME_RE, agent_of
from ..paths import BINARY_MARKER

# (what it looks like, pattern). Patterns are anchored on a non-word left edge.
_SHAPES: list[tuple[str, str]] = [
    ("an Anthropic API key", r"sk-ant-[A-Za-z0-9_\-]{20,}"),
    ("a Stripe key", r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}"),
    ("an OpenAI-style API key", r"sk-(?!ant-)[A-Za-z0-9_\-]{20,}"),
    ("a GitHub token", r"(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})"),
    ("a Slack token", r"xox[abposre]-[A-Za-z0-9\-]{10,}"),
    ("an AWS access key", r"(?:AKIA|ASIA)[0-9A-Z]{16}(?![0-9A-Za-z])"),
    ("a Resend API key", r"re_[A-Za-z0-9]{6,}_[A-Za-z0-9]{16,}"),
    ("a Google API key", r"AIza[0-9A-Za-z_\-]{35}"),
    ("a private key", r"-----BEGIN [A-Z ]*PRIVATE KEY-----"),
    ("a literal bearer token", r"Bearer[ \t]+[A-Za-z0-9._~+/=\-]{20,}"),
]
_ANY = re.compile("|".join(f"(?<![A-Za-z0-9_])(?P<s{i}>{p})" for i, (_label, p) in enumerate(_SHAPES)))
# Shapes an ordinary identifier or word could take (sk-…, re_…, Bearer …) count
# only with a capital, a small letter and a digit in them, as real keys have.
_NEEDS_MIX = {2, 6, 9}


# Every shape starts with one of these; a file holding none is skipped without the regex.
_PREFIXES = (
    "sk-",
    "sk_",
    "rk_",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "xox",
    "AKIA",
    "ASIA",
    "re_",
    "AIza",
    "-----BEGIN",
    "Bearer",
)


def might_hold_secret(text: str) -> bool:
    return any(prefix in text for prefix in _PREFIXES)


def secret_shape(value: str) -> str | None:
    """What a credential in `value` looks like ("an Anthropic API key"), or None."""
    for match in _ANY.finditer(value):
        index = int(match.lastgroup[1:])
        text = match.group(0)
        if index in _NEEDS_MIX:
            tail = text.split(None, 1)[-1] if index == 9 else text[3:]
            if not (re.search(r"\d", tail) and re.search(r"[a-z]", tail) and re.search(r"[A-Z]", tail)):
                continue
        return _SHAPES[index][0]
    return None


def looks_like_value(value: str) -> bool:
    """A string in a place for a NAME that is a credential, not a name."""
    return secret_shape(value) is not None or not SECRET_NAME_RE.match(value)


@rule("secrets.pasted")
def pasted(desk, context):
    for path, text in desk.files.items():
        # storage/ holds bytes people read (fetched pages, reports), not configuration.
        if text == BINARY_MARKER or path.startswith("storage/") or not might_hold_secret(text):
            continue
        seen_lines = set()
        for match in _ANY.finditer(text):
            line_text_start = text.rfind("\n", 0, match.start()) + 1
            line_end = text.find("\n", match.end())
            line_text = text[line_text_start : line_end if line_end != -1 else len(text)]
            label = secret_shape(line_text[match.start() - line_text_start :])
            if label is None:
                continue
            line = text.count("\n", 0, match.start()) + 1
            if line in seen_lines:
                continue
            seen_lines.add(line)
            yield Finding(
                path,
                line,
                "error",
                f"holds what looks like a secret value ({label}); foldrun refuses it — put the value in the vault and refer to it by name, such as ${{NAME}}.",
                "secrets.pasted",
            )


def _name_list_findings(document, key: str, values, allowed_words=()):
    if values is None:
        return
    if isinstance(values, str):
        if values.strip() in allowed_words:
            return
        values = [v.strip() for v in values.split(",")]
    if not isinstance(values, list):
        yield Finding(
            document.path,
            document.line_of(key),
            "error",
            f"{key}: must be a list of vault names, such as {key}: [RESEND_API_KEY, EMAIL_FROM].",
            "secrets.not_list",
        )
        return
    for position, value in enumerate(values, start=1):
        text = str(value).strip() if value is not None else ""
        if SECRET_NAME_RE.match(text):
            continue
        placeholder = PLACEHOLDER_RE.fullmatch(text)
        if placeholder:
            yield Finding(
                document.path,
                document.line_of(key),
                "error",
                f"{key}: item {position} is written ${{{placeholder.group(1)}}}; list the bare name, {placeholder.group(1)}.",
                "secrets.placeholder_in_list",
            )
        elif secret_shape(text) or len(text) >= 16:
            yield Finding(
                document.path,
                document.line_of(key),
                "error",
                f"{key}: item {position} looks like a credential value, not a name; list the vault name (such as RESEND_API_KEY) and keep the value in the vault.",
                "secrets.value_in_list",
            )
        else:
            yield Finding(
                document.path,
                document.line_of(key),
                "error",
                f"{key}: item {position} is not a secret name; a name is capital letters, digits and '_' (such as RESEND_API_KEY).",
                "secrets.bad_name",
            )


@rule("secrets.lists")
def lists(desk, context):
    for document in desk.of_kind(AGENT):
        if document.parsed is not None:
            yield from _name_list_findings(document, "secrets", document.meta.get("secrets"))
    for document in desk.of_kind(TOOL):
        if document.parsed is not None:
            yield from _name_list_findings(
                document, "secrets", document.meta.get("secrets"), ("proxied", "materialised", "materialized")
            )


def _is_name_or_placeholder(value: str) -> bool:
    value = value.strip()
    return bool(SECRET_NAME_RE.match(value) or PLACEHOLDER_RE.fullmatch(value))


def _walk_keys(node, trail):
    if isinstance(node, dict):
        for key, value in node.items():
            yield trail + (str(key),), value
            yield from _walk_keys(value, trail + (str(key),))
    elif isinstance(node, list):
        for item in node:
            yield from _walk_keys(item, trail)


@rule("secrets.name_keys")
def name_keys(desk, context):
    """`key:` (a provider's, anywhere) and a flow webhook's `secret:` hold a NAME or ${NAME}."""
    for kind in (AGENTS_MD, AGENT, FLOW, TOOL, SKILL):
        for document in desk.of_kind(kind):
            if not document.meta:
                continue
            for trail, value in _walk_keys(document.meta, ()):
                leaf = trail[-1]
                # provider:, web: and notify: blocks have their own rules (providers.py, web.py, notify.py).
                is_name_slot = (leaf == "key" and len(trail) > 1 and trail[0] not in ("provider", "web", "notify")) or (
                    kind == FLOW and trail == ("webhook", "secret")
                )
                if not is_name_slot or not isinstance(value, str) or _is_name_or_placeholder(value):
                    continue
                where = ".".join(trail)
                yield Finding(
                    document.path,
                    document.line_at(*trail),
                    "error",
                    f"{where} holds a value where a secret name belongs; write {leaf}: ${{NAME}} and keep the value in the vault.",
                    "secrets.value_in_key",
                )


_SENSITIVE_HEADER = re.compile(
    r"(authorization|auth|token|secret|password|api[-_]?key|apikey|x-key|cookie|session|signature)", re.I
)
_SENSITIVE_QUERY = re.compile(r"(key|token|secret|password|auth|sig|signature|session|code)", re.I)
_SCHEME_ONLY = re.compile(r"^(Bearer|Basic|Token|Bot|Digest)\s*$", re.I)


def _literal_credential(name: str, value: str, sensitive) -> bool:
    if not value or "${" in value:
        return False
    if secret_shape(value):
        return False  # secrets.pasted names the line already
    if not sensitive.search(name):
        return False
    return not _SCHEME_ONLY.match(value.strip())


def _header_findings(document, key: str, mapping, sensitive, line_for):
    if not isinstance(mapping, dict):
        return
    for name, value in mapping.items():
        if isinstance(value, str) and _literal_credential(str(name), value, sensitive):
            yield Finding(
                document.path,
                line_for(str(name)),
                "error",
                f"{key}: {name} holds a literal credential; write it with a ${{NAME}} placeholder (such as Bearer ${{API_TOKEN}}) and keep the value in the vault.",
                "secrets.literal_header",
            )


@rule("secrets.headers")
def headers(desk, context):
    for document in desk.of_kind(TOOL):
        if document.parsed is None:
            continue
        meta = document.meta
        yield from _header_findings(
            document, "headers", meta.get("headers"), _SENSITIVE_HEADER, lambda n, d=document: d.line_at("headers", n)
        )
        yield from _header_findings(
            document, "query", meta.get("query"), _SENSITIVE_QUERY, lambda n, d=document: d.line_in("query", n)
        )
        yield from _header_findings(
            document, "env", meta.get("env"), _SENSITIVE_HEADER, lambda n, d=document: d.line_in("env", n)
        )
    for document in desk.of_kind(AGENT):
        if document.parsed is None:
            continue
        for server in agent_of(desk, document).mcp_servers.values():
            for key, mapping in (("headers", server.headers), ("env", server.env)):
                line_for = lambda n, d=document, s=server.name, k=key: d.line_at("mcpServers", s, k, n)
                yield from _header_findings(
                    document, f"mcpServers: {server.name} {key}", mapping, _SENSITIVE_HEADER, line_for
                )
