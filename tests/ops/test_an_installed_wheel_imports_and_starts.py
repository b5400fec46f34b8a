"""foldrun as a wheel: built from the checkout, installed into a fresh virtual environment and started from a
folder outside the checkout, every app imports, its models, migrations, templates and static files are the
installed ones, the system checks pass, the database migrates and the console script answers. (Issue 30,
item 7.)

The fresh environment has nothing of its own but the wheel; the third-party packages it needs are the test
environment's own, reached through a .pth line (a plain path, so that environment's editable install of this
checkout is not reached with them)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# What the wheel is built from: the packages, the site's templates and static files, the project file.
SOURCES = [
    "pyproject.toml",
    "foldrun",
    "accounts",
    "library",
    "runs",
    "notify",
    "vault",
    "browsing",
    "templates",
    "static",
]
APPS = ["accounts", "library", "runs", "notify", "vault", "browsing", "foldrun.net"]

STARTS = """
import importlib, json, sys
from pathlib import Path
import django
django.setup()
from django.apps import apps
from django.contrib.staticfiles import finders
from django.core.management import call_command
from django.template.loader import get_template
import foldrun.urls, foldrun.celery, foldrun.asgi  # every app's views, tasks and the server's entry point
ours = [config for config in apps.get_app_configs() if config.name in %(apps)r]
for config in ours:
    if Path(config.path, "models.py").exists():
        importlib.import_module(config.name + ".models")
call_command("check", fail_level="WARNING")
call_command("migrate", verbosity=0)
import foldrun, library.skills
print(json.dumps({
    "apps": {config.name: config.path for config in ours},
    "migrations": {config.name: sorted(p.name for p in Path(config.path, "migrations").glob("0001_*.py"))
                   for config in ours if Path(config.path, "models.py").exists()},
    "templates": [get_template(name).origin.name for name in ("base.html", "runs/run.html", "library/workspace.html")],
    "static": [finders.find(name) for name in ("foldrun.css", "run-page.js", "vendor/htmx-2.0.11/htmx.min.js")],
    "gallery": sorted(str(p.relative_to(Path(foldrun.__file__).parent)) for p in Path(foldrun.__file__).parent.joinpath("gallery").rglob("*.md")),
    "builtin_skills": sorted(p.name for p in Path(library.skills.__file__).parent.joinpath("builtin_skills").iterdir()),
}))
"""


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> dict:
    """The wheel built, installed in a fresh environment, and its python and site-packages."""
    work = tmp_path_factory.mktemp("wheel")
    source = work / "source"
    source.mkdir()
    for name in SOURCES:
        if (ROOT / name).is_dir():
            # links kept as links: foldrun/site's lead to templates/ and static/ beside them
            shutil.copytree(
                ROOT / name, source / name, symlinks=True, ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
            )
        else:
            shutil.copy2(ROOT / name, source / name)
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(work / "dist"), str(source)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    wheel = next((work / "dist").glob("foldrun-*.whl"))

    fresh = work / "fresh"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(fresh)], check=True, timeout=120)
    python = fresh / "bin" / "python"
    site = Path(
        subprocess.check_output(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], text=True
        ).strip()
    )
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--no-deps",
            "--no-index",
            "--quiet",
            str(wheel),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    # After the install: pip would otherwise find this checkout's editable foldrun there and install nothing.
    (site / "third_party.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    outside = work / "elsewhere"
    outside.mkdir()
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("PYTHONPATH", "DJANGO_SETTINGS_MODULE", "DATABASE_URL", "CELERY_BROKER_URL")
        and not key.startswith(("FOLDRUN_", "PYTEST_"))
    }
    env.update({"DJANGO_SETTINGS_MODULE": "foldrun.settings.dev", "FOLDRUN_DATA_DIR": str(work / "data")})
    return {"python": python, "site": site, "bin": fresh / "bin", "cwd": outside, "env": env}


def test_every_app_its_migrations_templates_and_static_files_come_from_the_installed_wheel(installed):
    started = subprocess.run(
        [str(installed["python"]), "-c", STARTS % {"apps": APPS}],
        cwd=installed["cwd"],
        env=installed["env"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert started.returncode == 0, started.stdout[-3000:] + started.stderr[-3000:]
    seen = json.loads(started.stdout.strip().splitlines()[-1])
    site = str(installed["site"])

    assert sorted(seen["apps"]) == sorted(APPS)
    assert all(path.startswith(site) for path in seen["apps"].values()), seen["apps"]
    assert set(seen["migrations"]) == {"accounts", "library", "runs", "notify", "vault", "browsing"}
    assert all(files == [files[0]] and files[0].startswith("0001_") for files in seen["migrations"].values())
    assert all(name.startswith(f"{site}/foldrun/site/templates/") for name in seen["templates"]), seen["templates"]
    assert all(name and name.startswith(f"{site}/foldrun/site/static/") for name in seen["static"]), seen["static"]
    checkout = sorted(str(p.relative_to(ROOT / "foldrun")) for p in (ROOT / "foldrun" / "gallery").rglob("*.md"))
    assert seen["gallery"] == checkout and checkout
    assert seen["builtin_skills"] == sorted(p.name for p in (ROOT / "library" / "builtin_skills").iterdir())


def test_the_installed_console_script_answers(installed):
    done = subprocess.run(
        [str(installed["bin"] / "foldrun"), "--version"],
        cwd=installed["cwd"],
        env=installed["env"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip()
