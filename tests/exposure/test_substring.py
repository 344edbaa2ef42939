"""Audits by the substring lens from the command line: exposures and details equal brute force,
the index named in the signature, sharding and reuse change nothing, a segment inside a long
document is found verbatim while Jaccard calls it far."""

from __future__ import annotations

import json

import pytest

from tests.conftest import snapshot
from tests.exposure.substring_brute import lens
from warehouse import Warehouse
from warehouse.exposure.normalize import normalize_many

WORDS = ["river", "garden", "window", "teacher", "ticket", "letter", "été", "ça", "水"]


def _write(tmp_path, files):
    for name, lines in files.items():
        (tmp_path / name).write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture
def documents(tmp_path, run_cli):
    """A warehouse with `docs` (long parallel documents: 40 sentences each) and test set `t`
    (sentence 57 verbatim, a sentence spliced from two, an unseen one and an empty one)."""
    sentences = [
        f"the {WORDS[i % 9]} of station {i} opens at {i % 12} near the {WORDS[(i * 5) % 9]} market"
        for i in range(120)
    ]
    docs = [" ".join(sentences[k : k + 40]) for k in range(0, 120, 40)]
    src = [sentences[57], sentences[3][:30] + sentences[90][20:], "zz qq unseen words", ""]
    _write(
        tmp_path,
        {
            "docs.en": docs,
            "docs.fr": [d.upper() for d in docs],
            "t.src": src,
            "t.ref": [s.upper() for s in src],
        },
    )
    db = tmp_path / "w.duckdb"
    assert run_cli("corpus", "add", "docs", "--src", tmp_path / "docs.en",
                   "--tgt", tmp_path / "docs.fr", db=db).exit_code == 0  # fmt: skip
    assert run_cli("testset", "add", "t", "--src", tmp_path / "t.src",
                   "--ref", tmp_path / "t.ref", db=db).exit_code == 0  # fmt: skip
    return db, docs, src


def _audit(run_cli, db, *args):
    out = run_cli("audit", "--train", "docs", "--testset", "t", "--json", *args, db=db)
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout)


def _stored(db, audit_id):
    """An audit's `substring_lens` rows (by segment and side) and `exposures` rows."""
    with Warehouse.open(db, access="read") as wh:
        details = list(wh.query(
            "SELECT * FROM substring_lens WHERE audit_id = ? ORDER BY seg_idx, side", [audit_id]
        ))  # fmt: skip
        exposures = list(wh.query(
            "SELECT * FROM exposures WHERE audit_id = ? ORDER BY seg_idx", [audit_id]
        ))  # fmt: skip
    return details, exposures


def test_a_substring_audit_equals_brute_force_and_names_its_index(run_cli, documents):
    db, docs, src = documents
    doc = _audit(run_cli, db, "--measure", "substring")
    assert "|measure:substring(words:8,13)|" in doc["signature"]
    assert "|index:xxh3:" in doc["signature"]
    details, exposures = _stored(db, doc["audit_id"])
    norm_docs = {
        "source": normalize_many(docs),
        "target": normalize_many([d.upper() for d in docs]),
    }
    for row in details:
        text = src[row["seg_idx"]]
        side_text = text if row["side"] == "source" else text.upper()
        want = lens(norm_docs[row["side"]], normalize_many([side_text])[0])
        assert (row["chars"], row["longest_chars"], row["longest_start"]) == (
            want.chars, want.longest, want.start
        )  # fmt: skip
        assert (row["train_seg_idx"], row["train_offset"]) == (want.place or (None, None))
        assert row["whole_count"] == want.count
        assert [(row["words8_found"], row["words8_total"]),
                (row["words13_found"], row["words13_total"])] == list(want.grams)  # fmt: skip
        share = want.longest / want.chars if want.chars else 0.0
        assert row["longest_share"] == pytest.approx(share, abs=1e-12)
    by_seg = {(r["seg_idx"], r["side"]): r for r in details}
    for e in exposures:
        s, t = by_seg[(e["seg_idx"], "source")], by_seg[(e["seg_idx"], "target")]
        assert e["source_exposure"] == s["longest_share"]
        assert (e["source_nn"], e["source_exact"]) == (s["train_seg_idx"], s["whole_count"] > 0)
        assert e["target_exposure"] == t["longest_share"]
        assert e["pair_exposure"] == min(s["longest_share"], t["longest_share"])
        assert e["tm_hyp_idx"] == s["train_seg_idx"]
    # Sentence 57 sits verbatim in document 1; the spliced one is partly seen; the empty one
    # shares nothing.
    assert exposures[0]["source_exact"] and exposures[0]["bin"] == "source_exact"
    assert exposures[0]["source_nn"] == 1
    assert 0 < exposures[1]["source_exposure"] < 1
    assert exposures[3]["source_exposure"] == 0.0 and exposures[3]["source_nn"] is None


def test_shards_and_a_stored_index_change_nothing(run_cli, documents, tmp_path):
    db, _, _ = documents
    first = _audit(run_cli, db, "--measure", "substring", "--no-store-index")
    assert not (tmp_path / "w.duckdb.indexes" / "substring").exists()
    with Warehouse.open(db, access="read") as wh:
        before = list(wh.query("SELECT * EXCLUDE (audit_id) FROM substring_lens ORDER BY ALL"))
    sharded = _audit(run_cli, db, "--measure", "substring", "--shard-rows", "1", "--force")
    assert sharded["audit_id"] == first["audit_id"]
    assert sharded["timings"]["index_shards"] == 6  # three documents on each side
    again = _audit(run_cli, db, "--measure", "substring", "--shard-rows", "1", "--force")
    assert again["timings"]["index_loaded"] == 1.0
    with Warehouse.open(db, access="read") as wh:
        after = list(wh.query("SELECT * EXCLUDE (audit_id) FROM substring_lens ORDER BY ALL"))
    assert after == before
    # The checksum of three shards is not the checksum of one.
    assert sharded["signature"].split("|index:")[1] != first["signature"].split("|index:")[1]


def test_a_sentence_inside_a_document_is_verbatim_yet_far_by_jaccard(run_cli, documents):
    db, _, _ = documents
    substring = _audit(run_cli, db, "--measure", "substring")
    jaccard = _audit(run_cli, db, "--measure", "jaccard")
    with Warehouse.open(db, access="read") as wh:
        row = next(iter(wh.query("SELECT * FROM exposure_lenses WHERE seg_idx = 0")))
    assert (row["substring_audit_id"], row["jaccard_audit_id"]) == (
        substring["audit_id"], jaccard["audit_id"]
    )  # fmt: skip
    assert row["source_whole_count"] == 1 and row["source_substring"] == 1.0
    assert row["jaccard_bin"] == "far" and row["substring_bin"] == "source_exact"
    assert row["source_longest_row"] == 1 and row["bins_agree"] is False
    report = run_cli("audit", "--train", "docs", "--testset", "t", "--measure", "substring", db=db)
    assert "1 occur verbatim in training yet are far by Jaccard" in report.stdout, report.stdout


def test_fast_mode_is_refused_for_substrings_and_nothing_is_written(run_cli, documents):
    db, _, _ = documents
    before = snapshot(db)
    out = run_cli("audit", "--train", "docs", "--testset", "t", "--measure", "substring",
                  "--mode", "fast", db=db)  # fmt: skip
    assert out.exit_code == 2
    assert "substrings are exact" in out.stderr
    assert snapshot(db) == before


def test_removing_the_test_set_removes_its_substring_rows(run_cli, documents):
    db, _, _ = documents
    _audit(run_cli, db, "--measure", "substring")
    assert run_cli("testset", "delete", "t", "--yes", db=db).exit_code == 0
    with Warehouse.open(db, access="read") as wh:
        assert list(wh.query("SELECT count(*) AS n FROM substring_lens")) == [{"n": 0}]


def test_index_list_and_drop_know_the_suffix_array_shards(run_cli, documents, tmp_path):
    db, _, _ = documents
    _audit(run_cli, db, "--measure", "substring", "--shard-rows", "2")
    listed = json.loads(run_cli("index", "list", "--json", db=db).stdout)
    shards = [i for i in listed if i["lens"] == "substring"]
    assert sorted((i["side"], i["row_offset"], i["rows"]) for i in shards) == [
        ("source", 0, 2), ("source", 2, 1), ("target", 0, 2), ("target", 2, 1)
    ]  # fmt: skip
    assert all(i["corpus"] == "docs" and i["problem"] is None for i in shards)
    table = run_cli("index", "list", db=db).stdout
    assert "substring" in table
    assert run_cli("index", "drop", "--train", "docs", db=db).exit_code == 0
    assert not list((tmp_path / "w.duckdb.indexes" / "substring").iterdir())


def test_the_references_alone_by_substring_equal_brute_force(run_cli, documents):
    db, docs, src = documents
    doc = _audit(run_cli, db, "--measure", "substring", "--side", "target")
    assert "|side:target|" in doc["signature"] and "|index:xxh3:" in doc["signature"]
    # Only the target side's shards were opened.
    assert doc["timings"]["index_shards"] == 1
    details, exposures = _stored(db, doc["audit_id"])
    assert {r["side"] for r in details} == {"target"} and len(details) == len(src)
    targets = normalize_many([d.upper() for d in docs])
    for row, e, text in zip(details, exposures, src, strict=True):
        want = lens(targets, normalize_many([text.upper()])[0])
        share = want.longest / want.chars if want.chars else 0.0
        assert (row["longest_chars"], row["whole_count"]) == (want.longest, want.count)
        assert e["target_exposure"] == pytest.approx(share, abs=1e-12)
        assert e["target_exact"] == (want.count > 0)
        assert e["source_exposure"] is None and e["pair_exposure"] is None
        assert e["tm_hyp_idx"] is None
    assert exposures[0]["bin"] == "target_exact" and exposures[3]["bin"] == "far"
