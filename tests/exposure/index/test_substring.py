"""The suffix-array shards of the substring lens: equal to brute force however the corpus is
sharded, stored and reused, and rebuilt when damaged."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import numpy as np
import pytest

from tests.exposure.substring_brute import Lens, lens
from warehouse.exposure.config import AuditConfig
from warehouse.exposure.execution import Execution
from warehouse.exposure.index.substring import open_side, plan
from warehouse.exposure.normalize import normalize_many
from warehouse.inputs.corpus_files import read_test_set, read_training_corpus
from warehouse.native import native
from warehouse.store.corpora import add_corpus, get_corpus
from warehouse.store.schema import open_warehouse

WORDS = [
    "le",
    "chat",
    "noir",
    "dort",
    "été",
    "ça",
    "水",
    "中文字",
    "a",
    "ab",
    "\uff21",
    "\ufb01n",
    "b",
]


def _texts(rng: random.Random, n: int, most: int) -> list[str]:
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(0, most))) for _ in range(n)]


def _answers(index: native.SubstringIndex, segments: list[str], orders: list[int]) -> list[Lens]:
    raw = index.lens("\n".join(segments), len(segments), orders)
    col = {k: np.frombuffer(raw[k], np.uint64) for k in ("chars", "longest", "start", "count")}
    doc, offset = np.frombuffer(raw["doc"], np.int64), np.frombuffer(raw["offset"], np.int64)
    valid = np.unpackbits(np.frombuffer(raw["doc_valid"], np.uint8), bitorder="little")
    found = [np.frombuffer(b, np.uint64) for b in raw["found"]]
    total = [np.frombuffer(b, np.uint64) for b in raw["total"]]
    return [
        Lens(
            int(col["chars"][i]),
            int(col["longest"][i]),
            int(col["start"][i]),
            (int(doc[i]), int(offset[i])) if valid[i] else None,
            int(col["count"][i]),
            tuple((int(f[i]), int(t[i])) for f, t in zip(found, total, strict=True)),
        )
        for i in range(len(segments))
    ]


def _sharded(docs: list[str], cuts: list[int], tmp_path: Path) -> native.SubstringIndex:
    bounds = [0, *cuts, len(docs)]
    paths, keys = [], []
    for k, (a, b) in enumerate(itertools.pairwise(bounds)):
        path, key = tmp_path / f"s{k}.sa", f"key{k}".encode()
        info = native.SubstringIndex.build_shard("\n".join(docs[a:b]), b - a, path, key)
        assert info["bytes"] == path.stat().st_size and info["docs"] == b - a
        paths.append(path)
        keys.append(key)
    return native.SubstringIndex.open(paths, keys)


@pytest.mark.parametrize("seed", range(4))
def test_generated_texts_equal_brute_force_in_any_sharding(seed, tmp_path):
    rng = random.Random(seed)
    docs = normalize_many([*_texts(rng, 25, 30), "", "  le   chat\tnoir  "])
    docs.append(" ".join(_texts(rng, 300, 5)))  # a long document
    segments = normalize_many([*_texts(rng, 30, 14), "", docs[3], "le  chat  noir"])
    orders = [1, 2, 8]
    want = [lens(docs, s, orders) for s in segments]
    whole = native.SubstringIndex.from_joined("\n".join(docs), len(docs))
    assert _answers(whole, segments, orders) == want
    for cuts in ([13], [1, 2, 26], list(range(1, len(docs)))):
        (tmp_path / str(cuts[0])).mkdir(exist_ok=True)
        sharded = _sharded(docs, cuts, tmp_path / str(cuts[0]))
        assert sharded.docs == len(docs)
        assert _answers(sharded, segments, orders) == want


def test_a_damaged_shard_file_is_refused(tmp_path):
    index = _sharded(["le chat noir", "ça été"], [1], tmp_path)
    assert len(index.checksums) == 2
    raw = bytearray((tmp_path / "s1.sa").read_bytes())
    raw[-1] ^= 0x01
    (tmp_path / "s1.sa").write_bytes(bytes(raw))
    with pytest.raises(native.IndexFileError, match="checksum"):
        native.SubstringIndex.open([tmp_path / "s0.sa", tmp_path / "s1.sa"], [b"key0", b"key1"])
    with pytest.raises(native.IndexFileError, match="another key"):
        native.SubstringIndex.open([tmp_path / "s0.sa"], [b"key1"])
    with pytest.raises(ValueError, match="orders"):
        index.lens("a", 1, [0])


@pytest.fixture
def warehouse_with_docs(tmp_path):
    src = [f"sentence {i} of the river garden" for i in range(40)]
    tgt = [f"phrase {i} du jardin" for i in range(40)]
    (tmp_path / "tr.src").write_text("\n".join(src) + "\n", encoding="utf-8")
    (tmp_path / "tr.tgt").write_text("\n".join(tgt) + "\n", encoding="utf-8")
    (tmp_path / "te.src").write_text("sentence 3 of the river\n", encoding="utf-8")
    (tmp_path / "te.ref").write_text("phrase 3 du\n", encoding="utf-8")
    con = open_warehouse(tmp_path / "w.duckdb")
    add_corpus(con, read_training_corpus("train", tmp_path / "tr.src", tmp_path / "tr.tgt"))
    add_corpus(con, read_test_set("test", tmp_path / "te.src", [tmp_path / "te.ref"]))
    yield con
    con.close()


def test_shards_follow_rows_or_the_memory_limit_and_are_stored_then_reused(
    warehouse_with_docs, tmp_path
):
    con, config = warehouse_with_docs, AuditConfig(measure="substring")
    train = get_corpus(con, "train", "train")
    rows = plan(con, train, "source", config, Execution(shard_rows=15))
    assert [(s.start, s.stop) for s in rows] == [(0, 15), (15, 30), (30, 40)]
    whole = plan(con, train, "source", config, Execution())
    assert [(s.start, s.stop) for s in whole] == [(0, 40)]
    said: list[str] = []
    first = open_side(con, train, "target", config, Execution(shard_rows=15), notify=said.append)
    assert (first.built, first.loaded, said) == (3, 0, [])
    stored = sorted((tmp_path / "w.duckdb.indexes" / "substring").glob("*.sa"))
    assert len(stored) == 3
    again = open_side(con, train, "target", config, Execution(shard_rows=15), notify=said.append)
    assert (again.built, again.loaded) == (0, 3)
    assert again.index.checksums == first.index.checksums
    stored[1].write_bytes(stored[1].read_bytes()[:-8])
    healed = open_side(con, train, "target", config, Execution(shard_rows=15), notify=said.append)
    assert (healed.built, healed.loaded) == (1, 2)
    assert len(said) == 1 and "rebuilding a stored suffix-array shard" in said[0]
    assert healed.index.checksums == first.index.checksums
    unstored = open_side(
        con, train, "source", config, Execution(store_index=False), notify=said.append
    )
    assert unstored.built == 1 and len(list(stored[0].parent.glob("*.sa"))) == 3
