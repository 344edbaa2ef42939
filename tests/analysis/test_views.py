"""SQL analytics: metric macros equal sacrebleu, composite, tiers, cost, speed, leaderboard."""

from __future__ import annotations

import json
import math
import random

import numpy as np
import pytest
from sacrebleu.metrics import BLEU, CHRF, TER

from warehouse.analysis.leaderboard import leaderboard
from warehouse.ingest.prepare import prepare_from_document
from warehouse.ingest.write import write_runs
from warehouse.store.schema import open_warehouse

WORDS = ["the", "cat", "sat", "on", "a", "mat", ".", "dog", "ran", "fast", "über", "très"]


def _sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 12)))


def _ingest(con, tmp_path, entries, name="r.json", **card):
    path = tmp_path / name
    path.write_text(json.dumps({"model_slug": "m", **card, "entries": entries}))
    [result] = write_runs(con, [prepare_from_document(path)])
    return result.run_id


@pytest.fixture
def con(db_path):
    connection = open_warehouse(db_path)
    yield connection
    connection.close()


@pytest.mark.parametrize("n_refs", [1, 3])
def test_sql_macros_equal_sacrebleu_on_random_subsets(con, tmp_path, n_refs):
    rng = random.Random(n_refs)
    n = 120
    refs = [[_sentence(rng) or "x" for _ in range(n_refs)] for _ in range(n)]
    hyps = [_sentence(rng) for _ in range(n)]
    hyps[:3] = ["", "", refs[2][0]]
    entries = [
        {"id": str(i), "source": f"src {i}", "expected": refs[i], "predicted": hyps[i]}
        for i in range(n)
    ]
    run_id = _ingest(con, tmp_path, entries)
    for _ in range(6):
        subset = sorted(rng.sample(range(n), rng.randint(1, n)))
        got = con.execute(
            "SELECT corpus_bleu(bleu_stats), corpus_chrf(chrf_stats), corpus_ter(ter_stats) "
            "FROM segment_stats WHERE run_id = ? AND list_contains(?, seg_idx)",
            [run_id, subset],
        ).fetchone()
        sub_hyps = [hyps[i] for i in subset]
        streams = [[refs[i][k] for i in subset] for k in range(n_refs)]
        want = (
            BLEU(tokenize="13a").corpus_score(sub_hyps, streams).score,
            CHRF(word_order=2).corpus_score(sub_hyps, streams).score,
            TER().corpus_score(sub_hyps, streams).score,
        )
        for ours, theirs in zip(got, want, strict=True):
            assert ours == pytest.approx(theirs, abs=1e-9, rel=0)


def test_bleu_macro_handles_no_matches_and_empty_corpus(con):
    zero = con.execute("SELECT bleu_score([5, 7, 0, 0, 0, 0, 5, 4, 3, 2])").fetchone()[0]
    assert zero == 0.0
    empty = con.execute("SELECT chrf_score(?)", [[0] * 24]).fetchone()
    assert empty == (0.0,)
    assert con.execute("SELECT ter_score([0.0, 0.0]), ter_score([3.0, 0.0])").fetchone() == (
        0.0,
        100.0,
    )
    stats = [6, 5, 5, 3, 1, 0, 6, 5, 4, 3]  # order 4 without matches: exp smoothing
    expected = BLEU(tokenize="13a")._compute_score_from_stats(stats).score
    assert con.execute("SELECT bleu_score(?)", [stats]).fetchone()[0] == expected


def _random_bleu_stats(rng: random.Random) -> list[int]:
    """[hyp_len, ref_len, correct_1..4, total_1..4] with zeros anywhere they can occur."""
    hyp, ref = rng.choice([0, 1, 4, 30, 900]), rng.choice([0, 1, 4, 30, 900])
    totals = [rng.choice([0, max(0, hyp - k)]) for k in range(4)]
    return [hyp, ref] + [rng.choice([0, rng.randint(0, t)]) for t in totals] + totals


def _random_chrf_stats(rng: random.Random) -> list[int]:
    """[hyp, ref, match] of 6 character and 2 word orders, any of them empty."""
    out = []
    for _ in range(8):
        hyp, ref = rng.choice([0, 2, 40, 700]), rng.choice([0, 3, 40, 700])
        out += [hyp, ref, rng.choice([0, rng.randint(0, min(hyp, ref))])]
    return out


def test_score_macros_equal_sacrebleus_formulas_to_the_bit_on_random_statistics(con):
    rng = random.Random(5)
    bleu_stats = [_random_bleu_stats(rng) for _ in range(2000)]
    chrf_stats = [_random_chrf_stats(rng) for _ in range(2000)]
    bleu, chrf = con.execute(
        "SELECT list_transform(?::BIGINT[][], lambda s: bleu_score(s)), "
        "list_transform(?::BIGINT[][], lambda s: chrf_score(s))",
        [bleu_stats, chrf_stats],
    ).fetchone()
    bleu_scorer, chrf_scorer = BLEU(tokenize="13a"), CHRF(word_order=2)
    assert bleu == [bleu_scorer._compute_score_from_stats(s).score for s in bleu_stats]
    assert chrf == [chrf_scorer._compute_score_from_stats(s).score for s in chrf_stats]
    assert 0.0 in bleu and 0.0 in chrf  # the no-match and no-order cases were drawn


def _scans(con, query: str) -> dict[str, int]:
    """How many times the plan of `query` scans each table (by name)."""
    counts: dict[str, int] = {}

    def walk(nodes: list[dict]) -> None:
        for node in nodes:
            if table := node.get("extra_info", {}).get("Table"):
                name = table.rsplit(".", 1)[-1]
                counts[name] = counts.get(name, 0) + 1
            walk(node.get("children", []))

    walk(json.loads(con.execute(f"EXPLAIN (FORMAT JSON) {query}").fetchone()[1]))
    return counts


def test_the_leaderboard_plans_the_composite_once_and_the_audit_summary_once(demo_db):
    # Every view a query names is bound and planned for each query: the leaderboard reached the
    # composite through four views (its weights scanned four times) and a run's exposure read
    # the audit summary three times, each a union over the exposures of three sides.
    connection = open_warehouse(demo_db)
    try:
        assert _scans(connection, "SELECT * FROM leaderboard")["composite_weights"] == 1
        assert _scans(connection, "SELECT * FROM run_exposure")["exposures"] == 3
        assert _scans(connection, "SELECT * FROM run_speed").keys() == {"runs", "run_sums"}
    finally:
        connection.close()


def _metric_entries(n=4):
    return [
        {"id": str(i), "source": f"s{i}", "expected": "a b c", "predicted": "a b c" if i else "x"}
        for i in range(n)
    ]


def test_composite_worked_example_profile_a_with_three_metrics(con, tmp_path):
    run_id = _ingest(con, tmp_path, _metric_entries(), scores={"fst_acceptance_rate": 0.8})
    profile, composite, used = con.execute(
        "SELECT profile, composite, metrics_used FROM run_composite WHERE run_id = ?", [run_id]
    ).fetchone()
    chrf, exact = con.execute(
        "SELECT chrf_plus_plus, exact_match_rate FROM run_surface WHERE run_id = ?", [run_id]
    ).fetchone()
    assert profile == "A"
    assert used == ["chrf_plus_plus", "exact_match_rate", "fst_acceptance_rate"]
    expected = (0.25 * 0.8 + 0.15 * chrf / 100 + 0.05 * exact) / 0.45
    assert composite == pytest.approx(expected, abs=1e-12)
    weights = con.execute(
        "SELECT list(weight ORDER BY metric) FROM run_composite_inputs "
        "WHERE run_id = ? AND value IS NOT NULL",
        [run_id],
    ).fetchone()[0]
    assert [w / 0.45 for w in weights] == pytest.approx([0.15 / 0.45, 0.05 / 0.45, 0.25 / 0.45])


def test_metric_values_prefer_the_run_level_value_and_inputs_say_their_source(con, tmp_path):
    entries = _metric_entries()
    for i, entry in enumerate(entries):
        entry["comet_score"] = 0.5 + i / 10
        entry["semantic_score"] = 0.2  # per-entry, and a run-level value below
    run_id = _ingest(con, tmp_path, entries, scores={"semantic_score": 0.6})
    rows = con.execute(
        "SELECT metric, value, source FROM run_metric_values WHERE run_id = ? ORDER BY metric",
        [run_id],
    ).fetchall()
    assert rows == [("comet_score", pytest.approx(0.65), "entries"), ("semantic_score", 0.6, "run")]
    inputs = con.execute("SELECT inputs FROM run_composite WHERE run_id = ?", [run_id]).fetchone()[
        0
    ]
    shown = {i["metric"]: (i["transform"], i["source"]) for i in inputs}
    assert shown["chrf_plus_plus"] == ("percent", "surface")
    assert shown["exact_match_rate"] == ("identity", "surface")
    assert shown["semantic_score"] == ("identity", "run")
    sources = con.execute(
        "SELECT metric, weight, transform, value, source FROM run_composite_sources "
        "WHERE run_id = ? ORDER BY metric",
        [run_id],
    ).fetchall()
    assert sources == [
        (i["metric"], i["weight"], i["transform"], i["value"], i["source"]) for i in inputs
    ]


def test_composite_inverts_lower_is_better_rates_in_profile_b(con, tmp_path):
    card = {"semantic_score": 0.6, "code_switching_rate": 0.2, "hallucination_rate": 0.1}
    run_id = _ingest(con, tmp_path, _metric_entries(), scores=card)
    profile, composite = con.execute(
        "SELECT profile, composite FROM run_composite WHERE run_id = ?", [run_id]
    ).fetchone()
    chrf, exact = con.execute(
        "SELECT chrf_plus_plus, exact_match_rate FROM run_surface WHERE run_id = ?", [run_id]
    ).fetchone()
    expected = (0.25 * chrf / 100 + 0.25 * 0.6 + 0.10 * exact + 0.10 * 0.8 + 0.05 * 0.9) / 0.75
    assert profile == "B"
    assert composite == pytest.approx(expected, abs=1e-12)


def test_profile_follows_the_languages_table_then_fst_presence(con, tmp_path):
    entries = _metric_entries()
    with_fst = _ingest(
        con,
        tmp_path,
        entries,
        "a.json",
        scores={"fst_acceptance_rate": 0.5},
        dataset={"id": "d", "language_pair": "en-crk"},
    )
    plain = _ingest(
        con,
        tmp_path,
        entries,
        "b.json",
        model_slug="other",
        dataset={"id": "d", "language_pair": "en-crk"},
    )

    def profiles():
        return dict(con.execute("SELECT run_id, profile FROM run_profiles").fetchall())

    assert profiles() == {with_fst: "A", plain: "B"}
    con.execute("INSERT INTO languages VALUES ('crk', 'Plains Cree', true)")
    assert profiles() == {with_fst: "A", plain: "A"}
    con.execute("UPDATE languages SET has_fst = false WHERE lang = 'crk'")
    assert profiles() == {with_fst: "B", plain: "B"}


def test_run_without_usable_metric_has_null_composite_and_is_unscored(con):
    con.execute(
        "INSERT INTO corpora VALUES ('c1', 'empty-test', 'test', NULL, NULL, 1, 1, 0, 'x', "
        "now(), '{}')"
    )
    con.execute(
        "INSERT INTO runs (run_id, test_corpus_id, model_slug, created_at, ingested_at, "
        "n_entries, run_card) VALUES ('bare', 'c1', 'm', now(), now(), 0, '{}')"
    )
    row = con.execute("SELECT composite, quality_tier FROM run_tiers WHERE run_id = 'bare'")
    assert row.fetchone() == (None, "unscored")


@pytest.mark.parametrize(
    ("composite", "tier"),
    [
        (1.0, "fluent"),
        (0.85, "fluent"),
        (0.8499999999, "deployable"),
        (0.70, "deployable"),
        (0.6999999999, "functional"),
        (0.50, "functional"),
        (0.4999999999, "emerging"),
        (0.30, "emerging"),
        (0.2999999999, "baseline"),
        (0.0, "baseline"),
        (None, "unscored"),
    ],
)
def test_tier_boundaries_are_inclusive(con, composite, tier):
    assert con.execute("SELECT quality_tier(?::DOUBLE)", [composite]).fetchone()[0] == tier


def test_cost_adjusted_is_null_for_free_or_unknown_cost(con, tmp_path):
    entries = _metric_entries()
    paid = _ingest(
        con,
        tmp_path,
        entries,
        "a.json",
        totals={"total_cost_usd": 0.02, "prompt_tokens": 300, "completion_tokens": 100},
    )
    free = _ingest(
        con, tmp_path, entries, "b.json", model_slug="free", totals={"total_cost_usd": 0}
    )
    unknown = _ingest(con, tmp_path, entries, "c.json", model_slug="unknown")
    rows = dict(
        (r[0], r[1:])
        for r in con.execute(
            "SELECT run_id, cost_adjusted, cost_per_entry_usd, tokens_per_entry, "
            "cost_per_1k_tokens, cost_per_source_char FROM run_cost"
        ).fetchall()
    )
    composite = con.execute(
        "SELECT composite FROM run_composite WHERE run_id = ?", [paid]
    ).fetchone()[0]
    adjusted, per_entry, per_token_entry, per_1k, per_char = rows[paid]
    assert per_entry == 0.005 and per_token_entry == 100.0
    assert per_1k == pytest.approx(0.02 / 400 * 1000)
    assert per_char == pytest.approx(0.02 / len("s0s1s2s3"))
    assert adjusted == pytest.approx(composite / math.log2(1 + 0.005 * 1000))
    assert rows[free][0] is None and rows[unknown][0] is None


def test_latency_percentiles_equal_numpy(con, tmp_path):
    rng = random.Random(3)
    latencies = [round(rng.uniform(0.05, 4.0), 4) for _ in range(37)]
    entries = [
        dict(e, latency_s=lat) for e, lat in zip(_metric_entries(37), latencies, strict=True)
    ]
    run_id = _ingest(
        con,
        tmp_path,
        entries,
        elapsed_seconds=120.0,
        totals={"prompt_tokens": 1000, "completion_tokens": 200},
    )
    avg, median, p95, tps, epm = con.execute(
        "SELECT avg_latency_seconds, median_latency_seconds, p95_latency_seconds, "
        "tokens_per_second, entries_per_minute FROM run_speed WHERE run_id = ?",
        [run_id],
    ).fetchone()
    assert avg == pytest.approx(np.mean(latencies))
    assert median == pytest.approx(np.median(latencies), abs=1e-12)
    assert p95 == pytest.approx(np.percentile(latencies, 95), abs=1e-12)
    assert tps == pytest.approx(1200 / 120) and epm == pytest.approx(37 / 2)


def test_breakdowns_by_difficulty_equal_sacrebleu(con, tmp_path):
    rng = random.Random(9)
    entries = []
    for i in range(60):
        entries.append(
            {
                "id": str(i),
                "source": f"s{i}",
                "expected": _sentence(rng) or "x",
                "predicted": _sentence(rng),
                "difficulty": 1 + i % 3,
                "provenance": "web" if i % 2 else "news",
            }
        )
    run_id = _ingest(con, tmp_path, entries)
    rows = con.execute(
        "SELECT value, bleu, chrf_plus_plus FROM run_breakdowns "
        "WHERE run_id = ? AND dimension = 'difficulty' ORDER BY value",
        [run_id],
    ).fetchall()
    assert [r[0] for r in rows] == ["1", "2", "3"]
    for value, bleu, chrf in rows:
        part = [e for e in entries if str(e["difficulty"]) == value]
        hyps, refs = [e["predicted"] for e in part], [[e["expected"] for e in part]]
        assert bleu == pytest.approx(BLEU(tokenize="13a").corpus_score(hyps, refs).score, abs=1e-9)
        assert chrf == pytest.approx(CHRF(word_order=2).corpus_score(hyps, refs).score, abs=1e-9)
    provenance = con.execute(
        "SELECT list(value ORDER BY value) FROM run_breakdowns "
        "WHERE run_id = ? AND dimension = 'provenance'",
        [run_id],
    ).fetchone()[0]
    assert provenance == ["news", "web"]


def test_leaderboard_sorts_and_flags_differing_metric_coverage(con, tmp_path):
    entries = _metric_entries()
    a = _ingest(con, tmp_path, entries, "a.json", model_slug="a", scores={"semantic_score": 0.9})
    b = _ingest(con, tmp_path, entries, "b.json", model_slug="b", scores={"semantic_score": 0.1})
    c = _ingest(con, tmp_path, entries, "c.json", model_slug="c")
    rows = leaderboard(con)
    composites = [r["composite_score"] for r in rows]
    assert composites == sorted(composites, reverse=True)
    assert {r["run_id"] for r in rows} == {a, b, c}
    flags = {r["run_id"]: r["coverage_differs"] for r in rows}
    assert flags == {a: False, b: False, c: True}
    by_ter = leaderboard(con, sort="ter", limit=2)
    assert len(by_ter) == 2
    columns = set(rows[0])
    for needed in (
        "composite_score",
        "quality_tier",
        "chrf_plus_plus",
        "exact_match_rate",
        "fst_acceptance_rate",
        "corpus_bleu",
        "comet_score",
        "total_cost_usd",
        "cost_per_entry_usd",
        "cost_per_source_char",
        "avg_latency_seconds",
        "model_slug",
        "condition",
        "dataset_id",
        "language_pair",
        "fingerprint_hash",
        "equivalent_match_rate",
        "semantic_score",
        "ter",
        "length_ratio",
        "code_switching_rate",
        "hallucination_rate",
        "terminology_adherence",
        "tokens_per_second",
        "entries_per_minute",
        "elapsed_seconds",
        "tm_bleu",
        "delta_tm_bleu",
        "gengap_bleu",
        "gengap_chrf",
        "pairleak_085",
        "source_exact_share",
    ):
        assert needed in columns, needed


def test_leaderboard_cli_json_and_bad_sort(run_cli, demo_db):
    rows = json.loads(run_cli("leaderboard", "--json").stdout)
    assert [r["model_slug"] for r in rows] == ["demo-large", "demo-small", "demo-small"]
    assert rows[0]["quality_tier"] == "fluent"
    limited = json.loads(run_cli("leaderboard", "--sort", "bleu", "--limit", "1", "--json").stdout)
    assert len(limited) == 1
    bad = run_cli("leaderboard", "--sort", "nonsense")
    assert bad.exit_code == 2
    unknown = run_cli("leaderboard", "--testset", "nope")
    assert unknown.exit_code == 2 and "unknown test set 'nope'" in unknown.stderr
