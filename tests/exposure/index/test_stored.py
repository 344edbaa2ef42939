"""Stored training indexes: audits load them instead of building, with identical results; a
damaged, foreign or mismatched file is detected and rebuilt with a warning, never trusted."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import duckdb
import pytest

from tests.exposure.audited import audited, loaded_warehouse
from tests.exposure.synthetic_corpus import make_corpus
from warehouse.errors import UsageError
from warehouse.exposure.config import AuditConfig
from warehouse.exposure.direction import reversed_direction, sample_lines
from warehouse.exposure.index.stored import (
    BackgroundSaves,
    IndexFileError,
    base_key,
    build_stored_index,
    drop_stored_indexes,
    index_directory,
    list_stored_indexes,
    load_shard,
    plan,
)
from warehouse.exposure.normalize import NormalizationConfig
from warehouse.inputs.corpus_files import read_training_corpus
from warehouse.native import native
from warehouse.store.corpora import add_corpus, get_corpus, training_lines, training_texts

EXPOSURE_COLUMNS = (
    "seg_idx, source_exposure, source_nn, source_exact, target_exposure, target_nn, "
    "target_ref_idx, target_exact, pair_exposure, pair_nn, pair_exact, tm_hyp_idx, bin"
)


@pytest.fixture
def corpus():
    return make_corpus(n_train=250, n_test=40, seed=5, n_refs=2)


@pytest.fixture
def con(db_path, write_lines, corpus):
    """A warehouse file with the synthetic corpus registered as `train` and `test`."""
    con = loaded_warehouse(db_path, write_lines, corpus)
    yield con
    con.close()


def _audit(con, **execution):
    """Run (or rerun) the audit; its exposure rows, its timings and what it said."""
    return audited(con, EXPOSURE_COLUMNS, **execution)


def _index_file(con) -> Path:
    train = get_corpus(con, "train", "train")
    [shard] = plan(train, AuditConfig())
    directory = index_directory(con)
    assert directory is not None
    return directory / shard.file_name


def test_the_index_lives_beside_the_warehouse_file(con, db_path):
    assert index_directory(con) == db_path.with_name(db_path.name + ".indexes")
    memory = duckdb.connect()
    assert index_directory(memory) is None


def test_in_a_lake_the_index_lives_under_a_local_data_path(tmp_path):
    import duckdb_extensions

    con = duckdb.connect()
    duckdb_extensions.import_extension("ducklake", con)
    data = tmp_path / "data"
    con.execute(f"ATTACH 'ducklake:{tmp_path / 'catalog.ducklake'}' AS tame (DATA_PATH '{data}/')")
    con.execute("USE tame")
    assert index_directory(con) == data / "tame-wh-indexes"
    con.execute("USE memory")
    assert index_directory(con) is None


def test_an_audit_stores_its_index_and_the_next_loads_it_with_identical_results(con):
    built, timings, said = _audit(con)
    path = _index_file(con)
    assert path.is_file() and timings["index_loaded"] == 0.0
    assert any(m.startswith("stored the training index of 'train'") for m in said)
    loaded, timings, said = _audit(con)
    assert timings["index_loaded"] == 1.0 and not said
    assert loaded == built
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temporary file left


def test_background_saves_are_waited_for_and_an_unexpected_error_reaches_the_caller():
    saves = BackgroundSaves()
    gate = threading.Event()
    done: list[str] = []

    def slow() -> None:
        gate.wait(5)
        done.append("slow")

    def failing() -> None:
        raise RuntimeError("disk on fire")

    saves.start(slow)
    saves.start(failing)
    gate.set()
    with pytest.raises(RuntimeError, match="disk on fire"):
        saves.wait()
    assert done == ["slow"]
    saves.start(failing)
    saves.wait(raise_errors=False)  # the caller is raising its own error
    saves.wait()  # nothing left to report


def test_not_storing_leaves_no_file_but_uses_a_stored_one(con):
    reference, _, _ = _audit(con, store_index=False)
    assert not _index_file(con).exists()
    con.execute("INSERT INTO settings VALUES ('index.store', 0, 'never store indexes')")
    _audit(con)
    assert not _index_file(con).exists()
    build_stored_index(con, get_corpus(con, "train"), AuditConfig())
    rows, timings, _ = _audit(con, store_index=False)
    assert timings["index_loaded"] == 1.0 and rows == reference


def _flip(path: Path, at: int) -> None:
    data = bytearray(path.read_bytes())
    data[at] ^= 0x20
    path.write_bytes(bytes(data))


def _damage_header(path: Path) -> None:
    _flip(path, 60)  # inside the key


def _section(path: Path, name: str) -> tuple[int, int]:
    """Offset and length of a section, read from the file's section table."""
    data = path.read_bytes()
    count = int.from_bytes(data[20:24], "little")
    key_len = int.from_bytes(data[40:44], "little")
    table = 48 + -(-key_len // 8) * 8
    for i in range(count):
        entry = data[table + 64 * i : table + 64 * (i + 1)]
        if entry[:32].rstrip(b"\0").decode() == name:
            return int.from_bytes(entry[40:48], "little"), int.from_bytes(entry[48:56], "little")
    raise AssertionError(f"no section {name}")


def _damage_section(path: Path) -> None:
    offset, length = _section(path, "tgt.block0.lows")
    _flip(path, offset + length // 2)


def _truncate(path: Path) -> None:
    os.truncate(path, path.stat().st_size // 2)


def _foreign(path: Path) -> None:
    path.write_bytes(b"PAR1" + bytes(range(256)) * 8)


def _other_version(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[8:12] = (native.INDEX_FORMAT_VERSION + 1).to_bytes(4, "little")
    path.write_bytes(bytes(data))


@pytest.mark.parametrize(
    ("damage", "said"),
    [
        (_truncate, "truncated"),
        (_damage_header, "corrupted (header checksum)"),
        (_damage_section, "corrupted (checksum of section"),
        (_foreign, "not a tame-wh index file"),
        (_other_version, "format version"),
    ],
)
def test_a_damaged_or_foreign_file_is_rebuilt_with_a_warning(con, damage, said):
    reference, _, _ = _audit(con)
    path = _index_file(con)
    damage(path)
    with pytest.raises(IndexFileError):
        load_shard(path.parent, plan(get_corpus(con, "train"), AuditConfig())[0])
    rows, timings, messages = _audit(con)
    assert rows == reference and timings["index_loaded"] == 0.0
    warnings = [m for m in messages if m.startswith("warning: ")]
    assert len(warnings) == 1 and said in warnings[0] and "rebuilding it" in warnings[0]
    # The rebuilt index replaced the damaged file.
    assert _audit(con)[1]["index_loaded"] == 1.0


def test_a_file_of_other_settings_under_this_name_is_refused(con):
    reference, _, _ = _audit(con)
    path = _index_file(con)
    train = get_corpus(con, "train")
    casefolded = AuditConfig(normalization=NormalizationConfig(casefold=True))
    build_stored_index(con, train, casefolded)
    [other] = plan(train, casefolded)
    assert other.key != base_key(train.corpus_id, AuditConfig())
    os.replace(path.parent / other.file_name, path)
    rows, _, messages = _audit(con)
    assert rows == reference
    assert any("its key differs" in m for m in messages)


def test_keys_name_corpus_orders_and_normalisation(con):
    train = get_corpus(con, "train")
    keys = {
        base_key(train.corpus_id, AuditConfig()),
        base_key(train.corpus_id, AuditConfig(orders=(3, 4))),
        base_key(train.corpus_id, AuditConfig(normalization=NormalizationConfig(casefold=True))),
        base_key("another-corpus", AuditConfig()),
    }
    assert len(keys) == 4
    # Settings that do not change the index share it.
    assert base_key(train.corpus_id, AuditConfig(near=0.9, mode="fast")) == base_key(
        train.corpus_id, AuditConfig(orders=(5, 4, 3))
    )


def test_list_and_drop(con, corpus, write_lines):
    assert list_stored_indexes(con) == []
    train = get_corpus(con, "train")
    result = build_stored_index(con, train, AuditConfig())
    assert [f["action"] for f in result.files] == ["built"]
    assert [f["action"] for f in build_stored_index(con, train, AuditConfig()).files] == ["kept"]
    build_stored_index(con, train, AuditConfig(orders=(3,)))
    items = list_stored_indexes(con)
    assert [(i.corpus, i.rows, i.shard, i.problem) for i in items] == [
        ("train", 250, None, None)
    ] * 2
    assert all(i.bytes == Path(i.path).stat().st_size for i in items)

    # A damaged section shows only when the whole file is checked; --stale drops it.
    damaged = next(i for i in items if i.orders == [3])
    _damage_section(Path(damaged.path))
    assert all(i.problem is None for i in list_stored_indexes(con))
    [bad] = [i for i in list_stored_indexes(con, verify=True) if i.problem]
    assert bad.key == damaged.key and "checksum" in bad.problem
    directory = Path(damaged.path).parent
    dead = directory / f".{damaged.key}.index.{2**22 + 1}.5.tmp"  # no such process
    live = directory / f".{damaged.key}.index.{os.getpid()}.5.tmp"
    dead.write_bytes(b"x")
    live.write_bytes(b"x")
    assert [i.key for i in drop_stored_indexes(con, stale=True)] == [damaged.key]
    assert not dead.exists() and live.exists()
    live.unlink()

    with pytest.raises(UsageError, match="say what to drop"):
        drop_stored_indexes(con)
    [kept] = list_stored_indexes(con)
    assert drop_stored_indexes(con, key="0" * 24) == []
    assert [i.key for i in drop_stored_indexes(con, key=kept.key)] == [kept.key]
    build_stored_index(con, train, AuditConfig())
    assert len(drop_stored_indexes(con, train=train)) == 1
    build_stored_index(con, train, AuditConfig())
    assert len(drop_stored_indexes(con, everything=True)) == 1
    assert list_stored_indexes(con) == []


def test_an_index_of_a_removed_corpus_is_stale(con, write_lines):
    train = get_corpus(con, "train")
    build_stored_index(con, train, AuditConfig())
    add_corpus(
        con,
        read_training_corpus(
            "train", write_lines("new.src", ["a b c"]), write_lines("new.tgt", ["x y z"])
        ),
        replace=True,
    )
    [item] = list_stored_indexes(con)
    assert item.corpus is None and item.corpus_id == train.corpus_id
    assert item.problem == "its training corpus is no longer registered"
    assert len(drop_stored_indexes(con, stale=True)) == 1


def test_the_direction_check_reads_only_its_sample_of_training_lines(con):
    train = get_corpus(con, "train")
    sources, targets = training_texts(con, train.corpus_id)
    test_sources = targets[:30]  # facing the wrong way round
    for lines in (range(0, 250, 3), range(7, 200, 10), range(5, 6)):
        assert training_lines(con, train.corpus_id, lines) == (
            [sources[i] for i in lines],
            [targets[i] for i in lines],
        )
    assert training_texts(con, train.corpus_id, (10, 20)) == (sources[10:20], targets[10:20])
    # A large side: the sampled lines alone give the same verdict as the whole side.
    big_src, big_tgt = sources * 12, targets * 12
    sample = sample_lines(len(big_src))
    assert sample is not None and len(sample) == 2000 < len(big_src)
    assert sample[-1] < len(big_src) and sample.step == len(big_src) // 2000
    whole = reversed_direction(test_sources, big_src, big_tgt)
    part = reversed_direction(
        test_sources, [big_src[i] for i in sample], [big_tgt[i] for i in sample]
    )
    assert whole is not None and part == whole


def test_a_sharded_index_gives_the_unsharded_results(con):
    reference, _, _ = _audit(con, store_index=False)
    train = get_corpus(con, "train")
    result = build_stored_index(con, train, AuditConfig(), shard_rows=100)
    assert [(f["row_offset"], f["rows"], f["shard"]) for f in result.files] == [
        (0, 100, 0),
        (100, 100, 1),
        (200, 50, 2),
    ]
    items = list_stored_indexes(con)
    assert [(i.shard, i.shards, i.row_offset, i.rows) for i in items] == [
        (0, 3, 0, 100),
        (1, 3, 100, 100),
        (2, 3, 200, 50),
    ]
    rows, timings, said = _audit(con)
    assert rows == reference and timings["index_loaded"] == 1.0 and not said

    # A damaged shard is rebuilt with a warning, a missing one rebuilt and stored again.
    shards = plan(train, AuditConfig(), 100)
    directory = index_directory(con)
    _damage_section(directory / shards[1].file_name)
    (directory / shards[2].file_name).unlink()
    rows, timings, said = _audit(con)
    assert rows == reference and timings["index_loaded"] == 0.0
    assert sum(m.startswith("warning: ") and "rebuilding it" in m for m in said) == 1
    assert all((directory / s.file_name).is_file() for s in shards)
    assert _audit(con)[1]["index_loaded"] == 1.0

    # The whole-corpus index, when stored, is preferred.
    build_stored_index(con, train, AuditConfig())
    rows, timings, _ = _audit(con)
    assert rows == reference and timings["index_loaded"] == 1.0
    assert [i.key for i in drop_stored_indexes(con, key=base_key(train.corpus_id, AuditConfig()))]
    assert list_stored_indexes(con) == []
