"""Boards compare like with like: a score computed under other metric settings than the rest of
its test set's runs (chrF instead of chrF++, another tokenizer, lowercased) is marked and named,
in the JSON rows, the table and the Markdown."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "warehouse" / "examples"


@pytest.fixture
def demo(demo_db):
    return demo_db


def _ingest(run_cli, slug: str, *options: str) -> str:
    """The demo's small model's hypotheses again, under `slug`, with metric options."""
    hyp = EXAMPLES / "demo-small.zero-shot.hyp"
    result = run_cli(
        "ingest", "--testset", "demo-test", "--hyp", hyp, "--model-slug", slug, "--no-intervals",
        "--json", *options,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)[0]["run_id"]


def test_a_chrf_run_among_chrf_plus_plus_runs_is_marked_and_named(run_cli, demo):
    plain = _ingest(run_cli, "plain-chrf", "--chrf-word-order", "0")
    rows = json.loads(run_cli("leaderboard", "--json").stdout)
    marked = {r["run_id"]: r["signature_differs"] for r in rows}
    assert marked.pop(plain) == ["chrf"]
    assert all(v == [] for v in marked.values())
    row = next(r for r in rows if r["run_id"] == plain)
    assert "nw:0" in row["metric_signatures"]["chrf"]
    table = run_cli("--wide", "leaderboard")
    [line] = [x for x in table.stdout.splitlines() if plain in x]
    assert "≠" in line
    assert f"≠ {plain} (demo-test): chrf computed as" in table.stderr and "nw:0" in table.stderr
    markdown = run_cli("leaderboard", "--format", "markdown").stdout
    assert f"≠ `{plain}`: chrf computed as" in markdown


def test_a_tie_between_settings_marks_every_run_of_it(run_cli, tmp_path, write_lines):
    src = write_lines("s", ["one two three", "four five six"])
    ref = write_lines("r", ["uno dos tres", "cuatro cinco seis"])
    assert run_cli("testset", "add", "t", "--src", src, "--ref", ref).exit_code == 0
    args = ["ingest", "--testset", "t", "--hyp", ref, "--no-intervals", "--json"]
    a = json.loads(run_cli(*args, "--model-slug", "a").stdout)[0]["run_id"]
    b = json.loads(run_cli(*args, "--model-slug", "b", "--lowercase").stdout)[0]["run_id"]
    rows = {r["run_id"]: r for r in json.loads(run_cli("leaderboard", "--json").stdout)}
    assert set(rows[a]["signature_differs"]) == set(rows[b]["signature_differs"])
    assert {"bleu", "chrf"} <= set(rows[a]["signature_differs"])


def test_runs_of_one_setting_are_not_marked_across_test_sets(run_cli, demo, write_lines):
    src = write_lines("s", ["one two three", "four five six"])
    ref = write_lines("r", ["uno dos tres", "cuatro cinco seis"])
    assert run_cli("testset", "add", "t", "--src", src, "--ref", ref).exit_code == 0
    other = run_cli(
        "ingest",
        "--testset",
        "t",
        "--hyp",
        ref,
        "--model-slug",
        "x",
        "--no-intervals",
        "--lowercase",
    )
    assert other.exit_code == 0, other.output
    rows = json.loads(run_cli("leaderboard", "--json").stdout)
    assert all(r["signature_differs"] == [] for r in rows)
