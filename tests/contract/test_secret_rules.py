"""Secrets: names in files, values in the vault — refused by file and line,
never echoed."""

from foldrun.contract import Desk, check

from .support import lines

ANTHROPIC = "sk-ant-api03-" + "Ab3" * 10
PASTED = "holds what looks like a secret value ({}); foldrun refuses it — put the value in the vault and refer to it by name, such as ${{NAME}}."


def test_a_value_pasted_into_any_file_is_refused_by_line_without_echoing_it():
    files = {
        "knowledge/notes.md": f"---\ntype: Note\ntitle: t\ndescription: d\n---\nOur key is {ANTHROPIC} for now.\n",
        "tools/t/run.py": "import os\nTOKEN = 'ghp_" + "a1B2" * 9 + "'\n",
        "state/env.txt": "AWS=AKIA" + "ABCDEFGHIJKLMNOP" + "\nSLACK=xoxb-1234567890-abcdef\n",
    }
    found = lines(files, code="secrets.pasted")
    assert found == [
        "knowledge/notes.md:6: error: " + PASTED.format("an Anthropic API key"),
        "state/env.txt:1: error: " + PASTED.format("an AWS access key"),
        "state/env.txt:2: error: " + PASTED.format("a Slack token"),
        "tools/t/run.py:2: error: " + PASTED.format("a GitHub token"),
    ]
    assert not any(ANTHROPIC in line or "ghp_" in line for line in found)


def test_each_known_shape_is_recognised():
    shapes = {
        "sk-proj-" + "Zx9" * 10: "an OpenAI-style API key",
        "re_c1tpEyD8_NKFusih9vKVQknRAQfmFcWCv": "a Resend API key",
        "sk_live_" + "a1" * 10: "a Stripe key",
        "AIza" + "B" * 35: "a Google API key",
        "-----BEGIN RSA PRIVATE KEY-----": "a private key",
        "Bearer " + "eyJ0eXAi0iJKV1Q" * 2: "a literal bearer token",
    }
    for value, label in shapes.items():
        assert lines({"notes.txt": f"x {value}\n"}, code="secrets.pasted") == [
            "notes.txt:1: error: " + PASTED.format(label)
        ]


def test_storage_is_not_scanned_for_pasted_values():
    assert lines(
        {"storage/page.html": f"<p>{ANTHROPIC}</p>\n", "state/log.txt": f"{ANTHROPIC}\n"}, code="secrets.pasted"
    ) == ["state/log.txt:1: error: " + PASTED.format("an Anthropic API key")]


def test_ordinary_words_and_placeholders_are_not_secrets():
    text = (
        "Authorization: Bearer ${GOOGLE_ADS_TOKEN}\nre_compile_every_pattern_we_have\nre_match_v2_2024_patterns_compiled = 1\n"
        "Bearer YOUR_TOKEN_HERE_1234567890\nsk-proj-your-key-goes-here-123456\n"
        "f\"Bearer {os.environ['RESEND_API_KEY']}\"\nsk-learn-is-not-a-key-at-all-really\nask-anthropic-later\n"
    )
    assert lines({"notes.md": text}, code="secrets.pasted") == []


def test_a_value_in_a_secrets_list_is_refused_without_echoing_it():
    files = {"agents/a.md": "---\nsecrets: [RESEND_API_KEY, 'hunter2hunter2hunter2', '${EMAIL_FROM}', 'my key']\n---\n"}
    assert lines(files, code=None) == [
        "agents/a.md:2: error: secrets: item 2 looks like a credential value, not a name; list the vault name (such as RESEND_API_KEY) and keep the value in the vault.",
        "agents/a.md:2: error: secrets: item 3 is written ${EMAIL_FROM}; list the bare name, EMAIL_FROM.",
        "agents/a.md:2: error: secrets: item 4 is not a secret name; a name is capital letters, digits and '_' (such as RESEND_API_KEY).",
    ]


def test_a_tools_secrets_may_say_proxied_or_materialised():
    tool = "---\ntransport: script\nrun: r.py\nsecrets: {}\n---\n"
    assert lines({"tools/t/tool.md": tool.format("proxied"), "tools/t/r.py": "print(1)\n"}) == []
    assert lines({"tools/t/tool.md": tool.format("materialised"), "tools/t/r.py": "print(1)\n"}) == []


def test_a_value_in_a_key_is_refused_and_a_name_or_placeholder_is_not():
    files = {
        "agents/a.md": "---\napis:\n  crm:\n    base: https://crm.example.com\n    key: not-a-name-at-all\n---\n",
        "agents/b.md": "---\napis: {crm: {key: CRM_KEY}, ads: {key: '${ADS_KEY}'}}\n---\n",
        "flows/f.md": "---\nwebhook: {signature: hmac, secret: 'abc def'}\n---\n1. [[b]] — go\n",
    }
    assert lines(files, code="secrets.value_in_key") == [
        "agents/a.md:5: error: apis.crm.key holds a value where a secret name belongs; write key: ${NAME} and keep the value in the vault.",
        "flows/f.md:2: error: webhook.secret holds a value where a secret name belongs; write secret: ${NAME} and keep the value in the vault.",
    ]


def test_a_header_or_query_with_a_literal_credential_is_refused():
    tool = (
        "---\ntransport: http\nbase: https://api.example.com\nheaders:\n  Authorization: Basic dXNlcjpwYXNz\n  Accept: application/json\n"
        "  X-Api-Key: ${API_KEY}\nquery:\n  api_key: abc123\n  format: json\n---\n"
    )
    assert lines({"tools/api.md": tool}, code="secrets.literal_header") == [
        "tools/api.md:5: error: headers: Authorization holds a literal credential; write it with a ${NAME} placeholder (such as Bearer ${API_TOKEN}) and keep the value in the vault.",
        "tools/api.md:9: error: query: api_key holds a literal credential; write it with a ${NAME} placeholder (such as Bearer ${API_TOKEN}) and keep the value in the vault.",
    ]


def test_an_inline_mcp_server_header_is_checked_too():
    files = {
        "agents/a.md": "---\nmcpServers:\n  linear:\n    url: https://mcp.linear.app/sse\n    headers: {Authorization: Bearer abc}\n---\n"
    }
    assert lines(files, code="secrets.literal_header") == [
        "agents/a.md:5: error: mcpServers: linear headers: Authorization holds a literal credential; write it with a ${NAME} placeholder (such as Bearer ${API_TOKEN}) and keep the value in the vault."
    ]


def test_no_finding_ever_carries_the_value():
    files = {
        "agents/a.md": f"---\nsecrets: ['{ANTHROPIC}']\n---\n{ANTHROPIC}\n",
        "tools/t.md": f"---\ntransport: http\nbase: https://x.example\nheaders: {{Authorization: 'Bearer {ANTHROPIC}'}}\n---\n",
    }
    found = check(Desk(files))
    assert [(f.file, f.line, f.code) for f in found] == [
        ("agents/a.md", 2, "secrets.pasted"),
        ("agents/a.md", 2, "secrets.value_in_list"),
        ("agents/a.md", 4, "secrets.pasted"),
        ("tools/t.md", 4, "secrets.pasted"),
    ]
    assert not any(ANTHROPIC in f.format() for f in found)
