"""`leaderboard --clusters`: tie groups of stored runs per test set, from the CLI and the handle."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from warehouse import ClusterRequest, Warehouse
from warehouse.stats.arrays import load_run_arrays
from warehouse.stats.clusters import tie_groups
from warehouse.stats.resample import BootstrapSettings

EXAMPLES = Path(__file__).resolve().parents[2] / "warehouse" / "examples"


@pytest.fixture
def demo(demo_db):
    """The demo warehouse: three runs on `demo-test`."""
    return demo_db


def _add_systems(db_path: Path, tmp_path: Path, count: int) -> None:
    """`count` more runs on `demo-test`: the references with words dropped at rising rates."""
    refs = (EXAMPLES / "test.es").read_text(encoding="utf-8").splitlines()
    with Warehouse.open(db_path) as wh:
        for k in range(count):
            rng = random.Random(k)
            drop = 0.05 + 0.6 * k / count
            hyps = [" ".join(w for w in r.split() if rng.random() > drop) or "x" for r in refs]
            path = tmp_path / f"m{k}.hyp"
            path.write_text("\n".join(hyps) + "\n", encoding="utf-8")
            wh.ingest(testset="demo-test", hyp=path, model_slug=f"m{k:02d}")


def test_every_run_gets_a_cluster_and_rank_range_by_the_rule(run_cli, demo, db_path, tmp_path):
    _add_systems(db_path, tmp_path, 3)
    result = run_cli("leaderboard", "--clusters", "--json")
    assert result.exit_code == 0, result.stderr
    rows = json.loads(result.stdout)
    assert len(rows) == 6
    scores = [r["chrf_plus_plus"] for r in rows]
    assert scores == sorted(scores, reverse=True)
    assert [r["cluster"] for r in rows] == sorted(r["cluster"] for r in rows)
    assert rows[0]["cluster"] == 1 and rows[-1]["cluster"] > 1
    assert all(r["clustering"]["method"] == "paired-bs" for r in rows)
    # The CLI's answer is the library's on the stored runs.
    with Warehouse.open(db_path, access="read") as wh:
        runs = [load_run_arrays(wh.con, r["run_id"]) for r in rows]
        used = rows[0]["clustering"]["n_bootstrap"]  # as many as the board's decisions needed
        expected = tie_groups(runs, "chrf_plus_plus", settings=BootstrapSettings(n_bootstrap=used))
    assert [[r.best_rank, r.worst_rank] for r in expected.ranks] == [r["rank_range"] for r in rows]
    assert [r.cluster for r in expected.ranks] == [r["cluster"] for r in rows]
    table = run_cli("--wide", "leaderboard", "--clusters")
    assert "cluster" in table.stdout and "ranks" in table.stdout
    assert "best and worst possible rank (paired-bs, holm correction" in table.stderr


def test_lower_is_better_metrics_cluster_lowest_first(run_cli, demo):
    rows = json.loads(run_cli("leaderboard", "--clusters", "--sort", "ter", "--json").stdout)
    assert [r["ter"] for r in rows] == sorted(r["ter"] for r in rows)
    assert rows[0]["rank_range"][0] == 1


def test_the_boards_verdict_does_not_depend_on_the_resample_count(run_cli, demo, db_path, tmp_path):
    _add_systems(db_path, tmp_path, 10)  # 13 runs: 78 pairs
    chosen = run_cli("leaderboard", "--clusters", "--json")
    assert chosen.exit_code == 0
    rows = json.loads(chosen.stdout)
    used = {r["clustering"]["n_bootstrap"] for r in rows}
    # More than the fewest resamples whose smallest p-value reaches alpha/78 (2,000): as many as
    # it takes for every pair's decision to clear its level by Monte-Carlo error, or the cap.
    assert len(used) == 1 and used.pop() > 2000
    assert "resamples instead of 1,000" in chosen.stderr or "(the cap)" in chosen.stderr
    assert any(r["rank_range"] != [1, 13] for r in rows)  # some pairs are separated
    five = run_cli("leaderboard", "--clusters", "--n-bootstrap", "5000", "--json")
    assert five.exit_code == 0
    again = json.loads(five.stdout)
    verdict = [(r["run_id"], r["cluster"], r["rank_range"]) for r in rows]
    assert [(r["run_id"], r["cluster"], r["rank_range"]) for r in again] == verdict
    lenient = run_cli("leaderboard", "--clusters", "--correction", "none", "--json")
    assert lenient.exit_code == 0


def test_a_board_of_one_cluster_says_why(run_cli, demo, db_path, tmp_path):
    refs = (EXAMPLES / "test.es").read_text(encoding="utf-8").splitlines()
    with Warehouse.open(db_path) as wh:
        for k in range(2):  # two systems a word apart on one segment: never separable
            hyps = list(refs)
            hyps[k] = hyps[k] + " extra"
            path = tmp_path / f"near{k}.hyp"
            path.write_text("\n".join(hyps) + "\n", encoding="utf-8")
            wh.ingest(testset="demo-test", hyp=path, model_slug=f"near{k}")
    ids = json.loads(run_cli("leaderboard", "--json").stdout)
    near = [r["run_id"] for r in ids if r["model_slug"].startswith("near")]
    with Warehouse.open(db_path, access="read") as wh:
        [board] = wh.clusters(near, ClusterRequest("chrf"))
    assert {r.cluster for r in board.ranks} == {1}
    assert any("one cluster: no pair separable at 0.05 after holm; the closest pair is" in n
               for n in board.notes), board.notes  # fmt: skip


def test_handle_clusters_name_their_test_set_and_settings(demo, db_path):
    with Warehouse.open(db_path, access="read") as wh:
        ids = [r["run_id"] for r in wh.leaderboard()]
        [board] = wh.clusters(ids, ClusterRequest("bleu", "paired-ar", "bh", 500, 0.1, 3))
    assert board.test_set == "demo-test" and board.metric == "bleu"
    assert (board.settings.n_bootstrap, board.settings.alpha, board.settings.seed) == (500, 0.1, 3)
    assert len(board.pairs) == 3 and board.to_dict()["correction"] == "bh"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--sort", "cost"], "cost has no per-segment form"),
        (["--testset", "demo-test", "--tag", "none=such"], "at least two runs"),
    ],
)
def test_boards_that_cannot_be_clustered_are_one_line_errors(run_cli, demo, args, message):
    result = run_cli("leaderboard", "--clusters", *args)
    assert result.exit_code == 2
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_resampling_options_without_clusters_are_refused(run_cli, demo):
    result = run_cli("leaderboard", "--n-bootstrap", "2000")
    assert result.exit_code == 2 and "--clusters or --replicates" in result.stderr


def _leaderboard(run_cli, *args: str) -> list[dict]:
    done = run_cli("leaderboard", "--json", *args)
    assert done.exit_code == 0, done.output
    return json.loads(done.stdout)


def test_stored_tie_groups_reach_the_leaderboard_and_the_report_until_the_runs_change(
    run_cli, demo, db_path, tmp_path
):
    _add_systems(db_path, tmp_path, 3)
    formed = _leaderboard(run_cli, "--clusters", "--store", "--sort", "ter")
    assert all(r["tie_cluster"] is None for r in formed)  # read before the write
    stored = {r["run_id"]: r for r in _leaderboard(run_cli)}
    for row in formed:
        mine = stored[row["run_id"]]
        assert (mine["tie_metric"], mine["tie_method"], mine["tie_correction"]) == (
            "ter", "paired-bs", "holm",
        )  # fmt: skip
        assert mine["tie_cluster"] == row["cluster"]
        assert [mine["tie_best_rank"], mine["tie_worst_rank"]] == row["rank_range"]
        assert mine["tie_n_runs"] == 6
    first = formed[0]["run_id"]
    report = json.loads(run_cli("report", first, "--json").stdout)
    assert report["tie_group"] == {
        "metric": "ter", "method": "paired-bs", "correction": "holm",
        "cluster": formed[0]["cluster"], "rank_range": formed[0]["rank_range"], "n_runs": 6,
    }  # fmt: skip
    # Another run on the test set: the stored board no longer holds its runs.
    late = tmp_path / "late.hyp"
    late.write_text((EXAMPLES / "test.es").read_text(encoding="utf-8").upper(), encoding="utf-8")
    assert (
        run_cli("ingest", "--testset", "demo-test", "--hyp", late, "--model-slug", "late").exit_code
        == 0
    )
    assert all(r["tie_cluster"] is None for r in _leaderboard(run_cli))
    with Warehouse.open(db_path, access="read") as wh:
        assert wh.query("SELECT count(*) AS n FROM run_clusters")[0]["n"] == 6  # kept, not shown
        [signature] = wh.query("SELECT DISTINCT signature FROM run_clusters")
        assert "tok:tercom" in signature["signature"]  # TER's sacrebleu signature
    # Deleting a run of a board deletes the board.
    assert run_cli("runs", "delete", first, "--yes").exit_code == 0
    with Warehouse.open(db_path, access="read") as wh:
        assert wh.query("SELECT count(*) AS n FROM run_clusters")[0]["n"] == 0


def test_store_needs_clusters(run_cli, demo):
    done = run_cli("leaderboard", "--store")
    assert done.exit_code == 2 and "add --clusters" in done.output


def test_tie_groups_on_the_composite_follow_the_rule(run_cli, demo, db_path, tmp_path):
    _add_systems(db_path, tmp_path, 3)
    rows = _leaderboard(run_cli, "--clusters", "--sort", "composite", "--method", "sign")
    composites = [r["composite_score"] for r in rows]
    assert composites == sorted(composites, reverse=True)
    with Warehouse.open(db_path, access="read") as wh:
        [board] = wh.clusters([r["run_id"] for r in rows],
                              ClusterRequest("composite", "sign", "holm"))  # fmt: skip
    assert board.metric == "composite" and len(board.pairs) == 15
    beats = {(p.winner, p.run_b if p.winner == p.run_a else p.run_a) for p in board.pairs
             if p.winner is not None}  # fmt: skip
    ids = [r["run_id"] for r in rows]
    for row in rows:
        beaten_by = sum((other, row["run_id"]) in beats for other in ids)
        beating = sum((row["run_id"], other) in beats for other in ids)
        assert row["rank_range"] == [1 + beaten_by, len(ids) - beating]
    assert rows[0]["cluster"] == 1 and rows[-1]["cluster"] > 1
    refused = run_cli("leaderboard", "--clusters", "--sort", "composite", "--method", "paired-ar")
    assert refused.exit_code == 2 and "--method sign or paired-bs" in refused.output
