"""Every command on each backend: a local file, a lake with a directory data path, and a lake on
the S3-compatible server (`warehouse` fixture, tests/backends.py). Outputs must not depend on the
backend; on a lake the constraints the local schema declares hold all the same."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.backends import BACKENDS, Warehouse
from tests.conftest import VOCABULARY
from warehouse.cli.main import main
from warehouse.store.connection import close_connection, connect
from warehouse.store.lake_dialect import violations


def _sentence(rng: random.Random, n: int = 7) -> str:
    return " ".join(rng.choice(VOCABULARY) for _ in range(n))


@pytest.fixture
def texts(tmp_path: Path) -> dict[str, Path]:
    """A training corpus (60 pairs), a test set (24 segments, 4 copied from training) and two
    systems' hypotheses."""
    rng = random.Random(7)
    train_src = [_sentence(rng) for _ in range(60)]
    train_tgt = [s.upper() for s in train_src]
    test_src = train_src[:4] + [_sentence(rng) for _ in range(20)]
    test_ref = [s.upper() for s in test_src]
    good = [r if i % 3 else r.lower() for i, r in enumerate(test_ref)]
    bad = [_sentence(rng).upper() if i % 4 else r for i, r in enumerate(test_ref)]
    files = {
        "train_src": train_src,
        "train_tgt": train_tgt,
        "test_src": test_src,
        "test_ref": test_ref,
        "good": good,
        "bad": bad,
    }
    out = {}
    for name, lines in files.items():
        path = tmp_path / f"{name}.txt"
        path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        out[name] = path
    return out


def _ok(result, *words: str) -> str:
    """The command succeeded (output shown otherwise) and said each word; its standard output
    (a slow command's progress lines go to stderr)."""
    assert result.exit_code == 0, result.output
    for word in words:
        assert word in result.output, result.output
    return result.stdout


def _load(wh: Warehouse, texts: dict[str, Path]) -> list[str]:
    """Corpus, test set, audit and two runs of one model, the second worse; the run ids."""
    _ok(
        wh.run("corpus", "add", "tr", "--src", texts["train_src"], "--tgt", texts["train_tgt"]),
        "tr",
    )
    _ok(wh.run("testset", "add", "ts", "--src", texts["test_src"], "--ref", texts["test_ref"]))
    _ok(wh.run("audit", "--train", "tr", "--testset", "ts"), "audited")
    ids = []
    for system in ("good", "bad"):
        out = wh.run(
            "ingest", "--testset", "ts", "--hyp", texts[system], "--model-slug", "sys", "--json"
        )
        ids.append(json.loads(_ok(out))[0]["run_id"])
    return ids


def _constraints_hold(wh: Warehouse) -> None:
    con = connect(wh.address, read_only=True)
    try:
        assert violations(con) == []
    finally:
        close_connection(con)


@pytest.mark.parametrize("new_warehouse", BACKENDS, indirect=True)  # the data path matters
def test_init_creates_then_is_up_to_date(new_warehouse):
    _ok(new_warehouse.run("init"), "created warehouse", "schema version")
    again = json.loads(_ok(new_warehouse.run("init", "--json")))
    assert again["created"] is False and again["upgraded"] is False
    assert (
        new_warehouse.sql("SELECT max(version) FROM schema_version")[0][0]
        == again["schema_version"]
    )


def test_every_command_on_every_backend(warehouse, texts, tmp_path):
    good, bad = _load(warehouse, texts)
    _ok(warehouse.run("corpus", "list"), "tr")
    _ok(warehouse.run("testset", "show", "ts"), "ts")
    baseline = tmp_path / "tm.txt"
    _ok(warehouse.run("tm-baseline", "--train", "tr", "--testset", "ts", "--out", baseline))
    assert len(baseline.read_text(encoding="utf-8").splitlines()) == 24
    listed = json.loads(_ok(warehouse.run("runs", "list", "--json")))
    assert sorted(r["run_id"] for r in listed) == sorted([good, bad])
    _ok(warehouse.run("runs", "tag", good, "team=mt"))
    _ok(warehouse.run("runs", "show", good), "team")
    report = json.loads(_ok(warehouse.run("report", good, "--json")))
    assert report["run"]["run_id"] == good and report["run"]["model_slug"] == "sys"
    _ok(warehouse.run("report", good, "--html", tmp_path / "r.html"))
    assert (tmp_path / "r.html").stat().st_size > 1000
    board = json.loads(_ok(warehouse.run("leaderboard", "--json")))
    assert board[0]["run_id"] == good
    assert board[0]["train_corpus"] == "tr" and board[0]["tags"] == {"team": "mt"}
    _ok(warehouse.run("compare", good, bad), good[:8])
    _ok(warehouse.run("significance", good, bad, "--n-bootstrap", "100"))
    dropped = warehouse.run("regressions", "--latest", "--fail-on-regression", "--json")
    assert dropped.exit_code == 1, dropped.output
    assert bad in dropped.output and good in dropped.output
    rows = json.loads(_ok(warehouse.run("query", "SELECT count(*) AS n FROM segments", "--json")))
    assert rows == [{"n": 60 + 24}]
    _ok(warehouse.run("dashboard", "--out", tmp_path / "site"))
    assert (tmp_path / "site" / "index.html").exists()
    _ok(warehouse.run("runs", "delete", bad, "--yes"))
    assert [r[0] for r in warehouse.sql("SELECT run_id FROM runs")] == [good]
    assert warehouse.sql("SELECT count(*) FROM hypotheses WHERE run_id = ?", [bad]) == [(0,)]
    _constraints_hold(warehouse)


def test_documents_and_the_containment_lens_on_every_backend(warehouse, texts, tmp_path):
    good, _bad = _load(warehouse, texts)
    lines = texts["train_src"].read_text(encoding="utf-8").splitlines()
    docs = tmp_path / "docs.jsonl"
    docs.write_text(
        "".join(json.dumps({"text": "\n".join(lines[k : k + 20])}) + "\n"
                for k in range(0, len(lines), 20)),
        encoding="utf-8",
    )  # fmt: skip
    _ok(warehouse.run("corpus", "add", "web", "--text", docs, "--lang", "en"), "web")
    audited = warehouse.run("audit", "--train", "web", "--testset", "ts", "--json")
    _ok(audited)  # a lake's audit says on stderr what it did with the index
    assert "|measure:containment|" in json.loads(audited.stdout)["signature"]
    _ok(warehouse.run("audit", "--train", "tr", "--testset", "ts", "--measure", "containment"))
    report = json.loads(_ok(warehouse.run("report", good, "--train", "tr", "--json")))
    lenses = report["exposure"]["lenses"]
    assert lenses["jaccard_audit_id"] == report["exposure"]["audit_id"]
    assert lenses["segments"] == 24
    board = json.loads(_ok(warehouse.run("leaderboard", "--bin-by", "containment", "--json")))
    assert {r["audit_measure"] for r in board} == {"containment"}
    rows = warehouse.sql("SELECT count(*) FROM exposure_lenses")
    assert rows == [(24,)]
    _constraints_hold(warehouse)


def test_the_same_run_twice_is_stored_once(warehouse, texts):
    _ok(
        warehouse.run(
            "testset", "add", "ts", "--src", texts["test_src"], "--ref", texts["test_ref"]
        )
    )
    args = (
        "ingest",
        "--testset",
        "ts",
        "--hyp",
        texts["good"],
        "--model-slug",
        "m",
        "--no-intervals",
    )
    _ok(warehouse.run(*args), "ingested")
    _ok(warehouse.run(*args), "already ingested")
    assert warehouse.sql("SELECT count(*) FROM runs") == [(1,)]
    assert warehouse.sql("SELECT count(*) FROM hypotheses") == [(24,)]


def test_replacing_a_test_set_removes_its_runs_and_audits(warehouse, texts):
    _load(warehouse, texts)
    replaced = warehouse.run(
        "testset", "add", "ts", "--src", texts["test_src"], "--ref", texts["good"], "--replace",
        "--yes",
    )  # fmt: skip
    _ok(replaced, "replaced test set 'ts'")
    assert warehouse.sql("SELECT count(*) FROM runs") == [(0,)]
    assert warehouse.sql("SELECT count(*) FROM audits") == [(0,)]
    assert warehouse.sql("SELECT count(*) FROM corpora WHERE name = 'ts'") == [(1,)]
    _constraints_hold(warehouse)


@pytest.mark.parametrize("warehouse", BACKENDS, indirect=True)  # the data path matters
def test_demo_and_doctor(warehouse):
    _ok(warehouse.run("demo"), "leaderboard")
    _ok(warehouse.run("demo"), "already")
    doctor = json.loads(_ok(warehouse.run("doctor", "--json")))
    assert doctor["ok"] is True
    wh = doctor["warehouse"]
    assert wh["schema_version"] == wh["code_schema_version"]
    if warehouse.is_lake:
        assert wh["backend"] == "ducklake" and wh["format_version"]
        assert wh["catalog_reachable"] and wh["storage_reachable"]
        assert wh["constraint_violations"] == []
        assert wh["data_path"] == warehouse.address.data_path
        # Without --data-path the catalog's data path is read, and its storage named for it.
        bare = CliRunner().invoke(main, ["--db", warehouse.db, "doctor", "--json"])
        found = json.loads(_ok(bare))["warehouse"]
        assert found["data_path"] == warehouse.address.data_path
        if warehouse.kind == "lake-s3":
            assert found["storage"].startswith("http://127.0.0.1") and "region" in found["storage"]
        else:
            assert found["storage"] == "directory"
    else:
        assert wh["backend"] == "duckdb-file"


@pytest.mark.parametrize("demo_warehouse", BACKENDS, indirect=True)  # the data path matters
def test_query_stays_read_only_and_fenced(demo_warehouse, tmp_path):
    warehouse = demo_warehouse
    for sql in (
        "SELECT * FROM read_csv('/etc/passwd')",
        "SELECT * FROM duckdb_secrets()",
        "SELECT * FROM __ducklake_metadata_tame.tame_lake.ducklake_snapshot",
        "SELECT * FROM __ducklake_metadata_tame.ducklake_snapshot",
        "SELECT * FROM ducklake_snapshots('tame')",
        "INSERT INTO runs SELECT * FROM runs",
    ):
        refused = warehouse.run("query", sql)
        assert refused.exit_code == 2, (sql, refused.output)
    out = tmp_path / "board.parquet"
    _ok(warehouse.run("query", "FROM leaderboard", "--format", "parquet", "--out", out))
    assert out.stat().st_size > 0


def test_sync_sends_the_leaderboard(demo_warehouse, pg_dsn):
    warehouse = demo_warehouse
    _ok(warehouse.run("migrate", "--dsn", pg_dsn))
    sent = json.loads(_ok(warehouse.run("sync", "--dsn", pg_dsn, "--json")))
    assert sent["sent_runs"] == 3 and sent["total_runs"] == 3
    again = json.loads(_ok(warehouse.run("sync", "--dsn", pg_dsn, "--json")))
    assert again["sent_runs"] == 0 and again["unchanged_runs"] == 3
    full = json.loads(_ok(warehouse.run("sync", "--dsn", pg_dsn, "--full", "--json")))
    assert full["sent_runs"] == 3
    assert warehouse.sql("SELECT count(*) FROM sync_state") == [(3,)]
    _constraints_hold(warehouse)


def test_as_of_reads_the_past_on_a_lake_and_is_refused_on_a_file(warehouse, texts):
    _ok(
        warehouse.run(
            "testset", "add", "ts", "--src", texts["test_src"], "--ref", texts["test_ref"]
        )
    )
    first = json.loads(
        _ok(
            warehouse.run(
                "ingest", "--testset", "ts", "--hyp", texts["good"], "--model-slug", "a", "--json"
            )
        )
    )[0]["run_id"]
    if not warehouse.is_lake:
        refused = warehouse.run("leaderboard", "--as-of", "1")
        assert refused.exit_code == 2 and "keeps no history" in refused.output
        assert warehouse.run("query", "SELECT 1", "--as-of", "2026-01-01").exit_code == 2
        assert warehouse.run("report", first, "--as-of", "1").exit_code == 2
        return
    snapshot = warehouse.sql("SELECT max(snapshot_id) FROM ducklake_snapshots('tame')")[0][0]
    _ok(warehouse.run("ingest", "--testset", "ts", "--hyp", texts["bad"], "--model-slug", "b"))
    now = json.loads(_ok(warehouse.run("leaderboard", "--json")))
    then = json.loads(_ok(warehouse.run("leaderboard", "--json", "--as-of", str(snapshot))))
    assert len(now) == 2 and [r["run_id"] for r in then] == [first]
    rows = json.loads(
        _ok(
            warehouse.run(
                "query", "SELECT count(*) AS n FROM runs", "--json", "--as-of", str(snapshot)
            )
        )
    )
    assert rows == [{"n": 1}]
    _ok(warehouse.run("report", first, "--as-of", str(snapshot)))
    old = warehouse.run("leaderboard", "--as-of", "2000-01-01")
    assert old.exit_code == 2 and "no such snapshot" in old.output
    bad = warehouse.run("leaderboard", "--as-of", "yesterday")
    assert bad.exit_code == 2 and "--as-of" in bad.output
