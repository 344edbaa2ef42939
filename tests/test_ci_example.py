"""The CI recipe (examples/github-actions.yml, README "Team warehouse"): the workflow parses, takes
the lake and every secret from the environment, and its `tame-wh` steps, run in order as a runner
would run them, work against a lake: each runner ingests into the shared history, the gate judges
the job's own run against the pinned baseline and writes its verdict as Markdown, the dashboard
is built and the leaderboard reaches Postgres."""

from __future__ import annotations

import copy
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / "examples" / "github-actions.yml"
DEMO_REPORT = ROOT / "warehouse" / "examples" / "demo-small.few-shot.report.json"


def _workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))


def _steps() -> list[dict]:
    (job,) = _workflow()["jobs"].values()
    return job["steps"]


def test_the_workflow_takes_the_lake_and_every_secret_from_the_environment():
    (job,) = _workflow()["jobs"].values()
    env = job["env"]
    assert env["TAME_WH_DB"] == "${{ secrets.TAME_WH_LAKE }}"
    for name in ("PGPASSWORD", "AWS_SECRET_ACCESS_KEY", "AWS_ACCESS_KEY_ID", "TAME_WH_PG_DSN"):
        assert re.fullmatch(r"\$\{\{ secrets\.[A-Z0-9_]+ \}\}", env[name]), name
    assert "TAME_WH_DATA_PATH" in env and "AWS_ENDPOINT_URL_S3" in env
    commands = [s["run"] for s in _steps() if "run" in s and s["run"].startswith("tame-wh")]
    assert [c.split()[1] for c in commands] == ["ingest", "dashboard", "migrate", "sync"]
    assert "--gate --against tag:baseline=main --gate-markdown gate.md" in commands[0]
    assert set(_workflow()[True]) == {"push", "pull_request", "workflow_dispatch"}
    # No secret or address is written into a command line.
    assert not any("--db" in c or "--dsn" in c or "password" in c for c in commands)


def _report(path: Path, created: str, damage: float) -> Path:
    """The demo's test report as a new run of the same model: `damage` of its hypotheses
    replaced by unrelated text."""
    doc = json.loads(DEMO_REPORT.read_text(encoding="utf-8"))
    doc = copy.deepcopy(doc)
    doc["created_at"] = created
    doc["fingerprint"] = {"hash": f"ci-{created}"}
    entries = doc["entries"]
    for i, entry in enumerate(entries):
        if entry.get("error") is None and i < damage * len(entries):
            entry["predicted"] = "lorem ipsum dolor sit amet"
        elif entry.get("error") is None and damage == 0:
            entry["predicted"] = entry["expected"]
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def _runs(step: dict, failed: bool, event: str) -> bool:
    """Whether a runner runs `step` after the steps before it (`failed`: one of them failed), on
    a `push` to main or a `pull_request`: the workflow's `if:` conditions, read as GitHub does."""
    condition = step.get("if")
    if condition is None:
        return not failed
    if "always()" in condition:
        return True
    assert condition == "github.event_name == 'push' && github.ref == 'refs/heads/main'"
    return not failed and event == "push"


# The step expressions the workflow uses, as GitHub fills them in for a push and a pull request.
_EXPRESSIONS = {
    "push": {"github.event.pull_request.number": ""},
    "pull_request": {"github.event.pull_request.number": "17"},
}


def _expanded(value: str, event: str) -> str:
    """A step's value with its `${{ … }}` expressions filled in as GitHub would for `event`."""
    return re.sub(r"\$\{\{\s*([\w.]+)\s*\}\}", lambda m: _EXPRESSIONS[event][m[1]], value)


def _run_job(
    lake, workdir: Path, env: dict[str, str], event: str = "push"
) -> list[tuple[str, int, str]]:
    """Run the workflow's `tame-wh` steps in order in `workdir` as a runner does for `event`
    (after a failure only the `always()` steps), each in bash with the step's own environment
    and `tame-wh` on the PATH; each step's name, exit code and output."""
    shim = workdir / "bin"
    shim.mkdir(exist_ok=True)
    (shim / "tame-wh").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m warehouse.cli "$@"\n')
    (shim / "tame-wh").chmod(0o755)
    done = []
    failed = False
    for step in _steps():
        command = step.get("run", "")
        if not command.startswith("tame-wh") or not _runs(step, failed, event):
            continue  # checkout, setup-python, pip install, the user's own harness, gh
        own = {k: _expanded(str(v), event) for k, v in (step.get("env") or {}).items()}
        path = f"{shim}{os.pathsep}{env.get('PATH', '')}"
        proc = subprocess.run(
            ["bash", "-c", command], cwd=workdir, env={**env, **own, "PATH": path},
            capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        done.append((step["name"], proc.returncode, proc.stdout + proc.stderr))
        failed = failed or proc.returncode != 0
    return done


# On the S3 data path, a team's shared setup (every command on a data directory's lake runs in
# tests/cli/test_backends.py).
@pytest.mark.parametrize("lake", ["lake-s3"], indirect=True)
def test_the_workflow_steps_run_against_a_lake(lake, pg_dsn, tmp_path):
    env = {**lake.child_env(), "TAME_WH_PG_DSN": pg_dsn, "PYTHONPATH": str(ROOT)}
    env.pop("CI", None)  # the runner's own CI variables are set below, as GitHub sets them
    env.update({"GITHUB_ACTIONS": "true", "GITHUB_SHA": "0" * 40, "GITHUB_RUN_ID": "1"})
    # Once per team: a first run of the model pinned as the baseline (the job creates the
    # Supabase tables itself).
    seed = _report(tmp_path / "seed.json", "2026-11-01T00:00:00Z", damage=0.5)
    stored = lake.run("ingest", str(seed), "--json")
    assert stored.exit_code == 0, stored.output
    baseline = json.loads(stored.stdout)[0]["run_id"]
    assert lake.run("runs", "tag", baseline, "baseline=main").exit_code == 0

    # A push to main with a better model: ingested, passed, dashboard built, synced.
    first = tmp_path / "runner1"
    first.mkdir()
    _report(first / "report.json", "2026-11-02T00:00:00Z", damage=0.0)
    steps = _run_job(lake, first, {**env, "GITHUB_RUN_ID": "101"})
    assert [(name, code) for name, code, _ in steps] == [
        ("Ingest the run and gate it against the pinned baseline", 0),
        ("Build the dashboard", 0),
        ("Create or update the Supabase tables", 0),
        ("Publish the leaderboard to Supabase", 0),
    ], steps
    assert "ingested run" in steps[0][2] and "gate passed" in steps[0][2]
    assert "✅ passed" in (first / "gate.md").read_text(encoding="utf-8")
    assert (first / "dashboard" / "index.html").is_file()
    with psycopg.connect(pg_dsn) as conn:
        synced = conn.execute("SELECT count(*) FROM run_cards").fetchone()
    assert synced == (2,)

    # A pull request on another runner, another machine, with a broken model: the gate sees the
    # shared history, fails the job and says why; the dashboard is still built, nothing synced.
    second = tmp_path / "runner2"
    second.mkdir()
    _report(second / "report.json", "2026-11-03T00:00:00Z", damage=0.9)
    steps = _run_job(lake, second, {**env, "GITHUB_RUN_ID": "102"}, event="pull_request")
    assert [(name, code) for name, code, _ in steps] == [
        ("Ingest the run and gate it against the pinned baseline", 1),
        ("Build the dashboard", 0),
    ], steps
    verdict = (second / "gate.md").read_text(encoding="utf-8")
    assert "❌ regressed" in verdict and baseline in verdict
    runners = lake.sql(
        "SELECT json_extract_string(ci, '$.run_id') AS job FROM runs "
        "WHERE json_extract_string(ci, '$.run_id') IN ('101', '102') ORDER BY job"
    )
    assert runners == [("101",), ("102",)]  # each runner's run carries its CI metadata
    assert lake.sql("SELECT count(*) FROM runs") == [(3,)]
    # The pull request's run carries its number; the main board leaves it out.
    tagged = lake.sql("SELECT json_extract_string(r.ci, '$.run_id'), t.value FROM run_tags t "
                      "JOIN runs r USING (run_id) WHERE t.key = 'pr'")  # fmt: skip
    assert tagged == [("102", "17")]
    board = json.loads(lake.run("leaderboard", "--exclude-tag", "pr", "--json").stdout)
    assert len(board) == 2


RELEASE = ROOT / "examples" / "release.yml"


def test_the_job_installs_a_released_wheel_and_never_compiles():
    [install] = [s["run"] for s in _steps() if s.get("name") == "Install tame-wh"]
    assert install.startswith("pip install --only-binary tame-wh ")
    from warehouse import __version__

    assert f'"tame-wh=={__version__}"' in install  # the version this repository releases


def test_the_release_workflow_builds_abi3_wheels_everywhere_and_publishes_on_tags():
    release = yaml.safe_load(RELEASE.read_text(encoding="utf-8"))
    assert release[True]["push"]["tags"] == ["v*"]
    jobs = release["jobs"]
    targets = {(m["os"], m["target"]) for m in jobs["wheels"]["strategy"]["matrix"]["include"]}
    assert {os.split("-")[0] for os, _target in targets} == {"ubuntu", "macos", "windows"}
    [build] = [s for s in jobs["wheels"]["steps"] if "maturin-action" in s.get("uses", "")]
    assert "--release" in build["with"]["args"] and "--locked" in build["with"]["args"]
    assert (ROOT / "native" / "Cargo.lock").exists()  # what --locked builds against
    # One wheel serves every CPython from 3.10: the extension is built for the stable ABI.
    cargo = (ROOT / "native" / "Cargo.toml").read_text(encoding="utf-8")
    assert re.search(r'pyo3 = \{[^}]*"abi3-py310"', cargo)
    checks = [s["run"] for s in jobs["wheels"]["steps"] if "run" in s]
    assert any("--only-binary tame-wh" in c and "tame-wh --db demo.duckdb demo" in c
               for c in checks)  # fmt: skip
    publish = jobs["publish"]
    assert publish["needs"] == ["wheels", "sdist"] and publish["permissions"]["id-token"] == "write"
    assert any("pypi-publish" in s.get("uses", "") for s in publish["steps"])
