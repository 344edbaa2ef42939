"""`tame-wh dashboard --out DIR`: the site's files, rebuilding in place, and bad input."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from tests.conftest import snapshot
from tests.html.conftest import run_ids
from warehouse.analysis.runs import delete_runs_by_ref
from warehouse.cli.main import main
from warehouse.store.schema import open_warehouse

ROOT_EXAMPLES = Path(__file__).resolve().parents[2] / "warehouse" / "examples"


def _dashboard(db, out, *args):
    return CliRunner().invoke(
        main, ["--db", str(db), "dashboard", "--out", str(out), "--json", *map(str, args)]
    )


STATE = "assets/build-state.json"  # what the last build was made from (not a page)


def _files(out):
    found = (p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    return sorted(f for f in found if f != STATE)


def test_dashboard_has_an_index_a_page_per_run_test_set_and_comparison(demo_copy, tmp_path):
    out = tmp_path / "site"
    ids = run_ids(demo_copy)
    large = ids["demo-large/zero-shot"]
    result = _dashboard(demo_copy, out, "--compare", "demo-large", "demo-small/few-shot")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert (doc["runs"], doc["test_sets"], doc["comparisons"]) == (3, 1, 1)
    files = _files(out)
    assert doc["written"] == len(files) == 10 and doc["unchanged"] == doc["removed"] == 0
    assert {"index.html", "assets/vega.js", "assets/tame.js"} <= set(files)
    assert sum(f.startswith("runs/") for f in files) == 3
    assert sum(f.startswith("testsets/") for f in files) == 1
    assert sum(f.startswith("assets/data/") for f in files) == 1
    [model] = [f for f in files if f.startswith("models/")]  # demo-small has two runs
    assert model.startswith("models/demo-small-")
    [compare] = [f for f in files if f.startswith("compare/")]
    assert compare.startswith(f"compare/{large}-vs-")
    index = (out / "index.html").read_text(encoding="utf-8")
    assert f'href="runs/{large}.html"' in index and f'href="{compare}"' in index
    assert "demo-train" in index  # the training corpus the exposure columns refer to
    assert f'href="{model}"' in index and "Models over time" in index


def test_rebuilding_writes_nothing_when_nothing_changed(demo_copy, tmp_path, monkeypatch):
    out = tmp_path / "site"
    assert _dashboard(demo_copy, out).exit_code == 0
    times = {f: (out / f).stat().st_mtime_ns for f in _files(out)}

    def unread(*_args, **_kwargs):
        raise AssertionError("an unchanged dashboard read the pages' data")

    # Nothing changed: the rebuild stops before reading (or rendering) any page.
    monkeypatch.setattr("warehouse.analysis.pages.site_data", unread)
    doc = json.loads(_dashboard(demo_copy, out).stdout)
    assert (doc["written"], doc["unchanged"], doc["removed"]) == (0, len(times), 0)
    assert {f: (out / f).stat().st_mtime_ns for f in _files(out)} == times


def test_any_change_to_the_rows_the_pages_or_the_request_rebuilds(demo_copy, tmp_path):
    out = tmp_path / "site"
    assert _dashboard(demo_copy, out).exit_code == 0
    large = run_ids(demo_copy)["demo-large/zero-shot"]
    # Tier boundaries are stored rows the index and the run pages show.
    con = open_warehouse(demo_copy)
    try:
        con.execute("UPDATE quality_tiers SET min_composite = 0.99 WHERE tier <> 'baseline'")
    finally:
        con.close()
    doc = json.loads(_dashboard(demo_copy, out).stdout)
    assert "index.html" in doc["files"] and f"runs/{large}.html" in doc["files"], doc["files"]
    # A page changed by hand is put back.
    (out / "index.html").write_text("edited", encoding="utf-8")
    assert json.loads(_dashboard(demo_copy, out).stdout)["files"] == ["index.html"]
    # Another comparison asked for is a page more.
    doc = json.loads(
        _dashboard(demo_copy, out, "--compare", "demo-large", "demo-small/few-shot").stdout
    )
    assert any(f.startswith("compare/") for f in doc["files"])


def test_rebuilding_after_a_run_is_deleted_rewrites_only_what_changed(demo_copy, tmp_path):
    out = tmp_path / "site"
    assert (
        _dashboard(demo_copy, out, "--compare", "demo-large", "demo-small/few-shot").exit_code == 0
    )
    gone = run_ids(demo_copy)["demo-small/zero-shot"]
    con = open_warehouse(demo_copy)
    try:
        delete_runs_by_ref(con, ["demo-small/zero-shot"])
    finally:
        con.close()
    doc = json.loads(_dashboard(demo_copy, out, "--compare", "demo-large", "demo-small").stdout)
    # The index and the test set page list runs; the other pages did not change.
    assert sorted(doc["files"]) == ["index.html", next(f for f in _files(out) if "testsets/" in f)]
    assert doc["removed"] == 1 and not (out / "runs" / f"{gone}.html").exists()
    doc = json.loads(_dashboard(demo_copy, out).stdout)
    assert doc["removed"] == 1 and not any(f.startswith("compare/") for f in _files(out))


def test_empty_warehouse_gives_an_index_saying_there_are_no_runs(tmp_path):
    out = tmp_path / "site"
    db = tmp_path / "empty.duckdb"
    assert CliRunner().invoke(main, ["--db", str(db), "init"]).exit_code == 0
    result = _dashboard(db, out)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["runs"] == 0
    assert _files(out) == ["assets/tame.js", "assets/vega.js", "index.html"]
    assert "There are no runs in this warehouse yet" in (out / "index.html").read_text()


def test_a_test_set_without_an_audit_says_no_audit(hostile_db, tmp_path):
    out = tmp_path / "site"
    assert _dashboard(hostile_db, out).exit_code == 0
    [plain] = [p for p in (out / "testsets").iterdir() if p.name.startswith("plain-")]
    assert 'id="no-audit"' in plain.read_text(encoding="utf-8")
    run_page = out / "runs" / f"{run_ids(hostile_db)['plain-model']}.html"
    assert "no audit" in run_page.read_text(encoding="utf-8")
    names = [p.name for p in (out / "testsets").iterdir()]
    assert any(n.startswith("evil-i-set-") for n in names)  # the name made safe for a file


def test_unknown_compare_run_is_one_line_exit_2_and_writes_nothing(demo_copy, tmp_path):
    out = tmp_path / "site"
    before = snapshot(demo_copy)
    result = _dashboard(demo_copy, out, "--compare", "demo-large", "nope")
    assert result.exit_code == 2
    assert result.output.strip().count("\n") == 0 and "unknown run 'nope'" in result.output
    assert not out.exists()
    assert snapshot(demo_copy) == before


def test_compare_of_one_run_with_itself_or_across_test_sets_is_refused(hostile_db, tmp_path):
    out = tmp_path / "site"
    result = _dashboard(hostile_db, out, "--compare", "evil-model", "evil-model")
    assert result.exit_code == 2 and "give two runs" in result.output
    result = _dashboard(hostile_db, out, "--compare", "evil-model", "plain-model")
    assert result.exit_code == 2 and "different test sets" in result.output
    assert not out.exists()


def test_a_folder_holding_other_things_is_refused(demo_copy, tmp_path):
    out = tmp_path / "home"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    result = _dashboard(demo_copy, out)
    assert result.exit_code == 2 and "not empty" in result.output
    assert _files(out) == ["notes.txt"]


def test_text_summary_counts_files(demo_copy, tmp_path):
    out = tmp_path / "site"
    result = CliRunner().invoke(
        main, ["--db", str(demo_copy), "dashboard", "--out", str(out)], catch_exceptions=False
    )
    assert result.exit_code == 0
    assert "9 files written, 0 unchanged, 0 removed (3 runs, 1 test sets" in result.output


def test_dashboard_without_a_warehouse_says_so_and_creates_nothing(tmp_path):
    from click.testing import CliRunner

    from warehouse.cli.main import main

    db, out = tmp_path / "none.duckdb", tmp_path / "site"
    result = CliRunner().invoke(main, ["--db", str(db), "dashboard", "--out", str(out)])
    assert result.exit_code == 2 and "no warehouse at" in result.stderr
    assert not db.exists() and not out.exists()


def test_a_rebuild_through_a_linked_folder_deletes_nothing_outside_the_site(demo_copy, tmp_path):
    out = tmp_path / "site"
    assert _dashboard(demo_copy, out).exit_code == 0
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    unrelated = elsewhere / "notes.html"
    unrelated.write_text("<p>someone else's page</p>", encoding="utf-8")
    (elsewhere / "page.html").symlink_to(unrelated)
    # The site's runs/ folder replaced by a link to a folder of other pages.
    for page in (out / "runs").iterdir():
        page.unlink()
    (out / "runs").rmdir()
    (out / "runs").symlink_to(elsewhere, target_is_directory=True)
    # And a link to an outside page among the test-set pages.
    outside = tmp_path / "outside.html"
    outside.write_text("<p>keep me</p>", encoding="utf-8")
    (out / "testsets" / "gone.html").symlink_to(outside)
    result = _dashboard(demo_copy, out)
    assert result.exit_code == 0, result.output
    assert unrelated.read_text(encoding="utf-8") == "<p>someone else's page</p>"
    assert outside.read_text(encoding="utf-8") == "<p>keep me</p>"
    assert (elsewhere / "page.html").is_symlink()


def test_stored_tie_groups_show_on_the_index(demo_copy, tmp_path, demo_db):
    runner = CliRunner()
    stored = runner.invoke(main, ["--db", str(demo_copy), "leaderboard", "--clusters", "--store"])
    assert stored.exit_code == 0, stored.output
    out = tmp_path / "site"
    assert _dashboard(demo_copy, out).exit_code == 0
    index = (out / "index.html").read_text(encoding="utf-8")
    assert '<th scope="col">cluster</th>' in index and '<th scope="col">ranks</th>' in index
    assert "1 (chrF++)" in index
    plain = tmp_path / "plain-site"
    fresh = demo_db
    assert _dashboard(fresh, plain).exit_code == 0
    assert '<th scope="col">cluster</th>' not in (plain / "index.html").read_text(encoding="utf-8")


def test_replicate_groups_show_their_spread_on_the_index(demo_copy, tmp_path, demo_db):
    runner = CliRunner()
    small = run_ids(demo_copy)["demo-small/zero-shot"]
    refs = tmp_path / "variant.hyp"
    doc = json.loads(
        runner.invoke(main, ["--db", str(demo_copy), "report", small, "--json"]).stdout
    )
    assert doc["run"]["run_id"] == small
    text = (ROOT_EXAMPLES / "demo-small.zero-shot.hyp").read_text(encoding="utf-8").splitlines()
    refs.write_text("\n".join(line.upper() if i % 5 == 0 else line
                              for i, line in enumerate(text)) + "\n", encoding="utf-8")  # fmt: skip
    added = runner.invoke(main, ["--db", str(demo_copy), "ingest", "--testset", "demo-test",
                                 "--hyp", str(refs), "--model-slug", "demo-small",
                                 "--condition", "zero-shot", "--replicate-of", small])  # fmt: skip
    assert added.exit_code == 0, added.output
    out = tmp_path / "site"
    assert _dashboard(demo_copy, out).exit_code == 0
    index = (out / "index.html").read_text(encoding="utf-8")
    assert "Replicate groups" in index and " ± " in index
    plain = tmp_path / "plain"
    fresh = demo_db
    assert _dashboard(fresh, plain).exit_code == 0
    assert "Replicate groups" not in (plain / "index.html").read_text(encoding="utf-8")


def test_the_comparison_page_gives_each_metrics_minimum_detectable_difference(demo_copy, tmp_path):
    out = tmp_path / "site"
    assert _dashboard(demo_copy, out, "--compare", "demo-small/zero-shot",
                      "demo-small/few-shot").exit_code == 0  # fmt: skip
    [page] = list((out / "compare").glob("*.html"))
    html = page.read_text(encoding="utf-8")
    assert '<th scope="col" class=num>MDE</th>' in html
    doc = json.loads(
        CliRunner().invoke(main, ["--db", str(demo_copy), "compare", "demo-small/zero-shot",
                                  "demo-small/few-shot", "--significance", "--json"]).stdout
    )  # fmt: skip
    below = [r for r in doc["significance"] if not r["significant"] and r["mde"] is not None
             and abs(r["delta"]) < r["mde"]]  # fmt: skip
    assert ('id="below-mde"' in html) == bool(below)


def test_a_dashboard_without_a_pull_requests_runs(demo_copy, tmp_path):
    out = tmp_path / "site"
    large = run_ids(demo_copy)["demo-large/zero-shot"]
    tagged = CliRunner().invoke(main, ["--db", str(demo_copy), "runs", "tag", large, "pr=12"])
    assert tagged.exit_code == 0, tagged.output
    doc = json.loads(_dashboard(demo_copy, out, "--exclude-tag", "pr").stdout)
    assert doc["runs"] == 2 and not (out / "runs" / f"{large}.html").exists()
    assert large not in (out / "index.html").read_text(encoding="utf-8")
    # Another filter is another build, not an unchanged one.
    doc = json.loads(_dashboard(demo_copy, out).stdout)
    assert doc["runs"] == 3 and (out / "runs" / f"{large}.html").exists()
    only = json.loads(_dashboard(demo_copy, out, "--tag", "pr=12").stdout)
    assert only["runs"] == 1
