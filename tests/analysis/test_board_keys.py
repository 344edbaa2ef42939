"""Boards that show their key: in a narrow table the run, model, condition and the column the board
is sorted by (a human score too) stay; a composite resting on few of its profile's metrics says
which; the text report shows the run's human score and tie group."""

from __future__ import annotations

from tests.mqm import copy_judged


def _header(output: str) -> str:
    """The table's header line."""
    return next(line for line in output.splitlines() if "┃" in line)


def test_a_narrow_board_keeps_its_key_columns(run_cli, db_path, tmp_path, monkeypatch):
    copy_judged(run_cli, tmp_path, db_path)
    monkeypatch.setenv("COLUMNS", "60")
    by_mqm = run_cli("leaderboard", "--testset", "t", "--sort", "mqm")
    assert by_mqm.exit_code == 0, by_mqm.output
    header = _header(by_mqm.stdout)
    for column in ("run", "model", "condition", "MQM"):
        assert column in header, header
    assert "composite" not in header  # left out first: the board is not sorted by it
    by_bleu = run_cli("leaderboard", "--testset", "t", "--sort", "bleu")
    header = _header(by_bleu.stdout)
    assert "BLEU" in header and "model" in header and "condition" in header, header
    assert "MQM" in header, header  # people's score stays beside any sort key
    assert "these runs carry human scores: --sort mqm" in by_bleu.stderr
    assert "carry human scores" not in by_mqm.stderr
    assert "composite (profile B): rests on chrF++ and exact match alone" in by_bleu.stderr


def test_the_text_report_shows_the_human_score_and_the_tie_group(run_cli, db_path, tmp_path):
    copy_judged(run_cli, tmp_path, db_path)
    stored = run_cli("leaderboard", "--testset", "t", "--clusters", "--store")
    assert stored.exit_code == 0, stored.output
    report = run_cli("report", "A")
    assert report.exit_code == 0, report.output
    assert "human MQM (lower is better): 1.000" in report.stdout
    assert "tie group: cluster" in report.stdout and "of 3 runs (chrf_plus_plus" in report.stdout
