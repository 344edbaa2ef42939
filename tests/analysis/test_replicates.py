"""Replicate groups end to end: declared with `ingest --replicate-of`, a run card's `seed` or
`replicate` field, or a `replicate` tag; one row per group on `leaderboard --replicates`; a
replicate of another configuration refused before anything is written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import snapshot

EXAMPLES = Path(__file__).resolve().parents[2] / "warehouse" / "examples"


@pytest.fixture
def demo(demo_db):
    return demo_db


def _variant(tmp_path: Path, k: int) -> Path:
    """The small model's hypotheses with every fourth line (shifted by k) from the large one's:
    the same configuration, another seed."""
    small = (EXAMPLES / "demo-small.zero-shot.hyp").read_text(encoding="utf-8").splitlines()
    large = (EXAMPLES / "demo-large.zero-shot.hyp").read_text(encoding="utf-8").splitlines()
    path = tmp_path / f"seed{k}.hyp"
    lines = [line if (i + k) % 4 else large[i] for i, line in enumerate(small)]
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def _ingest(run_cli, hyp: Path, *extra: str) -> object:
    return run_cli(
        "ingest", "--testset", "demo-test", "--hyp", hyp, "--model-slug", "demo-small",
        "--condition", "zero-shot", "--json", *extra,
    )  # fmt: skip


def test_replicates_of_a_run_form_one_group_with_mean_spread_and_interval(run_cli, demo, tmp_path):
    first = json.loads(run_cli("runs", "show", "demo-small/zero-shot", "--json").stdout)["run_id"]
    for k in (1, 2):
        added = _ingest(run_cli, _variant(tmp_path, k), "--replicate-of", first[:8])
        assert added.exit_code == 0, added.output
    groups = json.loads(run_cli("leaderboard", "--replicates", "--json").stdout)
    assert [g["n_replicates"] for g in groups] == [1, 1, 3]
    group = groups[2]
    assert group["replicate"] == first and group["run_ids"][0] == first
    chrf = group["scores"]["chrf_plus_plus"]
    assert chrf["sd"] > 0 and chrf["ci_lower"] < chrf["mean"] < chrf["ci_upper"]
    assert chrf["mean"] == pytest.approx(sum(chrf["values"]) / 3)
    # A group of one is the run itself, with its stored interval.
    board = {r["run_id"]: r for r in json.loads(run_cli("leaderboard", "--json").stdout)}
    alone = groups[0]
    stored = board[alone["run_ids"][0]]
    assert alone["scores"]["chrf_plus_plus"]["ci_lower"] == pytest.approx(stored["chrf_ci_lower"])
    assert alone["scores"]["chrf_plus_plus"]["sd"] is None
    shown = run_cli("--wide", "leaderboard", "--replicates")
    assert "± " in shown.stdout and "segment and seed noise" in shown.stderr
    markdown = run_cli("leaderboard", "--replicates", "--format", "markdown").stdout
    assert "## tame-wh leaderboard (replicate groups)" in markdown and "| 3 | " in markdown


def test_a_replicate_of_another_configuration_is_refused_and_nothing_is_written(
    run_cli, demo, tmp_path, db_path
):
    before = snapshot(db_path)
    wrong = run_cli(
        "ingest", "--testset", "demo-test", "--hyp", _variant(tmp_path, 1), "--model-slug",
        "demo-large", "--condition", "zero-shot", "--replicate-of", "demo-small/zero-shot",
    )  # fmt: skip
    assert wrong.exit_code == 2 and "replicates repeat one configuration" in wrong.stderr
    assert snapshot(db_path) == before


def test_run_card_seeds_and_replicate_tags_group_runs(run_cli, demo, tmp_path):
    for k in (1, 2):
        card = tmp_path / f"card{k}.json"
        card.write_text(json.dumps({"seed": k}))
        added = run_cli(
            "ingest", "--testset", "demo-test", "--hyp", _variant(tmp_path, k), "--model-slug",
            "demo-small", "--condition", "seeded", "--run-card", card, "--json",
        )  # fmt: skip
        assert added.exit_code == 0, added.output
    groups = json.loads(run_cli("leaderboard", "--replicates", "--json").stdout)
    seeded = [g for g in groups if g["condition"] == "seeded"]
    assert len(seeded) == 1 and seeded[0]["replicate"] == "(seed)"
    assert seeded[0]["n_replicates"] == 2
    # Two runs of one configuration tagged alike are one group too.
    few = json.loads(run_cli("runs", "show", "demo-small/few-shot", "--json").stdout)["run_id"]
    assert run_cli("runs", "tag", few, "replicate=batch-7").exit_code == 0
    tagged = [g for g in json.loads(run_cli("leaderboard", "--replicates", "--json").stdout)
              if g["replicate"] == "batch-7"]  # fmt: skip
    assert [g["run_ids"] for g in tagged] == [[few]]


def test_replicates_take_no_other_ranking_options(run_cli, demo):
    for extra in (["--sort", "bleu"], ["--tag", "a=b"], ["--store", "--clusters"],
                  ["--clusters", "--sort", "mqm"]):  # fmt: skip
        assert run_cli("leaderboard", "--replicates", *extra).exit_code == 2, extra


def test_groups_of_one_run_cluster_as_the_runs_do_under_the_sign_test(run_cli, demo):
    groups = json.loads(run_cli("leaderboard", "--replicates", "--clusters", "--json").stdout)
    runs = json.loads(run_cli("leaderboard", "--clusters", "--method", "sign", "--json").stdout)
    by_run = {r["run_id"]: r for r in runs}
    assert len(groups) == 3
    for group in groups:
        [run_id] = group["run_ids"]
        assert group["cluster"] == by_run[run_id]["cluster"]
        assert group["rank_range"] == by_run[run_id]["rank_range"]
        assert group["clustering"]["method"] == "two-level sign"


def test_replicate_groups_get_clusters_in_every_output(run_cli, demo, tmp_path):
    first = json.loads(run_cli("runs", "show", "demo-small/zero-shot", "--json").stdout)["run_id"]
    for k in (1, 2):
        assert _ingest(run_cli, _variant(tmp_path, k), "--replicate-of", first[:8]).exit_code == 0
    groups = json.loads(run_cli("leaderboard", "--replicates", "--clusters", "--json").stdout)
    assert sorted(len(g["run_ids"]) for g in groups) == [1, 1, 3]
    assert all(g["cluster"] >= 1 and len(g["rank_range"]) == 2 for g in groups)
    table = run_cli("leaderboard", "--replicates", "--clusters", "--sort", "bleu")
    assert table.exit_code == 0 and "two-level sign test" in table.stderr
    markdown = run_cli("leaderboard", "--replicates", "--clusters", "--format", "markdown")
    assert "| cluster | ranks |" in markdown.stdout


def test_compare_replicates_of_single_runs_equals_the_sign_test(run_cli, demo):
    pair = ("demo-small/zero-shot", "demo-small/few-shot")
    groups = json.loads(run_cli("compare", *pair, "--replicates", "--json").stdout)
    tests = json.loads(run_cli("compare", *pair, "--significance", "--json").stdout)
    plain = {t["metric_name"]: t for t in tests["significance"]}
    assert {t["metric"] for t in groups["tests"]} == {
        "chrf_plus_plus", "bleu", "ter", "exact_match_rate",
    }  # fmt: skip
    for found in groups["tests"]:
        single = plain[found["metric"]]
        assert found["p_value"] == single["p_value"]
        assert found["delta"] == pytest.approx(single["delta"])
        assert found["winner"] == single["winner"]


def test_compare_replicates_counts_the_seed_noise(run_cli, demo, tmp_path):
    first = json.loads(run_cli("runs", "show", "demo-small/zero-shot", "--json").stdout)["run_id"]
    for k in (1, 2):
        assert _ingest(run_cli, _variant(tmp_path, k), "--replicate-of", first[:8]).exit_code == 0
    done = run_cli("compare", first, "demo-small/few-shot", "--replicates", "--json")
    assert done.exit_code == 0, done.output
    found = json.loads(done.stdout)
    assert len(found["a"]["run_ids"]) == 3 and len(found["b"]["run_ids"]) == 1
    assert found["method"] == "two-level sign"
    table = run_cli("compare", first, "demo-small/few-shot", "--replicates")
    assert "3 run(s)" in table.stdout and "two-level sign test" in table.stderr
    same = run_cli("compare", first, first, "--replicates")
    assert same.exit_code == 2 and "same replicate group" in same.output
    for extra in (("--method", "paired-bs"), ("--bin", "far")):
        refused = run_cli("compare", first, "demo-small/few-shot", "--replicates", *extra)
        assert refused.exit_code == 2 and "two-level sign test" in refused.output
