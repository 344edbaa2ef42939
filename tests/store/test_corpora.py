"""Registering corpora and test sets: content ids, idempotence, replace, listing, metadata."""

from __future__ import annotations

import json

import duckdb
import pytest

from tests.conftest import snapshot
from warehouse.errors import UsageError
from warehouse.inputs.corpus_files import read_test_set, read_training_corpus
from warehouse.store.corpora import add_corpus, get_corpus, list_corpora, training_columns
from warehouse.store.schema import open_warehouse


@pytest.fixture
def con(db_path):
    connection = open_warehouse(db_path)
    yield connection
    connection.close()


@pytest.fixture
def train_files(write_lines):
    src = write_lines("train.src", ["a cat", "", "a dog sleeps"])
    tgt = write_lines("train.tgt", ["un gato", "", "un perro duerme"])
    return src, tgt


def test_training_corpus_segments_are_stored_line_by_line(con, train_files):
    data = read_training_corpus("t", *train_files, "en", "es")
    result = add_corpus(con, data)
    assert result.action == "added"
    rows = con.execute(
        "SELECT seg_idx, seg_key, src, refs FROM segments WHERE corpus_id = ? ORDER BY seg_idx",
        [data.corpus_id],
    ).fetchall()
    assert rows == [
        (0, "0", "a cat", ["un gato"]),
        (1, "1", "", [""]),
        (2, "2", "a dog sleeps", ["un perro duerme"]),
    ]
    info = get_corpus(con, "t", "train")
    assert (info.n_segments, info.n_refs, info.src_lang, info.tgt_lang) == (3, 1, "en", "es")
    assert info.sha256.startswith(info.corpus_id) and len(info.sha256) == 64


def test_training_columns_come_in_line_order_even_when_stored_out_of_order(con, write_lines):
    src = write_lines("o.src", [f"source {i}" for i in range(50)])
    tgt = write_lines("o.tgt", [f"target {i}" for i in range(50)])
    data = read_training_corpus("o", src, tgt, "en", "es")
    add_corpus(con, data)
    sources, targets = training_columns(con, data.corpus_id)
    assert sources.to_pylist() == [f"source {i}" for i in range(50)]
    # Rewrite the rows in another order (as a copy or a compaction might).
    con.execute(
        "CREATE TEMP TABLE shuffled AS SELECT * FROM segments WHERE corpus_id = ? "
        "ORDER BY (seg_idx * 37) % 50",
        [data.corpus_id],
    )
    con.execute("DELETE FROM segments WHERE corpus_id = ?", [data.corpus_id])
    con.execute("INSERT INTO segments SELECT * FROM shuffled")
    stored = [i for (i,) in con.execute("SELECT seg_idx FROM segments").fetchall()]
    assert stored != sorted(stored)
    sources, targets = training_columns(con, data.corpus_id)
    assert sources.to_pylist() == [f"source {i}" for i in range(50)]
    assert targets.to_pylist() == [f"target {i}" for i in range(50)]
    sources, _ = training_columns(con, data.corpus_id, (10, 20))
    assert sources.to_pylist() == [f"source {i}" for i in range(10, 20)]


def test_adding_identical_content_again_is_a_no_op(con, train_files):
    first = add_corpus(con, read_training_corpus("t", *train_files))
    again = add_corpus(con, read_training_corpus("t", *train_files))
    assert again.action == "unchanged"
    assert again.corpus == first.corpus
    assert con.execute("SELECT count(*) FROM segments").fetchone() == (3,)


def test_content_id_ignores_crlf_and_gzip(con, write_lines):
    plain = read_training_corpus(
        "t", write_lines("a.src", ["x", "y"]), write_lines("a.tgt", ["1", "2"])
    )
    crlf = read_training_corpus(
        "t", write_lines("b.src", ["x", "y"], "\r\n"), write_lines("b.tgt.gz", ["1", "2"])
    )
    assert plain.corpus_id == crlf.corpus_id


def test_same_name_with_different_content_needs_replace(con, train_files, write_lines):
    add_corpus(con, read_training_corpus("t", *train_files))
    changed = read_training_corpus(
        "t", write_lines("c.src", ["new"]), write_lines("c.tgt", ["nuevo"])
    )
    with pytest.raises(UsageError, match=r"already exists with different content.*--replace"):
        add_corpus(con, changed)
    assert con.execute("SELECT count(*) FROM segments").fetchone() == (3,)


def test_replace_reports_and_removes_dependent_audits_and_runs(con, write_lines):
    old = read_test_set("ts", write_lines("s", ["a", "b"]), [write_lines("r", ["A", "B"])])
    add_corpus(con, old)
    oid = old.corpus_id
    con.execute(
        "INSERT INTO audits (audit_id, test_corpus_id, train_corpus_id, mode, near_threshold, "
        "far_threshold, leak_thresholds, n_segments, config, signature, backend, created_at) "
        "VALUES ('au1', ?, 'trainx', 'exact', 0.7, 0.3, [0.7, 0.85, 0.95], 2, '{}', 'sig', "
        "'native', now())",
        [oid],
    )
    con.execute(
        "INSERT INTO exposures VALUES ('au1', 0, 0.5, 1, false, 0.5, 1, 0, false, 0.5, 1, "
        "false, 1, 'medium')"
    )
    con.execute(
        "INSERT INTO runs (run_id, test_corpus_id, model_slug, created_at, ingested_at, "
        "n_entries, run_card) VALUES ('r1', ?, 'm', now(), now(), 2, '{}')",
        [oid],
    )
    con.execute(
        "INSERT INTO hypotheses (run_id, seg_idx, hyp) VALUES ('r1', 0, 'a'), ('r1', 1, 'b')"
    )
    con.execute(
        "INSERT INTO metric_values (run_id, seg_idx, metric, value) VALUES ('r1', NULL, 'x', 1)"
    )
    messages: list[str] = []
    new = read_test_set("ts", write_lines("s2", ["c"]), [write_lines("r2", ["C"])])
    result = add_corpus(con, new, replace=True, notify=messages.append)
    assert result.action == "replaced"
    assert (result.removed_audits, result.removed_runs) == (1, 1)
    assert result.replaced_corpus_id == oid
    assert messages == [
        f"replacing test set 'ts' (id {oid}): removing 1 dependent audit(s) and 1 run(s)"
    ]
    for table in ("audits", "exposures", "runs", "hypotheses", "metric_values"):
        assert con.execute(f"SELECT count(*) FROM {table}").fetchone() == (0,), table
    assert con.execute("SELECT DISTINCT corpus_id FROM segments").fetchall() == [(new.corpus_id,)]


def test_failed_replace_rolls_back_everything(con, write_lines, monkeypatch):
    old = read_test_set("ts", write_lines("s", ["a"]), [write_lines("r", ["A"])])
    add_corpus(con, old)
    new = read_test_set("ts", write_lines("s2", ["b"]), [write_lines("r2", ["B"])])

    def explode(*_args, **_kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr("warehouse.store.corpora.add_corpus_row", explode)
    with pytest.raises(RuntimeError):
        add_corpus(con, new, replace=True)
    assert [c.corpus_id for c in list_corpora(con)] == [old.corpus_id]
    assert con.execute("SELECT src FROM segments").fetchall() == [("a",)]


def test_same_content_under_another_name_is_refused(con, train_files):
    add_corpus(con, read_training_corpus("one", *train_files))
    with pytest.raises(UsageError, match="already registered as training corpus 'one'"):
        add_corpus(con, read_training_corpus("two", *train_files))


def test_a_test_set_is_its_texts_whatever_its_labels_say(run_cli, write_lines, db_path):
    src, ref = (
        write_lines("t.src", ["ein Hund", "eine Katze"]),
        write_lines("t.ref", ["a dog", "a cat"]),
    )
    first = run_cli("testset", "add", "ted", "--src", src, "--ref", ref, "--src-lang", "de",
                    "--tgt-lang", "en")  # fmt: skip
    assert first.exit_code == 0, first.output
    before = snapshot(db_path)
    # Under another name: without labels, with swapped ones, with the same ones.
    for labels, mismatch in (((), True), (("--src-lang", "en", "--tgt-lang", "de"), True),
                             (("--src-lang", "de", "--tgt-lang", "en"), False)):  # fmt: skip
        again = run_cli("testset", "add", "ted2", "--src", src, "--ref", ref, *labels)
        assert again.exit_code == 2, again.output
        said = "the same content is already registered" if not mismatch else "the same sources"
        assert f"{said}" in again.stderr and "test set 'ted'" in again.stderr, again.stderr
        assert ("warning: the files are labelled" in again.stderr) is mismatch, again.stderr
        assert snapshot(db_path) == before
    # Under its own name with other labels: a relabelling, which --replace does.
    relabel = run_cli("testset", "add", "ted", "--src", src, "--ref", ref, "--src-lang", "en",
                      "--tgt-lang", "de")  # fmt: skip
    assert relabel.exit_code == 2 and "already holds these texts, labelled de→en" in relabel.stderr
    assert snapshot(db_path) == before
    done = run_cli("testset", "add", "ted", "--src", src, "--ref", ref, "--src-lang", "en",
                   "--tgt-lang", "de", "--replace", "--yes")  # fmt: skip
    assert done.exit_code == 0, done.output
    # Other texts under another name are a test set of their own.
    other = run_cli("testset", "add", "ted3", "--src", ref, "--ref", src)
    assert other.exit_code == 0, other.output


def test_names_are_unique_across_roles(con, train_files, write_lines):
    add_corpus(con, read_training_corpus("shared", *train_files))
    test = read_test_set("shared", write_lines("s", ["q"]), [write_lines("r", ["Q"])])
    with pytest.raises(UsageError, match="'shared' is already a training corpus"):
        add_corpus(con, test, replace=True)


def test_multiple_references_are_stored_in_file_order(con, write_lines):
    data = read_test_set(
        "multi",
        write_lines("s", ["one", "two"]),
        [
            write_lines("r1", ["uno", "dos"]),
            write_lines("r2", ["un", "deux"]),
            write_lines("r3", ["eins", "zwei"]),
        ],
    )
    add_corpus(con, data)
    refs = con.execute("SELECT refs FROM segments ORDER BY seg_idx").fetchall()
    assert refs == [(["uno", "un", "eins"],), (["dos", "deux", "zwei"],)]
    assert get_corpus(con, "multi").n_refs == 3


def test_segment_metadata_sets_keys_difficulty_provenance_and_keeps_extra_fields(con, write_lines):
    meta = write_lines(
        "m.jsonl",
        [
            json.dumps({"id": "s-1", "difficulty": 2, "provenance": "bible", "note": "x"}),
            json.dumps({"difficulty": "5"}),
            json.dumps({"id": 77}),
        ],
    )
    data = read_test_set(
        "ts", write_lines("s", ["a", "b", "c"]), [write_lines("r", ["A", "B", "C"])], meta
    )
    add_corpus(con, data)
    rows = con.execute(
        "SELECT seg_key, difficulty, provenance, meta FROM segments ORDER BY seg_idx"
    ).fetchall()
    assert rows[0][:3] == ("s-1", 2, "bible") and json.loads(rows[0][3]) == {"note": "x"}
    assert rows[1] == ("1", 5, None, None)
    assert rows[2] == ("77", None, None, None)


def test_segment_metadata_changes_the_content_id(write_lines):
    s, r = write_lines("s", ["a"]), write_lines("r", ["A"])
    plain = read_test_set("ts", s, [r])
    with_meta = read_test_set("ts", s, [r], write_lines("m.jsonl", ['{"difficulty": 3}']))
    assert plain.corpus_id != with_meta.corpus_id


def test_list_and_get_filter_by_role(con, train_files, write_lines):
    add_corpus(con, read_training_corpus("tr", *train_files))
    add_corpus(con, read_test_set("te", write_lines("s", ["q"]), [write_lines("r", ["Q"])]))
    assert [c.name for c in list_corpora(con, "train")] == ["tr"]
    assert [c.name for c in list_corpora(con, "test")] == ["te"]
    assert {c.name for c in list_corpora(con)} == {"tr", "te"}
    with pytest.raises(
        UsageError, match=r"unknown training corpus 'te' \(did you mean 'tr'\?\); known"
    ):
        get_corpus(con, "te", "train")


def test_large_corpus_is_loaded_in_one_bulk_insert(con, write_lines):
    n = 20_000
    data = read_training_corpus(
        "big",
        write_lines("s", [f"sentence {i}" for i in range(n)]),
        write_lines("t", [f"frase {i}" for i in range(n)]),
    )
    add_corpus(con, data)
    assert con.execute(
        "SELECT count(*), max(seg_idx), min(src), max(refs[1]) FROM segments"
    ).fetchone() == (n, n - 1, "sentence 0", "frase 9999")


def test_written_warehouse_is_readable_by_plain_duckdb(db_path, train_files):
    con = open_warehouse(db_path)
    add_corpus(con, read_training_corpus("t", *train_files))
    con.close()
    plain = duckdb.connect(str(db_path), read_only=True)
    assert plain.execute("SELECT name, role, n_segments FROM corpora").fetchall() == [
        ("t", "train", 3)
    ]
