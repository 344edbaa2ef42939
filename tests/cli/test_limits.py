"""Input limits: every hostile input the probe found ends in a clear one-line error, exit 2, and
leaves no warehouse behind (input is checked before the warehouse is opened) — never a hang, a
runaway, or exit 1 "internal error"."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from warehouse.cli.context import MAX_RESAMPLES
from warehouse.cli.main import main
from warehouse.inputs import json_checks

ROOT = Path(__file__).resolve().parents[2]


def _report(**changes: Any) -> dict[str, Any]:
    """A small valid test report, changed by dotted paths (`entries.0.latency_s`)."""
    doc: dict[str, Any] = {
        "model_slug": "m",
        "condition": "c",
        "dataset": {"id": "limits-test", "language_pair": "en-es"},
        "totals": {"prompt_tokens": 10, "completion_tokens": 5, "total_cost_usd": 0.01},
        "scores": {"semantic_score": 0.5},
        "entries": [
            {
                "id": f"s{i}",
                "source": f"source {i}",
                "expected": f"reference {i}",
                "predicted": f"reference {i}",
                "latency_s": 1.0,
                "usage": {"prompt_tokens": 5, "completion_tokens": 2},
                "plugin_metrics": {"p": {"score": 0.5}},
            }
            for i in range(3)
        ],
    }
    for path, value in changes.items():
        *parents, last = path.split(".")
        node: Any = doc
        for key in parents:
            node = node[int(key)] if isinstance(node, list) else node[key]
        node[int(last) if isinstance(node, list) else last] = value
    return doc


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


# (id, JSON text or document, phrase of the one-line error)
BAD_REPORTS: list[tuple[str, Any, str]] = [
    ("nested 10000 deep", '{"model_slug": "m", "x": ' + _nested(10_000) + "}", "levels deep"),
    ("nested 65 deep", '{"model_slug": "m", "x": ' + _nested(64) + "}", "levels deep"),
    (
        "integer 2^63 in totals",
        _report(**{"totals.prompt_tokens": 2**63}),
        "$.totals.prompt_tokens",
    ),
    ("integer 2^64 anywhere", _report(extra=2**64), "$.extra: integer"),
    ("integer -2^63-1", _report(extra=-(2**63) - 1), "$.extra: integer"),
    ("integer 2^70 metric", _report(**{"entries.0.score": 2**70}), "$.entries[0].score"),
    ("integer 5000 digits", '{"model_slug": "m", "x": ' + "9" * 5000 + "}", "$.x: integer"),
    ("usage 2^63", _report(**{"entries.1.usage.completion_tokens": 2**63}), "usage.completion"),
    ("tags [1e999]", '{"model_slug": "m", "tags": [1e999]}', "$.tags[0]: 1e999 is out of range"),
    ("-1e999 deep", '{"model_slug": "m", "a": {"b": [{"c": -1e999}]}}', "$.a.b[0].c"),
    ("NaN", '{"model_slug": "m", "scores": {"x": NaN}}', "$.scores.x: NaN is not allowed"),
    ("Infinity", '{"model_slug": "m", "x": [1, Infinity]}', "$.x[1]: Infinity is not allowed"),
    ("cost 1e300", _report(**{"totals.total_cost_usd": 1e300}), "$.totals.total_cost_usd"),
    ("latency 1e308", _report(**{"entries.0.latency_s": 1e308}), "$.entries[0].latency_s"),
    ("elapsed 1e39", _report(elapsed_seconds=1e39), "$.elapsed_seconds"),
    ("metric 1e39", _report(**{"entries.2.comet": 1e39}), "$.entries[2].comet"),
    ("plugin 1e39", _report(**{"entries.0.plugin_metrics.p.score": -1e39}), "plugin_metrics.p"),
    ("run score 1e39", _report(**{"scores.semantic_score": 1e39}), "$.scores.semantic_score"),
    ("created_at 9999 -05:00", _report(created_at="9999-12-31T23:00:00-05:00"), "$.created_at"),
    ("created_at 0001 +05:00", _report(created_at="0001-01-01T01:00:00+05:00"), "$.created_at"),
    ("dataset id newline", _report(**{"dataset.id": "a\nb"}), "$.dataset.id"),
    ("dataset id ESC", _report(**{"dataset.id": "a\x1b[31mred"}), "$.dataset.id"),
    ("dataset id NUL", _report(**{"dataset.id": "a\x00b"}), "$.dataset.id"),
    ("dataset id 100000 chars", _report(**{"dataset.id": "x" * 100_000}), "$.dataset.id"),
    ("dataset id spaces", _report(**{"dataset.id": " padded "}), "$.dataset.id"),
    ("model slug newline", _report(model_slug="m\nfake line"), "$.model_slug"),
    ("model slug ESC", _report(model_slug="m\x1b]0;title\x07"), "$.model_slug"),
    ("model slug NUL", _report(model_slug="m\x00"), "$.model_slug"),
    ("model slug 300 chars", _report(model_slug="m" * 300), "$.model_slug"),
    ("condition tab", _report(condition="zero\tshot"), "$.condition"),
]


@pytest.mark.parametrize(
    ("case", "content", "phrase"), BAD_REPORTS, ids=[b[0] for b in BAD_REPORTS]
)
def test_bad_report_is_a_one_line_error_naming_file_and_path(tmp_path, case, content, phrase):
    report = tmp_path / "report.json"
    report.write_text(content if isinstance(content, str) else json.dumps(content))
    db = tmp_path / "wh.duckdb"
    result = CliRunner().invoke(main, ["--db", str(db), "ingest", str(report)])
    assert result.exit_code == 2, (case, result.output)
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"error: {report}: ") and phrase in line, line
    assert not db.exists()


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("--model-slug", "m\nfake"),
        ("--model-slug", "m\x1b[2J"),
        ("--model-slug", "x" * 201),
        ("--condition", "c\x00"),
        ("--condition", "c\r"),
    ],
)
def test_labels_with_control_characters_are_refused_on_the_command_line(tmp_path, option, value):
    report = tmp_path / "report.json"
    doc = _report(condition=None)
    if option == "--model-slug":
        doc["model_slug"] = None
    report.write_text(json.dumps(doc))
    db = tmp_path / "wh.duckdb"
    result = CliRunner().invoke(main, ["--db", str(db), "ingest", str(report), option, value])
    assert result.exit_code == 2, result.output
    assert option in result.stderr and not db.exists()


def test_a_valid_report_still_ingests(tmp_path):
    report = tmp_path / "report.json"
    report.write_text(json.dumps(_report(created_at="9999-12-31T23:00:00+00:00")))
    result = CliRunner().invoke(main, ["--db", str(tmp_path / "wh.duckdb"), "ingest", str(report)])
    assert result.exit_code == 0, result.output


def test_oversized_and_bombed_json_are_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(json_checks, "MAX_JSON_BYTES", 10_000)
    monkeypatch.setattr("warehouse.inputs.runcard.MAX_JSON_BYTES", 10_000)
    big = tmp_path / "big.json"
    big.write_text(json.dumps(_report(padding="x" * 20_000)))
    bomb = tmp_path / "bomb.json"
    bomb.write_bytes(gzip.compress(json.dumps(_report(padding=" " * 5_000_000)).encode()))
    assert bomb.stat().st_size < 10_000
    for path, phrase in (
        (big, "the limit for this kind of file is 10,000"),
        (bomb, "decompresses"),
    ):
        result = CliRunner().invoke(
            main, ["--db", str(tmp_path / "wh.duckdb"), "ingest", str(path)]
        )
        assert result.exit_code == 2 and phrase in result.stderr, result.output


# --- Files that are not regular files: refused before a byte is read (never a hang) ---


def _special_inputs(tmp_path: Path) -> dict[str, str]:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    return {"fifo": str(fifo), "/dev/zero": "/dev/zero", "directory": str(tmp_path)}


def _commands(tmp_path: Path, special: str) -> list[list[str]]:
    good = tmp_path / "good.txt"
    good.write_text("a\nb\n")
    return [
        ["ingest", special],
        ["corpus", "add", "c", "--src", special, "--tgt", str(good)],
        ["corpus", "add", "c", "--src", str(good), "--tgt", special],
        ["testset", "add", "t", "--src", str(good), "--ref", special],
        ["testset", "add", "t", "--src", str(good), "--ref", str(good), "--segments-meta", special],
        ["ingest", "--testset", "t", "--hyp", special, "--model-slug", "m"],
    ]


@pytest.mark.parametrize("kind", ["fifo", "/dev/zero", "directory"])
def test_non_regular_input_files_are_refused_at_once(tmp_path, kind):
    special = _special_inputs(tmp_path)[kind]
    db = tmp_path / "wh.duckdb"
    for args in _commands(tmp_path, special):
        # A child process with a deadline: a regression would hang, not fail.
        done = subprocess.run(
            [sys.executable, "-m", "warehouse.cli", "--db", str(db), *args],
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 2, (args, done.stderr)
        assert "internal error" not in done.stderr
        assert "not a regular file" in done.stderr or "directory" in done.stderr, done.stderr
        assert not db.exists()


# --- Runaway resources: thread counts and resample counts are bounded ---


@pytest.mark.parametrize(
    "args",
    [
        ["audit", "--train", "a", "--testset", "b", "--threads", "3000000000"],
        ["audit", "--train", "a", "--testset", "b", "--threads", str((os.cpu_count() or 1) + 1)],
        ["tm-baseline", "--train", "a", "--testset", "b", "--out", "x", "--threads", "99999"],
        ["compare", "a", "b", "--n-bootstrap", "1000000000"],
        ["significance", "a", "b", "--n-bootstrap", str(MAX_RESAMPLES + 1)],
        ["regressions", "--n-bootstrap", "1000000000"],
        ["ingest", "x.json", "--n-bootstrap-ci", "1000000000"],
    ],
    ids=lambda a: " ".join(a[:1] + a[-2:]),
)
def test_runaway_counts_are_usage_errors(tmp_path, args):
    db = tmp_path / "wh.duckdb"
    result = CliRunner().invoke(main, ["--db", str(db), *args])
    assert result.exit_code == 2, result.output
    assert "is not in the range" in result.output + result.stderr
    assert not db.exists()


def _every_command() -> list[tuple[str, Any]]:
    """Every command and subcommand of the click tree, by its full name."""
    import click

    found = []
    ctx = click.Context(main)

    def walk(prefix: str, group: Any) -> None:
        for name in group.list_commands(ctx):
            command = group.get_command(ctx, name)
            found.append((f"{prefix} {name}".strip(), command))
            if isinstance(command, click.Group):
                walk(f"{prefix} {name}", command)

    walk("", main)
    return found


def test_every_integer_option_is_bounded_to_what_the_warehouse_stores():
    import click

    from warehouse.cli.context import INT64_MAX

    checked = 0
    for name, command in [("", main), *_every_command()]:
        for param in command.params:
            kind = param.type
            if isinstance(kind, click.types.IntParamType) or kind is click.INT:
                assert isinstance(kind, click.IntRange), (name, param.name)
                assert kind.min is not None and kind.max is not None, (name, param.name)
                assert kind.max <= INT64_MAX, (name, param.name)
                checked += 1
    assert checked >= 15


@pytest.mark.parametrize(
    "args",
    [
        ["leaderboard", "--limit", str(2**64)],
        ["compare", "a", "b", "--significance", "--seed", str(2**64)],
        ["regressions", "--seed", "-1"],
        ["audit", "--train", "t", "--testset", "d", "--shortlist", str(2**40)],
        ["lake", "maintain", "--keep-days", str(10**9)],
    ],
)
def test_an_integer_beyond_its_range_is_a_usage_error(tmp_path, args):
    result = CliRunner().invoke(main, ["--db", str(tmp_path / "none.duckdb"), *args])
    assert result.exit_code == 2, result.output
    assert "is not in the range" in result.output or "Invalid value" in result.output
    assert not (tmp_path / "none.duckdb").exists()
