"""Output that fits: tables within the width (run ids whole), --wide for every column, progress
lines on stderr when piped, none with --quiet."""

from __future__ import annotations

import json

import pytest

from warehouse.cli import output


@pytest.fixture
def demo(demo_db):
    return demo_db


def test_piped_tables_fit_100_columns_and_keep_run_ids_whole(run_cli, demo):
    ids = [r["run_id"] for r in json.loads(run_cli("runs", "list", "--json").stdout)]
    for args in (("leaderboard",), ("runs", "list")):
        result = run_cli(*args)
        assert result.exit_code == 0
        lines = result.stdout.splitlines()
        assert max(len(line) for line in lines) <= output.PIPED_WIDTH, args
        assert all(any(run_id in line for line in lines) for run_id in ids), args
        assert "--wide shows all" in result.stderr


def test_a_piped_table_follows_columns_when_set(run_cli, demo, monkeypatch):
    monkeypatch.setenv("COLUMNS", "160")
    wider = run_cli("leaderboard")
    assert max(len(line) for line in wider.stdout.splitlines()) > output.PIPED_WIDTH
    assert "TER" in wider.stdout and "fit 160 characters" in wider.stderr


def test_the_leaderboard_ranks_each_test_set_in_its_own_section(run_cli, demo, write_lines):
    src = write_lines("s", ["one", "two"])
    ref = write_lines("r", ["uno", "dos"])
    assert run_cli("testset", "add", "other", "--src", src, "--ref", ref).exit_code == 0
    assert run_cli("ingest", "--testset", "other", "--hyp", ref, "--model-slug", "x").exit_code == 0
    board = run_cli("leaderboard").stdout
    assert "test set demo-test (3 runs)" in board and "test set other (1 run)" in board
    # The ranks start again in each section.
    sections = board.split("test set other")
    assert sections[1].splitlines()[3].startswith("1 ")


def test_wide_prints_every_column(run_cli, demo):
    narrow = run_cli("leaderboard")
    wide = run_cli("--wide", "leaderboard")
    assert "cost-adj" not in narrow.stdout and "cost-adj" in wide.stdout
    assert "Δ TM BLEU" in wide.stdout and "--wide shows all" not in wide.stderr
    assert max(len(line) for line in wide.stdout.splitlines()) > output.PIPED_WIDTH


def test_long_work_reports_progress_when_piped_unless_quiet(
    run_cli, demo, write_lines, monkeypatch
):
    monkeypatch.setattr(output, "PROGRESS_EVERY", 0.001)
    hyp = write_lines("h.txt", (["una frase"] * 40))
    args = ("ingest", "--testset", "demo-test", "--hyp", hyp, "--model-slug", "p")
    shown = run_cli(*args)
    assert shown.exit_code == 0, shown.output
    assert "scoring... (" in shown.stderr
    quiet = run_cli("--quiet", *args, "--replace")
    assert quiet.exit_code == 0 and "scoring..." not in quiet.stderr
