"""`audit --memory-limit`: the shard size that fits a budget, and audits that search
shards one at a time with the results of the unsharded audit."""

from __future__ import annotations

import gc
import subprocess
import sys
from pathlib import Path

import pytest

from tests.exposure.audited import audited, loaded_warehouse
from tests.exposure.synthetic_corpus import make_corpus
from warehouse.errors import UsageError
from warehouse.exposure.execution import Execution
from warehouse.exposure.index import stored
from warehouse.exposure.index.memory import (
    BUILD_PER_TEXT_BYTE,
    PER_ROW,
    current_rss,
    index_budget,
    release_cached_blocks,
    shard_size,
)
from warehouse.exposure.index.shards import ShardedIndex
from warehouse.store.corpora import get_corpus, training_text_bytes
from warehouse.store.schema import open_warehouse

EXPOSURE_COLUMNS = (
    "seg_idx, source_exposure, source_nn, source_exact, target_exposure, target_nn, "
    "target_ref_idx, target_exact, pair_exposure, pair_nn, pair_exact, tm_hyp_idx, bin"
)


def test_shard_size_fits_the_budget():
    rows, text = 10_000, 1_000_000  # 100 bytes of text per row
    per_row = BUILD_PER_TEXT_BYTE * 100 + PER_ROW
    fit = shard_size(per_row * 1234 + 5, rows, text)
    assert fit.rows == 1234 and fit.build_bytes <= per_row * 1234 + 5
    assert fit.index_bytes < fit.build_bytes
    assert shard_size(10**12, rows, text).rows == rows
    assert shard_size(1, rows, text).rows == 1


def test_the_peak_is_this_programs_own_not_its_parents():
    # A process started by subprocess (vfork and exec) inherits its parent's ru_maxrss; a
    # tame-wh started by a large process must still report only what it used itself.
    held = bytearray(600 * 2**20)
    held[::4096] = b"\x01" * len(held[::4096])
    said = subprocess.run(
        [
            sys.executable,
            "-c",
            "from warehouse.exposure.index.memory import peak_rss; print(peak_rss())",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert 0 < int(said.stdout) < 300 * 2**20
    assert len(held) == 600 * 2**20


def test_a_limit_below_what_the_process_holds_is_refused():
    with pytest.raises(UsageError, match="leaves no room for an index"):
        index_budget(current_rss())


@pytest.fixture
def con(db_path, write_lines):
    """A warehouse with a 250-pair training corpus and a 30-segment test set."""
    corpus = make_corpus(n_train=250, n_test=30, seed=8, n_refs=2)
    con = loaded_warehouse(db_path, write_lines, corpus)
    yield con
    con.close()


def _audit(con, **execution):
    return audited(con, EXPOSURE_COLUMNS, **execution)


def _small_budget(monkeypatch, con, rows_per_shard: int) -> None:
    """Make the index budget hold about `rows_per_shard` training rows."""
    train = get_corpus(con, "train")
    per_row = BUILD_PER_TEXT_BYTE * training_text_bytes(con, train.corpus_id) / 250 + PER_ROW
    monkeypatch.setattr(
        stored, "index_budget", lambda _limit: int(per_row * (rows_per_shard + 0.5))
    )


def test_a_memory_limit_searches_stored_shards_with_identical_results(con, monkeypatch):
    reference, _, _ = _audit(con, store_index=False)
    _small_budget(monkeypatch, con, 40)
    rows, timings, said = _audit(con, memory_limit=2**30)
    assert rows == reference
    assert "peak_rss_bytes" in timings and timings["index_loaded"] == 0.0
    assert any("in shards of 40 rows" in m for m in said)
    assert any(m.startswith("peak memory") for m in said)
    shards = [i for i in stored.list_stored_indexes(con) if i.shard is not None]
    assert [i.row_offset for i in shards] == list(range(0, 250, 40))
    # The next audit within the limit loads those shards.
    rows, timings, _ = _audit(con, memory_limit=2**30)
    assert rows == reference and timings["index_loaded"] == 1.0
    # A whole-corpus index that fits is used as it is.
    monkeypatch.setattr(stored, "index_budget", lambda _limit: 10**12)
    rows, _, said = _audit(con, memory_limit=2**30)
    assert rows == reference and not any("in shards" in m for m in said)


def test_without_storing_the_shards_live_in_a_temporary_directory(con, monkeypatch):
    reference, _, _ = _audit(con, store_index=False)
    _small_budget(monkeypatch, con, 100)
    train = get_corpus(con, "train")
    execution = Execution(store_index=False, memory_limit=2**30)
    index, loaded = stored.open_training_index(con, train, stored.AuditConfig(), execution)
    assert isinstance(index, ShardedIndex) and not loaded and not index.resident
    scratch = Path(index.keep.name)  # type: ignore[attr-defined]
    assert len(list(scratch.iterdir())) == 3
    assert stored.list_stored_indexes(con) == []
    del index
    gc.collect()
    assert not scratch.exists()
    rows, _, _ = _audit(con, store_index=False, memory_limit=2**30)
    assert rows == reference and stored.list_stored_indexes(con) == []


def test_cached_table_blocks_are_released_and_the_limit_restored(tmp_path):
    con = open_warehouse(tmp_path / "wh.duckdb")
    con.execute("CREATE TABLE texts AS SELECT repeat(i::VARCHAR, 50) AS t FROM range(200000) r(i)")
    con.execute("CHECKPOINT")
    con.execute("SET memory_limit = '3GiB'")
    con.execute("SELECT t FROM texts").to_arrow_table()

    def cached() -> int:
        rows = con.execute(
            "SELECT memory_usage_bytes FROM duckdb_memory() WHERE tag = 'BASE_TABLE'"
        ).fetchall()
        return int(rows[0][0])

    assert cached() > 8 * 2**20
    release_cached_blocks(con)
    assert cached() <= 2**20  # down to the moment's limit
    assert con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0] == "3.0 GiB"
