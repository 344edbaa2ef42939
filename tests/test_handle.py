"""The `Warehouse` handle: open for writing or reading, the main verbs, results as rows, Arrow,
pandas and polars, on a file and on a lake; the package's front exports it lazily."""

from __future__ import annotations

import shutil
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pyarrow as pa
import pytest

import warehouse
from warehouse import Rows, Warehouse
from warehouse.errors import MissingWarehouseError, SchemaError, UsageError


@pytest.fixture
def files(tmp_path: Path) -> Path:
    """The bundled example's files in a folder of the test's own."""
    folder = tmp_path / "files"
    with resources.as_file(resources.files("warehouse") / "examples") as examples:
        shutil.copytree(examples, folder)
    return folder


def _fill(wh: Warehouse, files: Path) -> str:
    """Corpus, test set, audit and one run through the handle; the run's id."""
    assert wh.add_corpus("tr", files / "train.en", files / "train.es").action == "added"
    added = wh.add_test_set(
        "ts", files / "test.en", [files / "test.es"], segments_meta=files / "test.meta.jsonl"
    )
    assert added.corpus.n_segments == 40
    assert wh.audit("tr", "ts").action == "computed"
    run = wh.ingest(
        testset="ts",
        hyp=files / "demo-large.zero-shot.hyp",
        model_slug="demo-large",
        run_card=files / "demo-large.zero-shot.run_card.json",
    )
    assert run.action == "added" and run.intervals
    return run.run_id


def test_a_script_writes_then_reads_a_warehouse_through_the_handle(new_db_path, files):
    with Warehouse.open(new_db_path) as wh:
        run_id = _fill(wh, files)
    with pytest.raises(UsageError, match="closed"):
        _ = wh.con
    with Warehouse.open(new_db_path, access="read") as wh:
        board = wh.leaderboard()
        assert isinstance(board, Rows) and len(board) == 1
        assert board[0]["run_id"] == run_id and board[0]["train_corpus"] == "tr"
        assert [r.model_slug for r in wh.runs(testset="ts")] == ["demo-large"]
        report = wh.report("demo-large")
        assert report["run"]["run_id"] == run_id and report["gengap"] is not None
        rows = wh.query(
            "SELECT bin, n_segments FROM run_bins WHERE run_id = ? ORDER BY 1", [run_id]
        )
        assert sum(r["n_segments"] for r in rows if r["bin"] != "all") == 40
        table = rows.arrow()
        assert isinstance(table, pa.Table) and table.column_names == ["bin", "n_segments"]
        assert rows.df()["n_segments"].tolist() == [r["n_segments"] for r in rows]
        assert rows.pl()["bin"].to_list() == [r["bin"] for r in rows]
        with pytest.raises(UsageError, match="access='write'"):
            wh.add_corpus("x", files / "train.en", files / "train.es")


def test_a_reader_needs_an_existing_warehouse_of_this_schema(tmp_path, db_path):
    missing = tmp_path / "missing.duckdb"
    with pytest.raises(MissingWarehouseError):
        Warehouse.open(missing, access="read")
    assert not missing.exists()
    import duckdb

    con = duckdb.connect(str(db_path))
    con.execute(
        "DELETE FROM schema_version WHERE version = (SELECT max(version) FROM schema_version)"
    )
    con.close()
    with pytest.raises(SchemaError, match="tame-wh init"):
        Warehouse.open(db_path, access="read")
    with pytest.raises(UsageError, match="access"):
        Warehouse.open(db_path, access="append")  # type: ignore[arg-type]


def test_the_handle_writes_and_reads_a_lake(lake, files):
    with Warehouse.open(lake.db, data_path=lake.data_path) as wh:
        run_id = _fill(wh, files)
    with Warehouse.open(lake.db, access="read") as wh:
        assert [r["run_id"] for r in wh.leaderboard()] == [run_id]
        snapshot = wh.query("SELECT max(snapshot_id) AS s FROM ducklake_snapshots('tame')")[0]["s"]
    with Warehouse.open(lake.db, access="read", as_of=str(snapshot)) as wh:
        assert len(wh.runs()) == 1


def test_the_package_front_names_the_handle_without_loading_it_for_others():
    assert warehouse.Warehouse is Warehouse and "Warehouse" in warehouse.__all__
    code = (
        "import sys, warehouse.store.schema; print('warehouse.handle' in sys.modules); "
        "import warehouse; warehouse.Warehouse; print('warehouse.handle' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True"]
    with pytest.raises(AttributeError):
        _ = warehouse.NoSuchName  # type: ignore[attr-defined]


def test_audit_options_and_execution_reach_the_audit_and_its_index(new_db_path, files, tmp_path):
    from warehouse import AuditOptions, Execution, NormalizationConfig

    with Warehouse.open(new_db_path) as wh:
        _fill(wh, files)
        chosen = AuditOptions(
            orders=(2, 3), near=0.6, normalization=NormalizationConfig(casefold=True)
        )
        said: list[str] = []
        result = wh.audit(
            "tr", "ts", chosen, execution=Execution(threads=1, shard_rows=7), notify=said.append
        )
        assert result.action == "computed"
        assert "grams:char2-3" in result.signature and "near0.6" in result.signature
        assert "casefold" in result.signature and any(
            "stored the training index" in m for m in said
        )
        assert len(wh.tm_hypotheses(result.audit_id)) == 40
        # The same choices again: the stored audit, whatever the execution.
        assert wh.audit("tr", "ts", chosen, execution=Execution(threads=2)).action == "unchanged"
    with Warehouse.open(new_db_path, access="read") as wh:
        built = wh.build_index("tr", AuditOptions(orders=(4,)))
        assert [f["action"] for f in built.files] == ["built"]
        keys = {i.key for i in wh.stored_indexes()}
        assert {f["key"] for f in built.files} <= keys
        dropped = wh.drop_indexes(key=built.files[0]["key"])
        assert [i.key for i in dropped] == [built.files[0]["key"]]
        site = wh.dashboard(tmp_path / "site")
        assert site.runs == 1 and (tmp_path / "site" / "index.html").is_file()
        page = wh.report_html("demo-large", tmp_path / "run.html")
        assert page.written and (tmp_path / "run.html").stat().st_size == page.bytes
