"""`tame-wh export`: one record per run and segment, equal to what is stored, readable back in
each format; the hypotheses round-trip through an ingest to the same run."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest
import sacrebleu

from warehouse import Warehouse
from warehouse.analysis.export import EXPORT_COLUMNS


@pytest.fixture
def demo(demo_db):
    return demo_db


def _jsonl(run_cli, *args: str) -> list[dict]:
    done = run_cli("export", *args)
    assert done.exit_code == 0, done.output
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_a_runs_records_hold_its_text_scores_metrics_and_exposure(run_cli, demo):
    records = _jsonl(run_cli, "demo-small/few-shot")
    assert len(records) == 40 and list(records[0]) == list(EXPORT_COLUMNS)
    with Warehouse.open(demo, access="read") as wh:
        stored = {r["seg_idx"]: r for r in wh.query(
            "SELECT h.seg_idx, h.hyp, x.bin FROM hypotheses h JOIN runs r USING (run_id) "
            "JOIN exposures x ON x.seg_idx = h.seg_idx WHERE r.model_slug = 'demo-small' "
            "AND r.condition = 'few-shot'"
        )}  # fmt: skip
    for record in records:
        row = stored[record["seg_idx"]]
        assert record["hypothesis"] == row["hyp"] and record["bin"] == row["bin"]
        expected = sacrebleu.sentence_chrf(record["hypothesis"], record["references"], word_order=2)
        assert record["chrf_plus_plus"] == pytest.approx(expected.score)
    assert any(r["metrics"] for r in records)  # the demo's per-entry plugin metric


def test_hypotheses_round_trip_through_an_ingest_to_the_same_run(run_cli, demo, tmp_path):
    records = _jsonl(run_cli, "demo-large")
    hyp = tmp_path / "back.hyp"
    hyp.write_text("".join(r["hypothesis"] + "\n" for r in records), encoding="utf-8")
    again = run_cli("ingest", "--testset", "demo-test", "--hyp", hyp, "--model-slug",
                    "demo-large", "--condition", "zero-shot", "--json")  # fmt: skip
    assert again.exit_code == 0, again.output
    [result] = json.loads(again.stdout)
    assert result["action"] == "unchanged" and result["run_id"] == records[0]["run_id"]


def test_tsv_and_parquet_hold_the_same_records(run_cli, demo, tmp_path):
    records = _jsonl(run_cli, "--testset", "demo-test")
    assert len({r["run_id"] for r in records}) == 3 and len(records) == 120
    tsv = run_cli("export", "--testset", "demo-test", "--format", "tsv").stdout.splitlines()
    assert tsv[0].split("\t") == list(EXPORT_COLUMNS) and len(tsv) == 121
    first = dict(zip(EXPORT_COLUMNS, tsv[1].split("\t"), strict=True))
    assert first["hypothesis"] == records[0]["hypothesis"]
    out = tmp_path / "runs.parquet"
    written = run_cli("export", "--testset", "demo-test", "--format", "parquet", "--out", out,
                      "--json")  # fmt: skip
    assert json.loads(written.stdout)["records"] == 120
    table = pq.read_table(out)
    assert table.column_names == list(EXPORT_COLUMNS)
    assert table.column("hypothesis").to_pylist() == [r["hypothesis"] for r in records]


def test_runs_named_with_their_test_set_are_the_runs_of_those_models_on_it(run_cli, demo):
    both = {r["run_id"] for r in _jsonl(run_cli, "demo-large", "--testset", "demo-test")}
    alone = {r["run_id"] for r in _jsonl(run_cli, "demo-large")}
    assert both == alone and len(both) == 1


def test_tsv_cells_escape_tabs_and_backslashes(run_cli, write_lines, db_path):
    assert run_cli("testset", "add", "t", "--src", write_lines("s", ["a", "b"]),
                   "--ref", write_lines("r", ["x", "y"])).exit_code == 0  # fmt: skip
    hyp = write_lines("h", ["one\ttwo", "back\\slash"])
    assert run_cli("ingest", "--testset", "t", "--hyp", hyp, "--model-slug", "m").exit_code == 0
    lines = run_cli("export", "m", "--format", "tsv").stdout.splitlines()
    cells = [dict(zip(EXPORT_COLUMNS, line.split("\t"), strict=True)) for line in lines[1:]]
    assert [c["hypothesis"] for c in cells] == ["one\\ttwo", "back\\\\slash"]


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        ((), "name the runs to export, or --testset NAME"),
        (("demo-large", "--testset", "nosuch"), "unknown test set 'nosuch'"),
        (("--testset", "demo-test", "--format", "parquet"), "--format parquet writes a file"),
        (("nosuchrun",), "nosuchrun"),
    ],
)
def test_a_wrong_request_is_refused_in_one_line(run_cli, demo, args, problem):
    done = run_cli("export", *args)
    assert done.exit_code == 2 and problem in done.output, done.output


def test_an_lm_eval_export_ingests_back_as_the_same_run(run_cli, write_lines, tmp_path):
    # Two references, hypotheses with leading and trailing spaces, and an id per segment.
    src = write_lines("s", ["one", "two", "three"])
    refs = [write_lines("r1", ["uno", "dos", "tres"]), write_lines("r2", ["un", "deux", "trois"])]
    meta = tmp_path / "meta.jsonl"
    meta.write_text("".join(json.dumps({"id": f"s-{i}"}) + "\n" for i in range(3)), "utf-8")
    added = run_cli("testset", "add", "t", "--src", src, "--ref", refs[0], "--ref", refs[1],
                    "--src-lang", "en", "--tgt-lang", "es", "--segments-meta", meta)  # fmt: skip
    assert added.exit_code == 0, added.output
    hyp = write_lines("h", [" uno", "dos ", "  tres"])
    first = run_cli("ingest", "--testset", "t", "--hyp", hyp, "--model-slug", "m", "--json")
    [stored] = json.loads(first.stdout)
    out = tmp_path / "logs"
    assert run_cli("export", "m", "--format", "lm-eval", "--out", out).exit_code == 0
    [log] = sorted(out.rglob("*.jsonl"))
    again = run_cli("ingest", "--from", "lm-eval", log, "--json")
    assert again.exit_code == 0, again.output
    [back] = json.loads(again.stdout)
    assert (back["action"], back["run_id"], back["test_set"]) == (
        "unchanged",
        stored["run_id"],
        "t",
    )
    assert not back["test_set_created"]


@pytest.mark.parametrize("fmt", ["jsonl", "tsv", "parquet"])
def test_each_export_format_ingests_back_as_the_same_run(run_cli, write_lines, tmp_path, fmt):
    src = write_lines("s", ["one", "two", "three", "four", "five"])
    ref = write_lines("r", ["uno", "dos", "tres", "cuatro", "cinco"])
    assert run_cli("testset", "add", "t", "--src", src, "--ref", ref).exit_code == 0
    # Leading and trailing spaces, tabs, a backslash, an empty hypothesis.
    hyp = write_lines("h", [" uno", "dos ", "\tt\tres", "cua\\tro", ""])
    [stored] = json.loads(
        run_cli("ingest", "--testset", "t", "--hyp", hyp, "--model-slug", "m", "--json").stdout
    )
    out = tmp_path / f"m.{fmt}"
    done = run_cli("export", "m", "--format", fmt, "--out", out)
    assert done.exit_code == 0, done.output
    again = run_cli("ingest", "--from", fmt, out, "--testset", "t", "--hyp-col", "hypothesis",
                    "--id-col", "seg_id", "--model-slug", "m", "--json")  # fmt: skip
    assert again.exit_code == 0, again.output
    [back] = json.loads(again.stdout)
    assert (back["action"], back["run_id"]) == ("unchanged", stored["run_id"])
