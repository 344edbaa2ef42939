"""`tame-wh audit` end to end: exposures equal brute force; bins, TM and GenGap equal sacrebleu."""

from __future__ import annotations

import json
import random
from pathlib import Path

import duckdb
import pytest
from sacrebleu.metrics import BLEU, CHRF

from tests.conftest import snapshot
from tests.exposure.audited import loaded_warehouse
from tests.exposure.brute_force import BruteForce
from tests.exposure.synthetic_corpus import make_corpus
from warehouse import Warehouse
from warehouse.analysis.leaderboard import leaderboard
from warehouse.analysis.report import build_report
from warehouse.exposure.audit import run_audit
from warehouse.exposure.config import AuditConfig
from warehouse.exposure.normalize import normalize_many
from warehouse.exposure.summary import choose_audit, tm_hypotheses
from warehouse.exposure.udf import register_training_corpus
from warehouse.ingest.prepare import prepare_from_files
from warehouse.ingest.write import write_runs
from warehouse.inputs.corpus_files import read_test_set, read_training_corpus
from warehouse.store.corpora import add_corpus
from warehouse.store.schema import open_warehouse

EXPOSURE_COLUMNS = (
    "source_exposure, source_nn, source_exact, target_exposure, target_nn, target_ref_idx, "
    "target_exact, pair_exposure, pair_nn, pair_exact, tm_hyp_idx, bin"
)


@pytest.fixture
def corpus():
    return make_corpus(n_train=300, n_test=60, seed=11, n_refs=2)


@pytest.fixture
def loaded(db_path, write_lines, corpus):
    """A warehouse with the synthetic corpus registered as `train` and `test`."""
    con = loaded_warehouse(db_path, write_lines, corpus)
    yield con
    con.close()


def _exposures(con, audit_id):
    return con.execute(
        f"SELECT {EXPOSURE_COLUMNS} FROM exposures WHERE audit_id = ? ORDER BY seg_idx", [audit_id]
    ).fetchall()


@pytest.mark.parametrize("measure", ["jaccard", "containment"])
def test_stored_exposures_equal_brute_force(loaded, corpus, measure):
    result = run_audit(loaded, "train", "test", AuditConfig(measure=measure))
    assert result.action == "computed" and result.n_segments == 60
    train = normalize_many(corpus.train_src), normalize_many(corpus.train_tgt)
    brute = BruteForce(*train, measure=measure)
    rows = _exposures(loaded, result.audit_id)
    assert len(rows) == 60
    for row, src, refs in zip(rows, corpus.test_src, corpus.test_refs, strict=True):
        want = brute.exposure(normalize_many([src])[0], normalize_many(refs))
        assert row[0] == pytest.approx(float(want.source_exposure), abs=1e-12)
        assert row[1:3] == (want.source_nn, want.source_exact)
        assert row[3] == pytest.approx(float(want.target_exposure), abs=1e-12)
        assert row[4:7] == (want.target_nn, want.target_ref_idx, want.target_exact)
        assert row[7] == pytest.approx(float(want.pair_exposure), abs=1e-12)
        assert row[8:10] == (want.pair_nn, want.pair_exact)
        assert row[10] == want.source_nn
        expected_bin = (
            "source_exact"
            if want.source_exact
            else "near"
            if want.source_exposure >= 0.7
            else "medium"
            if want.source_exposure >= 0.3
            else "far"
        )
        assert row[11] == expected_bin


def test_identical_audit_is_a_no_op_and_force_recomputes(loaded):
    first = run_audit(loaded, "train", "test")
    again = run_audit(loaded, "train", "test")
    assert again.action == "unchanged" and again.audit_id == first.audit_id
    forced = run_audit(loaded, "train", "test", force=True)
    assert forced.action == "recomputed"
    assert loaded.execute("SELECT count(*) FROM audits").fetchone() == (1,)
    assert loaded.execute("SELECT count(*) FROM exposures").fetchone() == (60,)
    other = run_audit(loaded, "train", "test", AuditConfig(near=0.8))
    assert other.audit_id != first.audit_id


def test_an_audit_failing_mid_search_keeps_its_error_the_data_and_duckdb_threads(loaded):
    first = run_audit(loaded, "train", "test")
    loaded.execute("SET threads = 3")  # not the 1 the search runs with
    threads = loaded.execute("SELECT current_setting('threads')").fetchone()[0]

    def interrupted(_done: int, _total: int) -> None:
        raise RuntimeError("stopped by the progress callback")

    # DuckDB reports the UDF's exception as its own error, with the original message.
    with pytest.raises(duckdb.Error, match="stopped by the progress callback"):
        run_audit(loaded, "train", "test", force=True, progress=interrupted)
    assert loaded.execute("SELECT current_setting('threads')").fetchone()[0] == threads
    assert loaded.execute("SELECT audit_id FROM audits").fetchall() == [(first.audit_id,)]
    assert len(_exposures(loaded, first.audit_id)) == 60


def test_summary_matches_the_stored_exposures(loaded):
    result = run_audit(loaded, "train", "test")
    doc = result.to_dict()
    assert doc["format"] == 1
    values = sorted(
        v
        for (v,) in loaded.execute(
            "SELECT pair_exposure FROM exposures WHERE audit_id = ?", [result.audit_id]
        ).fetchall()
    )
    pair = next(s for s in doc["sides"] if s["side"] == "pair")
    share = sum(v >= 0.85 for v in values) / len(values)
    assert pair["at_or_above"]["0.85"] == pytest.approx(share)
    assert doc["pair_leak"]["0.85"] == pytest.approx(share)
    assert pair["max"] == pytest.approx(values[-1])
    import numpy as np

    assert pair["p25"] == pytest.approx(float(np.percentile(values, 25)))
    assert sum(b["n_segments"] for b in doc["bins"]) == 60
    assert [b["bin"] for b in doc["bins"]] == ["source_exact", "near", "medium", "far"]
    assert result.signature.startswith("tame-wh:") and "mode:exact" in result.signature
    assert "sacrebleu:2.6" in result.signature


def test_bins_tm_and_gengap_equal_sacrebleu_on_the_same_subsets(loaded, corpus, tmp_path, db_path):
    hyps = [
        refs[0] if i % 3 else refs[0].split(" ", 1)[-1] for i, refs in enumerate(corpus.test_refs)
    ]
    path = tmp_path / "hyp.txt"
    path.write_text("".join(h + "\n" for h in hyps))
    run = prepare_from_files(db_path, testset="test", hyp_path=path, model_slug="m")
    [ingested] = write_runs(loaded, [run])
    audit = run_audit(loaded, "train", "test")
    tm = tm_hypotheses(loaded, audit.audit_id)
    bins = dict(
        loaded.execute(
            "SELECT seg_idx, bin FROM exposures WHERE audit_id = ?", [audit.audit_id]
        ).fetchall()
    )
    rows = loaded.execute(
        "SELECT bin, n_segments, bleu, chrf_plus_plus, tm_bleu, tm_chrf_plus_plus FROM run_bins "
        "WHERE run_id = ? AND audit_id = ?",
        [ingested.run_id, audit.audit_id],
    ).fetchall()
    streams = corpus.refs_by_stream()
    scores = {}
    for name, n, bleu, chrf, tm_bleu, tm_chrf in rows:
        idx = [i for i in range(60) if name == "all" or bins[i] == name]
        assert n == len(idx)
        if not idx:
            assert bleu is None and tm_bleu is None
            continue
        sub_refs = [[s[i] for i in idx] for s in streams]
        for ours, text in ((bleu, hyps), (tm_bleu, tm)):
            want = BLEU(tokenize="13a").corpus_score([text[i] for i in idx], sub_refs).score
            assert ours == pytest.approx(want, abs=1e-9)
        for ours, text in ((chrf, hyps), (tm_chrf, tm)):
            want = CHRF(word_order=2).corpus_score([text[i] for i in idx], sub_refs).score
            assert ours == pytest.approx(want, abs=1e-9)
        scores[name] = (bleu, tm_bleu)
    gengap = loaded.execute(
        "SELECT gengap_bleu, tm_gengap_bleu FROM run_exposure WHERE run_id = ?", [ingested.run_id]
    ).fetchone()
    if scores.get("near", (None,))[0] is not None and scores.get("far", (None,))[0] is not None:
        assert gengap[0] == pytest.approx(scores["near"][0] - scores["far"][0])
        assert gengap[1] == pytest.approx(scores["near"][1] - scores["far"][1])
    else:
        assert gengap == (None, None)


def test_gengap_is_null_when_a_bin_is_empty(loaded, tmp_path, corpus, db_path):
    path = tmp_path / "hyp.txt"
    path.write_text("".join(r[0] + "\n" for r in corpus.test_refs))
    db = loaded.execute("PRAGMA database_list").fetchone()[2]
    [run] = write_runs(
        loaded, [prepare_from_files(db, testset="test", hyp_path=path, model_slug="m")]
    )
    run_audit(loaded, "train", "test", AuditConfig(near=1.0, far=1.0))  # nothing is near
    gengap = loaded.execute(
        "SELECT gengap_bleu, gengap_chrf FROM run_exposure WHERE run_id = ?", [run.run_id]
    ).fetchone()
    assert gengap == (None, None)


def test_tm_baseline_cli_writes_neighbour_targets(run_cli, loaded, corpus, tmp_path, db_path):
    loaded.close()
    out = tmp_path / "tm.txt"
    result = run_cli("tm-baseline", "--train", "train", "--testset", "test", "--out", out)
    assert result.exit_code == 0, result.output
    lines = out.read_text().split("\n")[:-1]
    con = duckdb.connect(str(db_path), read_only=True)
    nn = [n for (n,) in con.execute("SELECT source_nn FROM exposures ORDER BY seg_idx").fetchall()]
    assert lines == [corpus.train_tgt[j] if j is not None else "" for j in nn]


def test_unmatched_segment_gets_empty_or_source_tm_hypothesis(db_path, write_lines):
    con = open_warehouse(db_path)
    add_corpus(
        con,
        read_training_corpus(
            "tr", write_lines("s", ["aaaa bbbb"]), write_lines("t", ["AAAA BBBB"])
        ),
    )
    add_corpus(
        con,
        read_test_set(
            "te", write_lines("q", ["zzzz", "aaaa bbbb"]), [write_lines("r", ["ZZZZ", "AAAA BBBB"])]
        ),
    )
    empty = run_audit(con, "tr", "te")
    assert tm_hypotheses(con, empty.audit_id) == ["", "AAAA BBBB"]
    source = run_audit(con, "tr", "te", AuditConfig(tm_zero_policy="source"))
    assert tm_hypotheses(con, source.audit_id) == ["zzzz", "AAAA BBBB"]
    row = con.execute(
        "SELECT source_exposure, source_nn, pair_nn FROM exposures "
        "WHERE audit_id = ? AND seg_idx = 0",
        [empty.audit_id],
    ).fetchone()
    assert row == (0.0, None, None)


def test_udfs_can_be_registered_and_used_in_plain_sql(loaded, corpus):
    audit = run_audit(loaded, "train", "test")
    register_training_corpus(loaded, "train")
    ours = loaded.execute(
        "SELECT s.seg_idx, tame_source_nn(s.src) AS src, tame_target_nn(s.refs) AS tgt, "
        "tame_pair_nn(s.src, s.refs) AS pair FROM segments s JOIN corpora c USING (corpus_id) "
        "WHERE c.name = 'test' ORDER BY s.seg_idx"
    ).fetchall()
    stored = _exposures(loaded, audit.audit_id)
    for (_i, src, tgt, pair), row in zip(ours, stored, strict=True):
        assert (src["exposure"], src["nn"], src["exact"]) == row[0:3]
        assert (tgt["exposure"], tgt["nn"], tgt["ref_idx"], tgt["exact"]) == row[3:7]
        assert (pair["exposure"], pair["nn"], pair["exact"]) == row[7:10]


def test_fast_mode_stores_its_validation_and_warns(loaded):
    result = run_audit(loaded, "train", "test", AuditConfig(mode="fast", validate_sample=25))
    assert result.mode == "fast"
    assert result.validation["sample_size"] == 25 and result.validation["seed"] == 12345
    assert 0 <= result.validation["top1_agreement"] <= 1
    assert any("approximate retrieval" in w for w in result.warnings)
    stored = json.loads(loaded.execute("SELECT validation FROM audits").fetchone()[0])
    assert stored == result.validation
    exact = run_audit(loaded, "train", "test")
    pairs = loaded.execute(
        "SELECT f.source_exposure <= e.source_exposure + 1e-12, f.source_exact = e.source_exact "
        "FROM exposures f JOIN exposures e USING (seg_idx) WHERE f.audit_id = ? AND e.audit_id = ?",
        [result.audit_id, exact.audit_id],
    ).fetchall()
    assert all(a and b for a, b in pairs)


def test_warnings_name_small_far_bin_pair_leak_and_exact_pairs(db_path, write_lines):
    con = open_warehouse(db_path)
    train = ["the cat sat on the mat", "a dog ran in the park", "birds fly south in winter"]
    targets = ["el gato", "un perro", "los pájaros"]
    add_corpus(con, read_training_corpus("tr", write_lines("s", train), write_lines("t", targets)))
    add_corpus(
        con,
        read_test_set(
            "te",
            write_lines("q", [train[0], "something else entirely"]),
            [write_lines("r", [targets[0], "otra cosa"])],
        ),
    )
    warnings = run_audit(con, "tr", "te").warnings
    assert any(w.startswith("far bin has") for w in warnings)
    assert any(w.startswith("PairLeak@0.85 is 50.0%") for w in warnings)
    assert any("1 test pair(s) occur verbatim" in w for w in warnings)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--near", "0.2", "--far", "0.5"], "--far (0.5) must not exceed --near (0.2)"),
        (["--near", "1.5"], "--near: thresholds must be finite numbers in [0, 1]"),
        (["--far", "nan"], "--far: thresholds must be finite"),
        (["--near", "inf"], "--near: thresholds must be finite"),
        (["--orders", "0,3"], "--orders: gram orders must be whole numbers >= 1"),
        (["--orders", "a,b"], "--orders: expected comma-separated whole numbers"),
        (["--orders", "3,3"], "--orders: repeated gram order"),
        (["--leak", "0.9,0.8,0.95"], "--leak: thresholds must be ascending"),
        (["--leak", "0.5,0.6"], "--leak: expected three thresholds"),
        (["--validate-sample", "5"], "--validate-sample only applies to --mode fast"),
        (["--mode", "fast", "--shortlist", "0"], "0 is not in the range 1<=x"),
        (["--measure", "cosine"], "'cosine' is not one of 'jaccard', 'containment'"),
    ],
)
def test_bad_audit_options_exit_2_and_change_nothing(run_cli, loaded, db_path, args, message):
    loaded.close()
    before = snapshot(db_path)
    result = run_cli("audit", "--train", "train", "--testset", "test", *args)
    assert result.exit_code == 2, result.output
    assert message in result.stderr
    assert snapshot(db_path) == before


def test_unknown_corpora_are_usage_errors(run_cli, loaded):
    loaded.close()
    result = run_cli("audit", "--train", "test", "--testset", "test")
    assert result.exit_code == 2 and "unknown training corpus 'test'" in result.stderr


def test_audit_cli_json_is_a_stable_document(run_cli, loaded):
    loaded.close()
    doc = json.loads(run_cli("audit", "--train", "train", "--testset", "test", "--json").stdout)
    assert set(doc) == {
        "format",
        "action",
        "audit_id",
        "train_corpus",
        "test_set",
        "signature",
        "mode",
        "side",
        "n_segments",
        "n_train",
        "timings",
        "sides",
        "bins",
        "pair_leak",
        "warnings",
        "validation",
        "postings",
        "lenses",
        "measure",
    }
    assert doc["action"] == "computed" and doc["postings"]["total"] > 0
    assert doc["lenses"] is None  # no audit by another measure to compare with


def test_replacing_the_training_corpus_drops_its_audits(loaded, write_lines):
    run_audit(loaded, "train", "test")
    new = read_training_corpus("train", write_lines("n.src", ["x"]), write_lines("n.tgt", ["y"]))
    result = add_corpus(loaded, new, replace=True)
    assert result.removed_audits == 1
    for table in ("audits", "exposures", "tm_segment_stats", "run_bin_sums"):
        assert loaded.execute(f"SELECT count(*) FROM {table}").fetchone() == (0,), table


@pytest.mark.parametrize("measure", ["jaccard", "containment"])
def test_fast_validation_on_every_segment_agrees_with_the_stored_exact_audit(loaded, measure):
    n = loaded.execute("SELECT n_segments FROM corpora WHERE name = 'test'").fetchone()[0]
    fast = run_audit(
        loaded, "train", "test", AuditConfig(mode="fast", validate_sample=n, measure=measure)
    )
    exact = run_audit(loaded, "train", "test", AuditConfig(measure=measure))
    same_nn, same_bin = loaded.execute(
        "SELECT avg((f.source_nn IS NOT DISTINCT FROM e.source_nn)::INT), "
        "avg((f.bin = e.bin)::INT) FROM exposures f JOIN exposures e USING (seg_idx) "
        "WHERE f.audit_id = ? AND e.audit_id = ?",
        [fast.audit_id, exact.audit_id],
    ).fetchone()
    tm_bleu = {
        audit_id: loaded.execute(
            "SELECT corpus_bleu(bleu_stats) FROM tm_segment_stats WHERE audit_id = ?",
            [audit_id],
        ).fetchone()[0]
        for audit_id in (fast.audit_id, exact.audit_id)
    }
    v = fast.validation
    assert v["sample_size"] == n
    assert v["top1_agreement"] == pytest.approx(same_nn, abs=1e-12)
    assert v["bin_agreement"] == pytest.approx(same_bin, abs=1e-12)
    assert v["tm_bleu_exact"] == pytest.approx(tm_bleu[exact.audit_id], abs=1e-9)
    assert v["tm_bleu_fast"] == pytest.approx(tm_bleu[fast.audit_id], abs=1e-9)


def test_run_audit_from_python_takes_bin_and_leak_defaults_from_settings(loaded):
    loaded.execute("UPDATE settings SET value = 0.5 WHERE key = 'bin.near'")
    loaded.execute("UPDATE settings SET value = 0.2 WHERE key = 'bin.far'")
    loaded.execute("UPDATE settings SET value = 0.9 WHERE key = 'leak.high'")
    result = run_audit(loaded, "train", "test")
    near, far, leak = loaded.execute(
        "SELECT near_threshold, far_threshold, leak_thresholds FROM audits WHERE audit_id = ?",
        [result.audit_id],
    ).fetchone()
    assert (near, far, leak) == (0.5, 0.2, [0.70, 0.85, 0.9])
    assert "bins:far0.2,near0.5" in result.signature


def test_a_test_set_facing_the_other_way_is_warned_about_before_the_search(run_cli):
    examples = Path(__file__).resolve().parents[2] / "warehouse" / "examples"
    train = ("corpus", "add", "tr", "--src", examples / "train.en", "--tgt", examples / "train.es")
    assert run_cli(*train).exit_code == 0
    # Registered the wrong way round: Spanish sources, English references.
    reversed_ = (
        "testset",
        "add",
        "rev",
        "--src",
        examples / "test.es",
        "--ref",
        examples / "test.en",
    )
    assert run_cli(*reversed_).exit_code == 0
    right = ("testset", "add", "ok", "--src", examples / "test.en", "--ref", examples / "test.es")
    assert run_cli(*right).exit_code == 0
    result = run_cli("audit", "--train", "tr", "--testset", "rev")
    assert result.exit_code == 0, result.output
    assert result.stderr.count("wrong way round") == 1  # said once, before the search
    stored = json.loads(run_cli("audit", "--train", "tr", "--testset", "rev", "--json").stdout)
    assert any("wrong way round" in w for w in stored["warnings"])
    fine = run_cli("audit", "--train", "tr", "--testset", "ok")
    assert fine.exit_code == 0 and "wrong way round" not in fine.stderr


def test_a_containment_audit_is_stored_beside_the_jaccard_one_with_its_own_id(loaded):
    jaccard = run_audit(loaded, "train", "test")
    contained = run_audit(loaded, "train", "test", AuditConfig(measure="containment"))
    assert contained.audit_id != jaccard.audit_id and contained.action == "computed"
    signatures = dict(loaded.execute("SELECT audit_id, signature FROM audits").fetchall())
    assert "|measure:containment|" in signatures[contained.audit_id]
    assert "measure" not in signatures[jaccard.audit_id]
    # A row holds at least the grams it shares, so containment never falls below Jaccard.
    rows = zip(
        _exposures(loaded, jaccard.audit_id), _exposures(loaded, contained.audit_id), strict=True
    )
    assert all(c[i] >= j[i] - 1e-12 for j, c in rows for i in (0, 3, 7))


def test_a_containment_audit_run_later_does_not_move_the_bins(
    loaded, corpus, tmp_path, db_path, run_cli
):
    path = tmp_path / "hyp.txt"
    path.write_text("".join(refs[0] + "\n" for refs in corpus.test_refs))
    [ingested] = write_runs(
        loaded, [prepare_from_files(db_path, testset="test", hyp_path=path, model_slug="m")]
    )
    jaccard = run_audit(loaded, "train", "test")
    contained = run_audit(loaded, "train", "test", AuditConfig(measure="containment"))
    test_id = loaded.execute("SELECT corpus_id FROM corpora WHERE name = 'test'").fetchone()[0]
    assert choose_audit(loaded, test_id, None) == jaccard.audit_id
    assert choose_audit(loaded, test_id, "train") == jaccard.audit_id
    chosen = loaded.execute(
        "SELECT audit_id FROM leaderboard_for(NULL) WHERE run_id = ?", [ingested.run_id]
    ).fetchone()
    assert chosen == (jaccard.audit_id,)
    measures = dict(loaded.execute("SELECT audit_id, audit_measure FROM run_exposure").fetchall())
    assert measures == {jaccard.audit_id: "jaccard", contained.audit_id: "containment"}
    # The report compares the two lenses segment by segment.
    lenses = build_report(loaded, ingested.run_id)["exposure"]["lenses"]
    bins = {
        audit: dict(loaded.execute(
            "SELECT seg_idx, bin FROM exposures WHERE audit_id = ?", [audit]
        ).fetchall())
        for audit in (jaccard.audit_id, contained.audit_id)
    }  # fmt: skip
    agree = sum(bins[jaccard.audit_id][i] == bins[contained.audit_id][i] for i in range(60))
    assert lenses["jaccard_audit_id"] == jaccard.audit_id
    assert lenses["containment_audit_id"] == contained.audit_id
    assert (lenses["segments"], lenses["bins_agree"]) == (60, agree)
    assert len(lenses["examples"]) == min(5, 60 - agree)
    for example in lenses["examples"]:
        assert example["jaccard_bin"] != example["containment_bin"]
    # Either lens on request: the leaderboard and the report by containment.
    [row] = leaderboard(loaded, bin_by="containment")
    assert (row["audit_id"], row["audit_measure"]) == (contained.audit_id, "containment")
    by_containment = build_report(loaded, ingested.run_id, bin_by="containment")
    assert by_containment["exposure"]["audit_id"] == contained.audit_id
    assert by_containment["exposure"]["train_rule"].endswith("by containment (--bin-by)")
    loaded.close()
    shown = run_cli("report", ingested.run_id)
    assert shown.exit_code == 0, shown.output
    assert f"{agree:,} of 60 segments alike" in shown.stdout
    board = run_cli("leaderboard", "--bin-by", "containment", "--json")
    assert [r["audit_id"] for r in json.loads(board.stdout)] == [contained.audit_id]
    board = run_cli("leaderboard", "--json")
    assert [r["audit_id"] for r in json.loads(board.stdout)] == [jaccard.audit_id]


def test_a_lens_the_test_set_lacks_is_refused(loaded, corpus, tmp_path, db_path, run_cli):
    path = tmp_path / "hyp.txt"
    path.write_text("".join(refs[0] + "\n" for refs in corpus.test_refs))
    [ingested] = write_runs(
        loaded, [prepare_from_files(db_path, testset="test", hyp_path=path, model_slug="m")]
    )
    run_audit(loaded, "train", "test")
    loaded.close()
    before = snapshot(db_path)
    refused = run_cli("report", ingested.run_id, "--bin-by", "containment")
    assert refused.exit_code == 2
    assert "the run's test set has no containment audit" in refused.stderr
    board = run_cli("leaderboard", "--bin-by", "containment", "--json")
    assert board.exit_code == 0 and json.loads(board.stdout)[0]["audit_id"] is None
    assert snapshot(db_path) == before


def test_a_jaccard_audit_keeps_the_id_it_had_before_measures():
    # Audits stored before measures existed are found again (not recomputed) by the same command.
    assert AuditConfig().identity().keys() == {
        "orders", "normalization", "mode", "pair", "near", "far", "leak", "tm_zero_policy",
    }  # fmt: skip
    assert AuditConfig(measure="containment").identity()["measure"] == "containment"


def test_a_sentence_inside_a_training_document_is_contained_but_far_by_jaccard(run_cli, tmp_path):
    words = ["river", "garden", "window", "teacher", "ticket", "letter"]
    sentences = [
        f"the {words[i % 6]} of station {i} opens at {i % 12} near the {words[(i * 5) % 6]} market"
        for i in range(120)
    ]
    docs = [" ".join(sentences[k : k + 40]) for k in range(0, len(sentences), 40)]
    files = {
        "docs.en": docs,
        "docs.fr": [d.upper() for d in docs],
        "t.src": [sentences[57]],
        "t.ref": [sentences[57].upper()],
    }
    for name, lines in files.items():
        (tmp_path / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    db = tmp_path / "w.duckdb"
    added = run_cli("corpus", "add", "docs", "--src", tmp_path / "docs.en",
                    "--tgt", tmp_path / "docs.fr", db=db)  # fmt: skip
    assert added.exit_code == 0, added.output
    added = run_cli("testset", "add", "t", "--src", tmp_path / "t.src",
                    "--ref", tmp_path / "t.ref", db=db)  # fmt: skip
    assert added.exit_code == 0, added.output
    exposures = {}
    for measure in ("jaccard", "containment"):
        out = run_cli("audit", "--train", "docs", "--testset", "t", "--measure", measure,
                      "--json", db=db)  # fmt: skip
        assert out.exit_code == 0, out.output
        con = open_warehouse(db)
        exposures[measure] = _exposures(con, json.loads(out.stdout)["audit_id"])[0]
        con.close()
    # Document 1 holds the sentence verbatim: fully contained, yet far by Jaccard.
    assert exposures["containment"][:3] == (1.0, 1, False)
    assert exposures["containment"][7:9] == (1.0, 1)
    assert exposures["containment"][11] == "near"
    assert exposures["jaccard"][0] < 0.3 and exposures["jaccard"][11] == "far"
    with Warehouse.open(db, access="read") as wh:
        lenses = list(wh.query("SELECT * FROM exposure_lenses"))
    assert len(lenses) == 1 and lenses[0]["bins_agree"] is False
    assert (lenses[0]["source_containment"], lenses[0]["jaccard_bin"]) == (1.0, "far")


def test_a_text_corpus_is_audited_by_containment_equal_to_brute_force(run_cli, tmp_path):
    rng = random.Random(5)
    words = [
        "the",
        "a",
        "river",
        "garden",
        "window",
        "teacher",
        "ticket",
        "letter",
        "market",
        "station",
    ]
    sentences = [" ".join(rng.choice(words) for _ in range(rng.randint(3, 9))) for _ in range(90)]
    docs = [" ".join(sentences[k : k + rng.randint(5, 30)]) for k in range(0, 90, 15)]
    records = [json.dumps({"text": d.replace(" ", "\n", 1), "n": i}) for i, d in enumerate(docs)]
    (tmp_path / "web.jsonl").write_text("\n".join(records) + "\n", encoding="utf-8")
    picked = [sentences[i] for i in (3, 40, 77)] + ["no river here at all", ""]
    (tmp_path / "t.src").write_text("\n".join(picked) + "\n", encoding="utf-8")
    (tmp_path / "t.ref").write_text("\n".join(s.upper() for s in picked) + "\n", encoding="utf-8")
    db = tmp_path / "w.duckdb"
    added = run_cli("corpus", "add", "web", "--text", tmp_path / "web.jsonl", "--lang", "en",
                    "--json", db=db)  # fmt: skip
    assert added.exit_code == 0, added.output
    assert json.loads(added.stdout)["corpus"]["kind"] == "text"
    assert "documents / monolingual text" in run_cli("corpus", "show", "web", db=db).stdout
    assert run_cli("testset", "add", "t", "--src", tmp_path / "t.src", "--ref",
                   tmp_path / "t.ref", db=db).exit_code == 0  # fmt: skip
    out = run_cli("audit", "--train", "web", "--testset", "t", "--json", db=db)
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    assert "|measure:containment|" in doc["signature"]
    con = open_warehouse(db)
    rows = _exposures(con, doc["audit_id"])
    con.close()
    texts = normalize_many([json.loads(r)["text"] for r in records])
    brute = BruteForce(texts, texts, measure="containment")
    for row, src in zip(rows, picked, strict=True):
        want = brute.exposure(normalize_many([src])[0], normalize_many([src.upper()]))
        assert row[0] == pytest.approx(float(want.source_exposure), abs=1e-12)
        assert row[1:3] == (want.source_nn, want.source_exact)
        assert row[3] == pytest.approx(float(want.target_exposure), abs=1e-12)
        assert row[7] == pytest.approx(float(want.pair_exposure), abs=1e-12)
    assert [r[0] for r in rows[:3]] == [1.0, 1.0, 1.0]  # each sentence sits in a document
    # Jaccard when asked for: another audit beside it.
    jaccard = run_cli("audit", "--train", "web", "--testset", "t", "--measure", "jaccard",
                      "--json", db=db)  # fmt: skip
    assert json.loads(jaccard.stdout)["audit_id"] != doc["audit_id"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--text", "docs.txt", "--src", "docs.txt"], "--text: leave out --src"),
        (["--src", "docs.txt"], "give --src and --tgt"),
        (["--src", "docs.txt", "--tgt", "docs.txt", "--lang", "en"], "apply to --text only"),
        (["--text", "docs.txt", "--format", "csv"], "Invalid value for '--format'"),
        (["--text", "blob.bin"], "UTF-8"),
    ],
)
def test_bad_text_corpus_options_exit_2_and_change_nothing(run_cli, tmp_path, args, message):
    (tmp_path / "docs.txt").write_text("a document\n", encoding="utf-8")
    (tmp_path / "blob.bin").write_bytes(b"\x00\xff\xfe\x89PNG")
    db = tmp_path / "w.duckdb"
    assert run_cli("init", db=db).exit_code == 0
    before = snapshot(db)
    paths = [str(tmp_path / a) if a in ("docs.txt", "blob.bin") else a for a in args]
    result = run_cli("corpus", "add", "docs", *paths, db=db)
    assert result.exit_code == 2, result.output
    assert message in result.stderr
    assert snapshot(db) == before


def test_a_text_corpus_defaults_to_containment_everywhere_and_has_no_tm_baseline(run_cli, tmp_path):
    docs = ["the river market opens at nine near the old station", "a garden and a window"]
    (tmp_path / "docs.txt").write_text("\n".join(docs) + "\n", encoding="utf-8")
    (tmp_path / "t.en").write_text("the river market opens\n", encoding="utf-8")
    (tmp_path / "t.fr").write_text("le marché\n", encoding="utf-8")
    db = tmp_path / "w.duckdb"
    added = run_cli("corpus", "add", "web", "--text", tmp_path / "docs.txt", "--lang", "de", db=db)
    assert added.exit_code == 0, added.output
    added = run_cli("testset", "add", "t", "--src", tmp_path / "t.en", "--ref", tmp_path / "t.fr",
                    "--src-lang", "en", "--tgt-lang", "fr", db=db)  # fmt: skip
    assert added.exit_code == 0, added.output
    refused = run_cli("tm-baseline", "--train", "web", "--testset", "t", "--out",
                      tmp_path / "tm.txt", db=db)  # fmt: skip
    assert refused.exit_code == 2 and "has no TM hypotheses" in refused.stderr
    assert not (tmp_path / "tm.txt").exists()
    con = open_warehouse(db)
    try:
        assert con.execute("SELECT count(*) FROM audits").fetchone() == (0,)
        # From Python without a configuration, and through the SQL functions, too.
        result = run_audit(con, "web", "t")
        assert "|measure:containment|" in result.signature
        # German text against an en→fr test set: neither side's language.
        language = "test set 't' is labelled en→fr but text corpus 'web' is in de"
        assert [w for w in result.warnings if "labelled" in w] == [language]
        register_training_corpus(con, "web")
        [(value,)] = con.execute(
            "SELECT tame_source_nn('the river market opens').exposure"
        ).fetchall()
        assert value == 1.0
    finally:
        con.close()
    # English text beside an en→fr test set is expected: no warning.
    added = run_cli("corpus", "add", "web-en", "--text", tmp_path / "docs.txt", "--lang", "en",
                    db=db)  # fmt: skip
    assert added.exit_code == 0, added.output
    audited = run_cli("audit", "--train", "web-en", "--testset", "t", "--json", db=db)
    assert audited.exit_code == 0, audited.output
    assert not [w for w in json.loads(audited.stdout)["warnings"] if "labelled" in w]
