"""Judgment sets on stored runs (`tame-wh human add`): scores as worked out by hand, on a file
and on a lake; the same file twice; replacing; every mismatch refused with the warehouse left as
it was; weights as data; deletes cascade."""

from __future__ import annotations

import json
import re
import statistics
from pathlib import Path
from typing import Any

import duckdb
import pytest

from tests.backends import Warehouse
from tests.conftest import snapshot
from tests.mqm import (
    ERRORS,
    SEGMENT_SCORES,
    SOURCES,
    SYSTEM_SCORES,
    TARGETS,
    mqm_lines,
    write_mqm,
)


def _files(tmp_path: Path) -> dict[str, Path]:
    """The sources, the `ref` translations as references, and each system's output."""
    out = {"src": tmp_path / "src.txt"}
    out["src"].write_text("".join(s + "\n" for s in SOURCES.values()), encoding="utf-8")
    for system, lines in TARGETS.items():
        out[system] = tmp_path / f"{system}.txt"
        out[system].write_text("".join(t + "\n" for t in lines), encoding="utf-8")
    return out


def _load(run, tmp_path: Path, systems: tuple[str, ...] = ("A", "B", "C")) -> None:
    """Test set `ts` (references: `ref`) and one run per system."""
    files = _files(tmp_path)
    assert run("testset", "add", "ts", "--src", files["src"], "--ref", files["ref"]).exit_code == 0
    for system in systems:
        done = run("ingest", "--testset", "ts", "--hyp", files[system], "--model-slug", system)
        assert done.exit_code == 0, done.output


def _sql(db: Path) -> Any:
    """A read-only query function on a warehouse file."""

    def query(text: str) -> list[tuple[Any, ...]]:
        con = duckdb.connect(str(db), read_only=True)
        try:
            return con.execute(text).fetchall()
        finally:
            con.close()

    return query


def _only(lines: list[str], systems: set[str]) -> list[str]:
    """The header and the lines of these systems."""
    return [lines[0]] + [x for x in lines[1:] if x.split("\t")[0] in systems]


def _scores(sql) -> tuple[dict[str, float], dict[tuple[str, str], float]]:
    """System and segment MQM scores by model slug (and segment id, the line's 1-based source)."""
    systems = dict(sql("SELECT model_slug, score FROM human_run_scores"))
    keys = {i: k for i, k in enumerate(SOURCES)}
    segments = {
        (slug, keys[idx]): score
        for slug, idx, score in sql(
            "SELECT r.model_slug, g.seg_idx, g.score FROM human_segment_scores g "
            "JOIN runs r USING (run_id)"
        )
    }
    return systems, segments


def test_mqm_scores_equal_the_worked_answers_on_each_backend(warehouse: Warehouse, tmp_path):
    _load(warehouse.run, tmp_path)
    path = write_mqm(tmp_path / "mqm.tsv", _only(mqm_lines(), {"A", "B", "C"}))
    done = warehouse.run("human", "add", path, "--testset", "ts", "--json")
    assert done.exit_code == 0, done.output
    result = json.loads(done.stdout)
    assert (result["added"], result["n_judgments"], result["n_errors"]) == (True, 13, 11)
    systems, segments = _scores(warehouse.sql)
    assert systems == pytest.approx({k: v for k, v in SYSTEM_SCORES.items() if k != "ref"})
    assert segments == pytest.approx({k: v for k, v in SEGMENT_SCORES.items() if k[0] != "ref"})
    spans = warehouse.sql(
        "SELECT r.model_slug, e.category, e.span_start, e.span_end FROM human_errors e "
        "JOIN runs r USING (run_id) WHERE e.seg_idx = 1 AND r.model_slug = 'C' ORDER BY error_idx"
    )
    assert spans == [("C", "Fluency/Grammar", 6, 10), ("C", "Style/Awkward", 0, 5)]
    assert TARGETS["C"][1][6:10] == "rain"
    categories = dict(warehouse.sql(
        "SELECT category, weight FROM human_error_categories e JOIN runs r USING (run_id) "
        "WHERE r.model_slug = 'B'"
    ))  # fmt: skip
    assert categories == pytest.approx(
        {"Fluency/Grammar": 1.0, "Fluency/Punctuation": 0.1, "Non-translation!": 25.0}
    )


def test_the_same_file_again_changes_nothing(run_cli, db_path, tmp_path):
    _load(run_cli, tmp_path)
    path = write_mqm(tmp_path / "mqm.tsv", _only(mqm_lines(), {"A", "B", "C"}))
    assert run_cli("human", "add", path, "--testset", "ts").exit_code == 0
    before = snapshot(db_path)
    again = run_cli("human", "add", path, "--testset", "ts")
    assert again.exit_code == 0 and again.output.startswith("already stored:"), again.output
    assert snapshot(db_path) == before


def test_another_file_of_the_same_name_needs_replace(run_cli, db_path, tmp_path):
    _load(run_cli, tmp_path)
    lines = _only(mqm_lines(), {"A", "B", "C"})
    write_mqm(tmp_path / "mqm.tsv", lines)
    assert run_cli("human", "add", tmp_path / "mqm.tsv", "--testset", "ts").exit_code == 0
    before = snapshot(db_path)
    write_mqm(
        tmp_path / "mqm.tsv", [x for x in lines if "\tC\t" not in x and not x.startswith("C\t")]
    )
    refused = run_cli("human", "add", tmp_path / "mqm.tsv", "--testset", "ts")
    assert refused.exit_code == 2 and "--replace" in refused.output
    assert snapshot(db_path) == before
    replaced = run_cli("human", "add", tmp_path / "mqm.tsv", "--testset", "ts", "--replace")
    assert replaced.exit_code == 0 and "replaced set" in replaced.output
    systems, _ = _scores(_sql(db_path))
    assert set(systems) == {"A", "B"}
    named = run_cli("human", "add", tmp_path / "mqm.tsv", "--testset", "ts", "--name", "second")
    assert named.exit_code == 0, named.output
    listed = json.loads(run_cli("human", "list", "--json").stdout)
    assert [s["name"] for s in listed] == ["mqm.tsv", "second"]


@pytest.mark.parametrize(
    ("edit", "problem"),
    [
        (lambda x: x.replace("</v> evening.", "</v> night."),
         r"mqm\.tsv:\d+: the target of A on segment 12 differs from run \w+'s stored hypothesis "
         r"at character 17"),
        (lambda x: x.replace("\tC\t", "\tC\t").replace("C\tdoc1", "D\tdoc1"),
         r"mqm\.tsv:\d+: system 'D' has no run on test set 'ts'"),
        (lambda x: x.replace("\tMajor", "\tCritical"),
         r"mqm\.tsv:\d+: severity 'Critical' has no MQM weight"),
        (lambda x: x.replace("Heute regnet es in Berlin.", "Morgen regnet es."),
         r"mqm\.tsv:\d+: segment 11 is not in test set 'ts'"),
        (lambda x: x.replace("The dog sleeps in the garden.", "The dog</v> sleeps in the garden."),
         r"mqm\.tsv:\d+: unbalanced <v>…</v> marks in the target"),
    ],
)  # fmt: skip
def test_a_mismatch_is_refused_in_one_line_and_the_warehouse_is_unchanged(
    run_cli, db_path, tmp_path, edit, problem
):
    _load(run_cli, tmp_path)
    lines = _only(mqm_lines(), {"A", "B", "C"})
    path = write_mqm(tmp_path / "mqm.tsv", [lines[0]] + [edit(x) for x in lines[1:]])
    before = snapshot(db_path)
    done = run_cli("human", "add", path, "--testset", "ts")
    assert done.exit_code == 2, done.output
    assert len(done.output.strip().splitlines()) == 1
    assert re.search(problem, done.output), done.output
    assert snapshot(db_path) == before


def test_systems_map_to_runs_or_are_skipped(run_cli, tmp_path):
    _load(run_cli, tmp_path, systems=("A", "B"))
    files = _files(tmp_path)
    assert (
        run_cli("ingest", "--testset", "ts", "--hyp", files["C"], "--model-slug", "sys-c").exit_code
        == 0
    )
    path = write_mqm(tmp_path / "mqm.tsv")
    unknown = run_cli("human", "add", path, "--testset", "ts")
    assert unknown.exit_code == 2 and "--system-map C=RUN, or --skip-system C" in unknown.output
    done = run_cli("human", "add", path, "--testset", "ts", "--system-map", "C=sys-c",
                   "--skip-system", "ref", "--json")  # fmt: skip
    assert done.exit_code == 0, done.output
    result = json.loads(done.stdout)
    assert sorted(result["runs"]) == ["A", "B", "C"] and result["skipped_systems"] == ["ref"]
    bad_map = run_cli("human", "add", path, "--testset", "ts", "--system-map", "Z=sys-c")
    assert bad_map.exit_code == 2 and "Z not in" in bad_map.output


def test_mqm_weights_are_data(run_cli, db_path, tmp_path):
    _load(run_cli, tmp_path)
    lines = _only(mqm_lines(), {"A", "B", "C"})
    path = write_mqm(tmp_path / "mqm.tsv", [x.replace("\tMajor", "\tCritical") for x in lines])
    assert run_cli("human", "add", path, "--testset", "ts").exit_code == 2
    con = duckdb.connect(str(db_path))
    con.execute("INSERT INTO mqm_weights VALUES ('critical', '', 10, 'critical')")
    con.execute("UPDATE mqm_weights SET weight = 2 WHERE severity = 'minor' AND category = ''")
    con.close()
    assert run_cli("human", "add", path, "--testset", "ts").exit_code == 0
    systems = dict(_sql(db_path)("SELECT model_slug, score FROM human_run_scores"))
    # A: minor 2 on 11; segment 12 (10 + 2) / 2 raters; C: 2, 10 + 2, 10, 10.
    assert systems["A"] == pytest.approx((2 + 6) / 4)
    assert systems["C"] == pytest.approx((2 + 12 + 10 + 10) / 4)


def test_deleting_a_run_or_the_test_set_deletes_its_judgments(run_cli, db_path, tmp_path):
    _load(run_cli, tmp_path)
    path = write_mqm(tmp_path / "mqm.tsv", _only(mqm_lines(), {"A", "B", "C"}))
    assert run_cli("human", "add", path, "--testset", "ts").exit_code == 0

    def count(table: str) -> int:
        return int(_sql(db_path)(f"SELECT count(*) FROM {table}")[0][0])

    judged_c = sum(1 for e in ERRORS if e[0] == "C")
    errors_before = count("human_errors")
    assert run_cli("runs", "delete", "C", "--yes").exit_code == 0
    assert count("human_errors") == errors_before - judged_c
    assert count("human_judgments") == 13 - 4
    assert run_cli("testset", "delete", "ts", "--yes").exit_code == 0
    assert (count("human_sets"), count("human_judgments"), count("human_errors")) == (0, 0, 0)


def _jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_esa_and_da_scores_and_da_z_scores(run_cli, db_path, tmp_path):
    """The judgments name segments by the test set's ids (its 0-based line numbers here)."""

    _load(run_cli, tmp_path)
    esa = [{"scheme": "esa", "system": s, "seg_id": k, "rater": "r1", "score": score,
            "errors": [{"severity": "minor", "start": 0, "end": 1}] if score < 90 else []}
           for s, score in (("A", 90), ("B", 60), ("C", 30)) for k in range(4)]  # fmt: skip
    done = run_cli("human", "add", _jsonl(tmp_path / "esa.jsonl", esa), "--testset", "ts",
                   "--format", "jsonl")  # fmt: skip
    assert done.exit_code == 0, done.output
    raters = {"r1": (10, 30, 50), "r2": (80, 85, 90)}  # A, B, C per rater
    da = [{"scheme": "da", "system": s, "seg_id": k, "rater": r, "score": scores[i]}
          for r, scores in raters.items()
          for i, s in enumerate("ABC")
          for k in range(4)]  # fmt: skip
    done = run_cli("human", "add", _jsonl(tmp_path / "da.jsonl", da), "--testset", "ts",
                   "--format", "jsonl")  # fmt: skip
    assert done.exit_code == 0, done.output
    rows = _sql(db_path)(
        "SELECT set_name, model_slug, score, z FROM human_run_scores ORDER BY set_name, model_slug"
    )
    by = {(name, slug): (score, z) for name, slug, score, z in rows}
    assert [by[("esa.jsonl", s)][0] for s in "ABC"] == [90, 60, 30]
    assert [by[("da.jsonl", s)][0] for s in "ABC"] == [45, 57.5, 70]
    # Each rater's z over their 12 scores (4 segments each of A, B, C), then the mean of raters.

    def z(values, value):
        return (value - statistics.mean(values)) / statistics.stdev(values)

    r1 = [v for v in raters["r1"] for _ in SOURCES]
    r2 = [v for v in raters["r2"] for _ in SOURCES]
    for i, s in enumerate("ABC"):
        expected = (z(r1, raters["r1"][i]) + z(r2, raters["r2"][i])) / 2
        assert by[("da.jsonl", s)][1] == pytest.approx(expected)


def test_ids_counted_from_one_are_named_as_such_and_seg_id_base_maps_them(
    run_cli, db_path, tmp_path
):
    # The public WMT MQM files number segments from 1; a test set from plain files from 0.
    _load(run_cli, tmp_path)
    shifted = {seg: str(i + 1) for i, seg in enumerate(SOURCES)}
    lines = [mqm_lines()[0]]
    for line in _only(mqm_lines(), {"A", "B", "C"})[1:]:
        cells = line.split("\t")
        cells[3] = shifted[cells[3]]
        lines.append("\t".join(cells))
    path = write_mqm(tmp_path / "mqm.tsv", lines)
    before = snapshot(db_path)
    refused = run_cli("human", "add", path, "--testset", "ts")
    assert refused.exit_code == 2, refused.output
    assert "the file's seg_ids are the line numbers of test set 'ts' plus 1" in refused.stderr
    assert "add --seg-id-base 1" in refused.stderr
    assert snapshot(db_path) == before
    done = run_cli("human", "add", path, "--testset", "ts", "--seg-id-base", "1", "--json")
    assert done.exit_code == 0, done.output
    systems, segments = _scores(_sql(db_path))
    assert systems == pytest.approx({k: v for k, v in SYSTEM_SCORES.items() if k != "ref"})
    assert segments == pytest.approx({k: v for k, v in SEGMENT_SCORES.items() if k[0] != "ref"})
