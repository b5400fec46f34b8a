"""deploy/: the compose file is valid Compose (checked against the Compose Specification's own JSON schema,
tests/ops/compose-spec.json from github.com/compose-spec/compose-spec at 170098b, Apache-2.0 — Docker's
engine is not on these machines; .ci/run adds `docker compose config` where it is), runs the seven services
a production install needs on one shared data folder (the browser service apart from the workers), and its env example names only variables foldrun reads."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import yaml

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"


def compose() -> dict:
    return yaml.safe_load((DEPLOY / "compose.yaml").read_text())


def test_the_compose_file_is_valid_against_the_compose_specification_schema():
    schema = json.loads((Path(__file__).parent / "compose-spec.json").read_text())
    jsonschema.Draft7Validator(schema).validate(compose())


def test_a_file_the_schema_refuses_is_refused():
    schema = json.loads((Path(__file__).parent / "compose-spec.json").read_text())
    broken = compose()
    broken["services"]["web"]["restart"] = ["always"]
    assert not jsonschema.Draft7Validator(schema).is_valid(broken)


def test_it_runs_postgresql_redis_web_worker_browsers_beat_and_searxng_web_worker_browsers_and_beat_on_one_data_folder():
    services = compose()["services"]
    assert sorted(services) == ["beat", "browsers", "postgres", "redis", "searxng", "web", "worker"]
    for name in ("web", "worker", "browsers", "beat"):
        service = services[name]
        assert service["environment"]["DJANGO_SETTINGS_MODULE"] == "foldrun.settings.prod"
        assert service["environment"]["FOLDRUN_DATA_DIR"] == "/data"
        assert "foldrun-data:/data" in service["volumes"]
        assert service["environment"]["CELERY_BROKER_URL"].startswith("redis://redis:")
        assert service["environment"]["DATABASE_URL"].startswith("postgres://foldrun:")
    assert "gunicorn foldrun.asgi:application" in services["web"]["command"]
    assert "--worker-class uvicorn_worker.UvicornWorker" in services["web"]["command"]
    assert services["worker"]["command"][:4] == ["celery", "-A", "foldrun", "worker"]
    assert services["beat"]["command"][:4] == ["celery", "-A", "foldrun", "beat"]
    # The workers take the main queue (and the recovery queue, which every such worker adds); the browser
    # service only its own, with one slot per browser the install keeps open — the capacity the web counts.
    assert services["worker"]["command"][-2:] == ["-Q", "${FOLDRUN_QUEUE:-foldrun}"]
    browsers = services["browsers"]["command"]
    assert browsers[:4] == ["celery", "-A", "foldrun", "worker"]
    assert browsers[browsers.index("-Q") + 1] == "${FOLDRUN_QUEUE:-foldrun}.browsers"
    assert browsers[browsers.index("--concurrency") + 1] == "${FOLDRUN_BROWSER_CAPACITY:-4}"
    for name in ("web", "worker", "browsers", "beat"):
        assert services[name]["environment"]["FOLDRUN_BROWSER_CAPACITY"] == "${FOLDRUN_BROWSER_CAPACITY:-4}"
    assert services["web"]["environment"]["FOLDRUN_SEARXNG_URL"] == "http://searxng:8080"
    searx = yaml.safe_load((DEPLOY / "searxng/settings.yml").read_text())
    assert "json" in searx["search"]["formats"]  # foldrun asks SearXNG for /search?format=json


def _variables_foldrun_reads() -> set[str]:
    names: set[str] = set()
    for path in list((ROOT / "foldrun").rglob("*.py")):
        names |= set(re.findall(r'env_(?:str|bool|int|list|url)\(\s*"([A-Z0-9_]+)"', path.read_text()))
    return names


def test_the_env_example_names_only_variables_that_foldrun_or_the_compose_file_reads():
    example = (DEPLOY / "env.example").read_text()
    named = set(re.findall(r"^#? ?([A-Z][A-Z0-9_]+)=", example, flags=re.M))
    compose_text = (DEPLOY / "compose.yaml").read_text()
    read_by_compose = set(re.findall(r"\$\{([A-Z0-9_]+)", compose_text))
    unknown = named - _variables_foldrun_reads() - read_by_compose
    assert unknown == set()
    for required in (
        "DJANGO_SECRET_KEY",
        "DJANGO_ALLOWED_HOSTS",
        "FOLDRUN_PUBLIC_URL",
        "FOLDRUN_VAULT_KEYS",
        "POSTGRES_PASSWORD",
        "SEARXNG_SECRET",
        "RESEND_API_KEY",
    ):
        assert re.search(rf"^{required}=", example, flags=re.M), required
