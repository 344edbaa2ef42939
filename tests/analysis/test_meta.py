"""`tame-wh meta`: metric-human agreement equals its oracles on the stored scores (scipy's
Pearson and Kendall, sacrebleu's sentence chrF++), its intervals follow the seed, it is computed
per exposure bin once the test set is audited, and a wrong request is refused in one line."""

from __future__ import annotations

import itertools
import json

import duckdb
import numpy as np
import pytest
import sacrebleu
from scipy.stats import kendalltau, pearsonr

from tests.mqm import SEGMENT_SCORES, SOURCES, TARGETS, copy_judged

SYSTEMS = ("A", "B", "C")


@pytest.fixture
def judged(run_cli, tmp_path, db_path):
    """A warehouse made by `ingest --mqm` from the small MQM file (a copy, tests/mqm.py)."""
    copy_judged(run_cli, tmp_path, db_path)
    return run_cli


def _meta(run_cli, *args: str) -> dict:
    done = run_cli("meta", "--testset", "t", "--json", *args)
    assert done.exit_code == 0, done.output
    return json.loads(done.stdout)


def _row(report: dict, metric: str, statistic: str, bin_name: str = "all") -> dict:
    wanted = (metric, statistic, bin_name)
    [row] = [r for r in report["rows"] if (r["metric"], r["statistic"], r["bin"]) == wanted]
    return row


def test_system_level_statistics_equal_scipy_and_the_definition(judged):
    report = _meta(judged)
    assert (report["n_systems"], report["n_segments"], report["human"]) == (3, 4, "-MQM")
    by_label = {s["label"].split("(")[1].rstrip(")"): s for s in report["systems"]}
    for metric, sign in (("bleu", 1), ("chrf_plus_plus", 1), ("ter", -1)):
        scores = [sign * by_label[s][metric] for s in SYSTEMS]
        human = [-by_label[s]["human"] for s in SYSTEMS]
        assert _row(report, metric, "pearson")["value"] == pytest.approx(pearsonr(scores, human)[0])
        assert _row(report, metric, "kendall")["value"] == pytest.approx(
            kendalltau(scores, human, variant="b")[0]
        )
        pairs = list(itertools.combinations(range(3), 2))
        agree = sum(
            np.sign(scores[i] - scores[j]) == np.sign(human[i] - human[j]) for i, j in pairs
        )
        assert _row(report, metric, "pairwise_accuracy")["value"] == pytest.approx(agree / 3)
    corpus = sacrebleu.BLEU().corpus_score(TARGETS["A"], [TARGETS["ref"]]).score
    assert by_label["A"]["bleu"] == pytest.approx(corpus, abs=1e-9)
    for system in SYSTEMS:  # chrF (no word n-grams) from the stored chrF++ statistics
        chrf = sacrebleu.CHRF(word_order=0).corpus_score(TARGETS[system], [TARGETS["ref"]]).score
        assert by_label[system]["chrf"] == pytest.approx(chrf, abs=1e-9)


def test_segment_level_kendall_equals_scipy_on_sacrebleus_sentence_chrf(judged):
    report = _meta(judged, "--metric", "chrf_plus_plus")
    assert {r["metric"] for r in report["rows"]} == {"chrf_plus_plus"}
    keys = list(SOURCES)
    chrf, human, per_system = [], [], []
    for system in SYSTEMS:
        scores = [sacrebleu.sentence_chrf(h, [r], word_order=2).score
                  for h, r in zip(TARGETS[system], TARGETS["ref"], strict=True)]  # fmt: skip
        judged_scores = [-SEGMENT_SCORES[(system, k)] for k in keys]
        chrf += scores
        human += judged_scores
        per_system.append(kendalltau(scores, judged_scores, variant="b")[0])
    pooled = _row(report, "chrf_plus_plus", "kendall_pooled")
    assert pooled["value"] == pytest.approx(kendalltau(chrf, human, variant="b")[0])
    assert pooled["n"] == 12
    mean = _row(report, "chrf_plus_plus", "kendall_per_system")["value"]
    assert mean == pytest.approx(np.mean([t for t in per_system if np.isfinite(t)]))
    acc = _row(report, "chrf_plus_plus", "acc_eq")
    assert 0 <= acc["value"] <= 1 and acc["epsilon"] >= 0


def test_segment_level_chrf_equals_sacrebleus_sentence_chrf(judged):
    report = _meta(judged, "--metric", "chrf")
    chrf, human = [], []
    for system in SYSTEMS:
        chrf += [sacrebleu.sentence_chrf(h, [r], word_order=0).score
                 for h, r in zip(TARGETS[system], TARGETS["ref"], strict=True)]  # fmt: skip
        human += [-SEGMENT_SCORES[(system, k)] for k in SOURCES]
    pooled = _row(report, "chrf", "kendall_pooled")["value"]
    assert pooled == pytest.approx(kendalltau(chrf, human, variant="b")[0])


def test_intervals_follow_the_seed(judged):
    first = _row(_meta(judged, "--seed", "7", "--n-bootstrap", "200"), "ter", "pearson")
    again = _row(_meta(judged, "--seed", "7", "--n-bootstrap", "200"), "ter", "pearson")
    other = _row(_meta(judged, "--seed", "8", "--n-bootstrap", "200"), "ter", "pearson")
    assert first == again and first["low"] is not None and first["low"] <= first["high"]
    assert (first["low"], first["high"]) != (other["low"], other["high"])


def test_agreement_per_exposure_bin_once_the_test_set_is_audited(judged, tmp_path):
    src, tgt = tmp_path / "train.src", tmp_path / "train.tgt"
    keys = list(SOURCES)
    src.write_text(SOURCES[keys[0]] + "\n" + SOURCES[keys[1]] + "\nganz andere Worte hier\n",
                   encoding="utf-8")  # fmt: skip
    tgt.write_text("a\nb\nc\n", encoding="utf-8")
    assert judged("corpus", "add", "train", "--src", src, "--tgt", tgt).exit_code == 0
    assert judged("audit", "--train", "train", "--testset", "t").exit_code == 0
    report = _meta(judged)
    assert report["audit_id"] is not None
    bins = {r["bin"] for r in report["rows"]}
    assert "source_exact" in bins and "all" in bins
    exact = _row(report, "ter", "kendall_pooled", "source_exact")
    assert exact["n"] == 2 * len(SYSTEMS)
    text = judged("meta", "--testset", "t").output
    assert "bin source_exact (audit " in text and "acc*_eq" in text
    # The lead over the TM baseline: what the leaderboard's Δ TM chrF++ column says.
    board = {r["run_id"]: r for r in json.loads(judged("leaderboard", "--json").stdout)}
    for system in report["systems"]:
        lead = board[system["run_id"]]["delta_tm_chrf_plus_plus"]
        assert system["delta_tm_chrf_plus_plus"] == pytest.approx(lead)
    only = _meta(judged, "--bin", "source_exact")
    assert {r["bin"] for r in only["rows"]} == {"source_exact"}
    assert _row(only, "ter", "pearson", "source_exact")["low"] is not None
    missing = judged("meta", "--testset", "t", "--bin", "near")
    assert (
        missing.exit_code == 2 and "no segment of the test set is in bin 'near'" in missing.output
    )


def test_a_wrong_request_is_refused_in_one_line(judged, run_cli, tmp_path):
    for args, problem in (
        (("--metric", "comet"), "--metric: comet not scored on every judged run"),
        (("--human", "esa"), "--human esa names none of the judgment sets"),
        (("--train", "nothing"), "unknown training corpus 'nothing'"),
    ):
        done = judged("meta", "--testset", "t", *args)
        assert done.exit_code == 2 and problem in done.output, done.output
        assert len(done.output.strip().splitlines()) == 1
    src = tmp_path / "s.txt"
    src.write_text("x\n", encoding="utf-8")
    assert run_cli("testset", "add", "bare", "--src", src, "--ref", src).exit_code == 0
    done = run_cli("meta", "--testset", "bare")
    assert done.exit_code == 2 and "has no human judgments (tame-wh human add)" in done.output


def test_several_sets_need_a_choice(judged, tmp_path):
    again = judged("human", "add", tmp_path / "mqm.tsv", "--testset", "t", "--skip-system", "ref",
                   "--name", "second")  # fmt: skip
    assert again.exit_code == 0, again.output
    done = judged("meta", "--testset", "t")
    assert done.exit_code == 2 and "choose one with --human" in done.output
    assert _meta(judged, "--human", "second")["set_name"] == "second"


def test_the_sql_views_agree_with_meta(judged, db_path):
    import duckdb

    report = _meta(judged)
    con = duckdb.connect(str(db_path), read_only=True)
    try:
        pearson = dict(con.execute("SELECT metric, pearson FROM human_system_pearson").fetchall())
        n = con.execute(
            "SELECT count(*), count(chrf_plus_plus) FROM human_segment_metrics"
        ).fetchone()
    finally:
        con.close()
    for metric in ("bleu", "chrf_plus_plus", "ter"):
        assert pearson[metric] == pytest.approx(_row(report, metric, "pearson")["value"])
    assert n == (12, 12)


def test_an_acc_eq_that_calls_every_pair_a_tie_is_flagged_with_its_epsilon():
    from warehouse.analysis.meta import _segment_rows

    rng = np.random.default_rng(3)
    # 5 systems x 400 segments: humans tie 97% of the segments' pairs (no error found), the
    # metric is noise: its best threshold calls every pair a tie.
    human = np.zeros((5, 400))
    human[:, :12] = rng.normal(size=(5, 12))
    metric = rng.normal(size=(5, 400))
    [row] = [r for r in _segment_rows("bleu", metric, human, "all") if r.statistic == "acc_eq"]
    assert row.degenerate and row.metric_ties == 1.0
    assert row.epsilon is not None and row.epsilon >= np.abs(metric[:, None] - metric).max() - 1e-9
    assert row.value == pytest.approx(row.human_ties)  # exactly the share humans tie
    # A metric that follows the humans is not flagged.
    agreeing = human + rng.normal(scale=1e-3, size=human.shape) * (human != 0)
    [fine] = [r for r in _segment_rows("bleu", agreeing, human, "all") if r.statistic == "acc_eq"]
    assert not fine.degenerate and fine.value > row.value


def test_the_metrics_ranking_tests_each_pair_on_shared_resamples_as_scipy_would(judged, db_path):
    from scipy import stats

    from warehouse.analysis import meta as meta_module
    from warehouse.stats.resample import resample_indices

    report = _meta(judged, "--n-bootstrap", "300", "--seed", "7")
    [pearson] = [r for r in report["rankings"] if r["statistic"] == "pearson"]
    assert {r["metric"] for r in pearson["ranked"]} >= {"bleu", "chrf_plus_plus", "ter"}
    assert pearson["verdict"]
    # The same resamples, Pearson from scipy on each, the paired p-value by hand.
    con = duckdb.connect(str(db_path), read_only=True)
    try:
        run_ids, keys, human = meta_module._human_matrix(con, report["set_id"], "mqm")
        arrays = [meta_module.load_run_arrays(con, r) for r in run_ids]
    finally:
        con.close()
    indices = resample_indices(len(keys), 300, 7)
    names = ["bleu", "ter"]
    resampled = meta_module._resampled(arrays, None, indices, names)
    people = np.stack([human[:, row].mean(axis=1) for row in indices])

    def pearsons(name: str) -> np.ndarray:
        rows = zip(resampled[name], people, strict=True)
        return np.array([stats.pearsonr(m, h)[0] if np.ptp(m) and np.ptp(h) else np.nan
                         for m, h in rows])  # fmt: skip

    difference = pearsons("bleu") - pearsons("ter")
    difference = difference[np.isfinite(difference)]
    expected = min(1.0, 2 * min(np.mean(difference <= 0), np.mean(difference >= 0)))
    assert pearson["p_values"]["bleu"]["ter"] == pytest.approx(expected, abs=1e-12)
