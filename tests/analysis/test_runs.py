"""Runs are manageable (show, tag, delete, named by model slug) and exposure columns name the
training corpus they refer to, chosen by a stated rule."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import snapshot

ROOT_EXAMPLES = Path(__file__).resolve().parents[2] / "warehouse" / "examples"

EXAMPLES = Path(__file__).resolve().parents[2] / "warehouse" / "examples"


@pytest.fixture
def demo(demo_db):
    """The demo warehouse: three runs of two models on `demo-test`, audited against
    `demo-train`."""
    return demo_db


def _ids(run_cli) -> dict[str, str]:
    """`model/condition` → run id."""
    runs = json.loads(run_cli("runs", "list", "--json").stdout)
    return {f"{r['model_slug']}/{r['condition']}": r["run_id"] for r in runs}


def test_a_run_is_named_by_its_model_slug_when_that_is_unique(run_cli, demo):
    ids = _ids(run_cli)
    shown = json.loads(run_cli("runs", "show", "demo-large", "--json").stdout)
    assert shown["run_id"] == ids["demo-large/zero-shot"]
    by_condition = json.loads(run_cli("runs", "show", "demo-small/few-shot", "--json").stdout)
    assert by_condition["run_id"] == ids["demo-small/few-shot"]
    ambiguous = run_cli("runs", "show", "demo-small")
    assert ambiguous.exit_code == 2 and "names 2 runs" in ambiguous.stderr
    report = json.loads(run_cli("report", "demo-large", "--json").stdout)
    assert report["run"]["run_id"] == ids["demo-large/zero-shot"]
    compared = run_cli("compare", "demo-large", "demo-small/zero-shot", "--json")
    assert compared.exit_code == 0, compared.output
    assert [r["run_id"] for r in json.loads(compared.stdout)["runs"]] == [
        ids["demo-large/zero-shot"],
        ids["demo-small/zero-shot"],
    ]


def test_tags_are_stored_listed_filtered_and_removed(run_cli, demo):
    tagged = run_cli("runs", "tag", "demo-large", "paper=acl", "stage=final", "--json")
    assert json.loads(tagged.stdout)["tags"] == {"paper": "acl", "stage": "final"}
    listed = json.loads(run_cli("runs", "list", "--tag", "paper=acl", "--json").stdout)
    assert [r["model_slug"] for r in listed] == ["demo-large"]
    assert listed[0]["tags"] == {"paper": "acl", "stage": "final"}
    board = json.loads(run_cli("leaderboard", "--tag", "stage=final", "--json").stdout)
    assert [r["model_slug"] for r in board] == ["demo-large"]
    assert board[0]["tags"] == {"paper": "acl", "stage": "final"}
    in_sql = json.loads(
        run_cli("query", "SELECT key, value FROM run_tags ORDER BY key", "--json").stdout
    )
    assert in_sql == [{"key": "paper", "value": "acl"}, {"key": "stage", "value": "final"}]
    run_cli("runs", "tag", "demo-large", "--remove", "stage")
    assert json.loads(run_cli("runs", "list", "--tag", "stage=final", "--json").stdout) == []
    bad = run_cli("runs", "tag", "demo-large", "no-equals-sign")
    assert bad.exit_code == 2 and "KEY=VALUE" in bad.stderr


def test_runs_tagged_at_ingest_are_kept_off_the_board_by_exclude_tag(run_cli, demo):
    hyp = ROOT_EXAMPLES / "demo-large.zero-shot.hyp"
    done = run_cli("ingest", "--testset", "demo-test", "--hyp", hyp, "--model-slug", "pr-run",
                   "--tag", "pr=17", "--tag", "branch=feat/x", "--json")  # fmt: skip
    assert done.exit_code == 0, done.output
    [run] = json.loads(done.stdout)
    listed = json.loads(run_cli("runs", "list", "--tag", "pr=17", "--json").stdout)
    assert [(r["run_id"], r["tags"]) for r in listed] == [
        (run["run_id"], {"branch": "feat/x", "pr": "17"})
    ]

    def board(*args: str) -> list[str]:
        return [r["model_slug"] for r in json.loads(run_cli("leaderboard", *args, "--json").stdout)]

    assert "pr-run" in board()
    assert "pr-run" not in board("--exclude-tag", "pr")  # any value of the key
    assert "pr-run" not in board("--exclude-tag", "pr=17")
    assert "pr-run" in board("--exclude-tag", "pr=18")
    assert board("--tag", "pr=17", "--exclude-tag", "branch") == []
    # Tagging again at a re-ingest of the same run adds to its tags.
    again = run_cli("ingest", "--testset", "demo-test", "--hyp", hyp, "--model-slug", "pr-run",
                    "--tag", "pr=18", "--json")  # fmt: skip
    assert json.loads(again.stdout)[0]["action"] == "unchanged"
    shown = json.loads(run_cli("runs", "show", run["run_id"], "--json").stdout)
    assert shown["tags"] == {"branch": "feat/x", "pr": "18"}
    for bad, said in ((["--tag", "replicate=a"], "--replicate-of"), (["--tag", "x"], "KEY=VALUE")):
        refused = run_cli("ingest", "--testset", "demo-test", "--hyp", hyp, "--model-slug", "q",
                          *bad)  # fmt: skip
        assert refused.exit_code == 2 and said in refused.stderr, refused.output


def test_delete_removes_everything_of_the_run_and_dry_run_nothing(run_cli, demo, db_path):
    run_id = _ids(run_cli)["demo-large/zero-shot"]
    before = snapshot(db_path)
    dry = json.loads(run_cli("runs", "delete", "demo-large", "--dry-run", "--json").stdout)
    assert dry["run_ids"] == [run_id] and dry["rows"]["hypotheses"] == 40 and dry["dry_run"]
    assert snapshot(db_path) == before
    done = run_cli("runs", "delete", run_id)
    assert done.exit_code == 0 and f"deleted 1 run(s): {run_id}" in done.stdout
    after = snapshot(db_path)
    for table, rows in after.items():
        assert not any(run_id in map(str, row) for row in rows), table
    assert len(_ids(run_cli)) == 2


def test_exposure_columns_name_their_training_corpus_by_a_stated_rule(run_cli, demo, write_lines):
    src = write_lines("s.en", (EXAMPLES / "train.en").read_text().splitlines()[:60])
    tgt = write_lines("s.es", (EXAMPLES / "train.es").read_text().splitlines()[:60])
    assert run_cli("corpus", "add", "small-train", "--src", src, "--tgt", tgt).exit_code == 0
    # Audited last, but smaller: the default stays with the largest audited corpus.
    assert run_cli("audit", "--train", "small-train", "--testset", "demo-test").exit_code == 0
    default = json.loads(run_cli("leaderboard", "--json").stdout)
    assert {r["train_corpus"] for r in default} == {"demo-train"}
    chosen = json.loads(run_cli("leaderboard", "--train", "small-train", "--json").stdout)
    assert {r["train_corpus"] for r in chosen} == {"small-train"}
    by_run = {r["run_id"]: r for r in default}
    assert any(r["delta_tm_bleu"] != by_run[r["run_id"]]["delta_tm_bleu"] for r in chosen), (
        "the small corpus gives other TM baselines"
    )
    table = run_cli("leaderboard")
    assert "largest audited training corpus" in table.stderr
    report = run_cli("report", "demo-large")
    assert "exposure to training corpus 'demo-train'" in report.stdout
    assert "largest audited training corpus" in report.stdout
    small = json.loads(run_cli("report", "demo-large", "--train", "small-train", "--json").stdout)
    assert small["exposure"]["train_corpus"] == "small-train"
    unknown = run_cli("leaderboard", "--train", "nope")
    assert unknown.exit_code == 2 and "unknown training corpus 'nope'" in unknown.stderr


def test_significance_per_exposure_bin_tests_only_that_bins_segments(run_cli, demo):
    far = json.loads(
        run_cli("query", "SELECT count(*) AS n FROM exposures WHERE bin = 'far'", "--json").stdout
    )[0]["n"]
    args = ("significance", "demo-large", "demo-small/few-shot", "--n-bootstrap", "200")
    result = run_cli(*args, "--bin", "far", "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["n_segments"] == far and doc["pairs"][0]["n_segments"] == far
    assert all("[far bin]" in r["label"] for r in doc["runs"])
    whole = json.loads(run_cli(*args, "--json").stdout)
    assert whole["n_segments"] == 40 and whole["metrics"] != doc["metrics"]
    unknown_train = run_cli(*args, "--bin", "far", "--train", "nope")
    assert unknown_train.exit_code == 2


def test_a_slug_that_names_runs_on_two_test_sets_says_how_to_name_one(run_cli, write_lines):
    for name in ("dev", "test"):
        src = write_lines(f"{name}.src", [f"{name} one", f"{name} two"])
        ref = write_lines(f"{name}.ref", [f"{name} uno", f"{name} dos"])
        assert run_cli("testset", "add", name, "--src", src, "--ref", ref).exit_code == 0
        added = run_cli(
            "ingest", "--testset", name, "--hyp", ref, "--model-slug", "m", "--condition", "c"
        )
        assert added.exit_code == 0, added.output
    ambiguous = run_cli("report", "m/c")
    assert ambiguous.exit_code == 2
    assert "names 2 runs" in ambiguous.stderr
    assert "--testset NAME (test sets: dev, test)" in ambiguous.stderr
    assert "MODEL/CONDITION" not in ambiguous.stderr  # the form that just failed
    one = json.loads(run_cli("report", "m/c", "--testset", "test", "--json").stdout)
    assert (
        one["run"]["test_corpus_id"]
        != json.loads(run_cli("report", "m", "--testset", "dev", "--json").stdout)["run"][
            "test_corpus_id"
        ]
    )
    shown = run_cli("runs", "show", "m", "--testset", "dev", "--json")
    assert shown.exit_code == 0 and json.loads(shown.stdout)["test_set"] == "dev"
    assert run_cli("runs", "show", "m", "--testset", "nope").exit_code == 2


def test_runs_show_prints_the_ci_metadata(run_cli, write_lines, monkeypatch):
    src = write_lines("s", ["one", "two"])
    assert run_cli("testset", "add", "t", "--src", src, "--ref", src).exit_code == 0
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_SHA", "a" * 40)
    monkeypatch.setenv("GITHUB_RUN_ID", "4242")
    assert run_cli("ingest", "--testset", "t", "--hyp", src, "--model-slug", "m").exit_code == 0
    shown = run_cli("runs", "show", "m").stdout
    assert f"ci commit: {'a' * 40}" in shown and "ci run_id: 4242" in shown
