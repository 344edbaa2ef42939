"""`tame-wh ingest --mqm`: an annotation file alone becomes a test set, one run per system and
the judgments, in one transaction; anything inconsistent is refused with nothing written."""

from __future__ import annotations

import json
import re

import duckdb
import pytest

from tests.conftest import snapshot
from tests.mqm import SOURCES, SYSTEM_SCORES, TARGETS, mqm_lines, write_mqm


def _rows(db, query: str) -> list[tuple]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(query).fetchall()
    finally:
        con.close()


def test_an_mqm_file_becomes_a_test_set_runs_and_judgments(run_cli, db_path, tmp_path):
    path = write_mqm(tmp_path / "mqm.tsv")
    done = run_cli("ingest", "--mqm", path, "--reference-system", "ref", "--testset", "demo-mqm",
                   "--json")  # fmt: skip
    assert done.exit_code == 0, done.output
    result = json.loads(done.stdout)
    assert result["test_set"] == "demo-mqm" and result["test_set_added"] is True
    assert sorted(r["model_slug"] for r in result["runs"]) == ["A", "B", "C"]
    assert result["judgments"]["skipped_systems"] == ["ref"]
    segments = _rows(db_path, "SELECT seg_key, src, refs FROM segments ORDER BY seg_idx")
    assert segments == [
        (k, s, [r]) for (k, s), r in zip(SOURCES.items(), TARGETS["ref"], strict=True)
    ]
    hyps = _rows(db_path, "SELECT r.model_slug, h.hyp FROM hypotheses h JOIN runs r USING (run_id) "
                          "ORDER BY r.model_slug, h.seg_idx")  # fmt: skip
    assert hyps == [(s, t) for s in "ABC" for t in TARGETS[s]]
    systems = dict(_rows(db_path, "SELECT model_slug, score FROM human_run_scores"))
    assert systems == pytest.approx({s: SYSTEM_SCORES[s] for s in "ABC"})


def test_its_runs_score_as_plain_ingests_of_the_same_text(run_cli, db_path, tmp_path):
    assert run_cli("ingest", "--mqm", write_mqm(tmp_path / "mqm.tsv"), "--reference-system",
                   "ref", "--testset", "from-mqm").exit_code == 0  # fmt: skip
    files = {}
    for name, lines in {"src": list(SOURCES.values()), **TARGETS}.items():
        files[name] = tmp_path / f"{name}.txt"
        files[name].write_text("".join(x + "\n" for x in lines), encoding="utf-8")
    # In a warehouse of its own: the same texts are one test set per warehouse.
    plain = tmp_path / "plain.duckdb"
    added = run_cli("testset", "add", "plain", "--src", files["src"], "--ref", files["ref"],
                    db=plain)  # fmt: skip
    assert added.exit_code == 0, added.output
    ingested = run_cli("ingest", "--testset", "plain", "--hyp", files["B"], "--model-slug", "B",
                       db=plain)  # fmt: skip
    assert ingested.exit_code == 0, ingested.output
    sql = (
        "SELECT s.bleu, s.chrf_plus_plus, s.ter FROM run_surface s JOIN runs r USING (run_id) "
        "WHERE r.model_slug = 'B'"
    )
    assert _rows(db_path, sql) == _rows(plain, sql)


def test_the_same_file_again_changes_nothing(run_cli, db_path, tmp_path):
    path = write_mqm(tmp_path / "mqm.tsv")
    args = ("ingest", "--mqm", path, "--reference-system", "ref", "--testset", "t")
    assert run_cli(*args).exit_code == 0
    before = snapshot(db_path)
    again = run_cli(*args)
    assert again.exit_code == 0 and "already stored:" in again.output, again.output
    assert snapshot(db_path) == before


@pytest.mark.parametrize(
    ("lines", "args", "problem"),
    [
        (None, ("--reference-system", "nobody"),
         "--reference-system: 'nobody' is not a system of"),
        ([x for x in mqm_lines() if not x.startswith("C\tdoc1\t1\t12")], (),
         r"system C has no judged target for segment 12 \(1 of 4 missing\)"),
        ([x.replace("Wir trinken Tee am Abend.", "Wir trinken.") if x.startswith("B") else x
          for x in mqm_lines()], (), "segment 12's source differs from an earlier line's"),
        (None, ("--hyp", "x.txt"), "--mqm builds its runs from the file; drop --hyp"),
        (None, ("--gate",), "drop --gate"),
    ],
)  # fmt: skip
def test_an_inconsistent_file_or_call_is_refused_with_nothing_written(
    run_cli, db_path, tmp_path, lines, args, problem
):
    (tmp_path / "x.txt").write_text("x\n", encoding="utf-8")
    path = write_mqm(tmp_path / "mqm.tsv", lines)
    reference = () if "--reference-system" in args else ("--reference-system", "ref")
    before = snapshot(db_path)
    done = run_cli("ingest", "--mqm", path, *reference, "--testset", "t",
                   *[str(tmp_path / a) if a == "x.txt" else a for a in args])  # fmt: skip
    assert done.exit_code == 2, done.output
    assert len(done.output.strip().splitlines()) == 1
    assert re.search(problem, done.output), done.output
    assert snapshot(db_path) == before


def test_a_test_set_name_taken_by_other_segments_is_refused(run_cli, db_path, tmp_path):
    src = tmp_path / "s.txt"
    src.write_text("one\ntwo\n", encoding="utf-8")
    assert run_cli("testset", "add", "t", "--src", src, "--ref", src).exit_code == 0
    before = snapshot(db_path)
    done = run_cli("ingest", "--mqm", write_mqm(tmp_path / "mqm.tsv"), "--reference-system", "ref",
                   "--testset", "t")  # fmt: skip
    assert done.exit_code == 2 and "already exists with other segments" in done.output
    assert snapshot(db_path) == before


def test_mqm_needs_its_companions(run_cli, tmp_path):
    path = write_mqm(tmp_path / "mqm.tsv")
    done = run_cli("ingest", "--mqm", path, "--testset", "t")
    assert done.exit_code == 2 and "--mqm needs --reference-system and --testset" in done.output


def test_a_repeated_line_doubles_no_penalty_and_strict_refuses_it(run_cli, db_path, tmp_path):
    lines = mqm_lines()
    path = write_mqm(tmp_path / "mqm.tsv", [*lines, lines[13]])  # B/13's Major 25 once more
    done = run_cli("ingest", "--mqm", path, "--reference-system", "ref", "--testset", "demo-mqm")
    assert done.exit_code == 0, done.output
    assert "warning: " in done.stderr and "1 judgment line(s) repeat an earlier one" in done.stderr
    systems = dict(_rows(db_path, "SELECT model_slug, score FROM human_run_scores"))
    assert systems == pytest.approx({s: SYSTEM_SCORES[s] for s in "ABC"})
    before = snapshot(db_path)
    strict = run_cli("ingest", "--mqm", path, "--reference-system", "ref", "--testset", "other",
                     "--strict")  # fmt: skip
    assert strict.exit_code == 2 and "repeats line 14" in strict.output, strict.output
    assert snapshot(db_path) == before
    assert run_cli("ingest", "x.json", "--strict").exit_code == 2


def test_the_test_set_an_mqm_file_creates_takes_its_language_labels(run_cli, tmp_path):
    done = run_cli("ingest", "--mqm", write_mqm(tmp_path / "mqm.tsv"), "--reference-system", "ref",
                   "--testset", "t", "--src-lang", "de", "--tgt-lang", "en")  # fmt: skip
    assert done.exit_code == 0, done.output
    shown = json.loads(run_cli("testset", "show", "t", "--json").stdout)
    assert (shown["src_lang"], shown["tgt_lang"]) == ("de", "en")
    plain = run_cli("ingest", "--testset", "t", "--hyp", tmp_path / "mqm.tsv", "--model-slug",
                    "x", "--src-lang", "de")  # fmt: skip
    assert plain.exit_code == 2 and "label the test set --mqm creates" in plain.stderr
