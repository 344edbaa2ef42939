"""`tame-wh index build|list|drop` and the stored index in `tame-wh audit`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.exposure.synthetic_corpus import make_corpus


@pytest.fixture
def registered(run_cli, write_lines):
    """A warehouse with a training corpus `tr` and a test set `te`."""
    corpus = make_corpus(n_train=120, n_test=20, seed=3, n_refs=1)
    added = run_cli(
        "corpus",
        "add",
        "tr",
        "--src",
        write_lines("tr.src", corpus.train_src),
        "--tgt",
        write_lines("tr.tgt", corpus.train_tgt),
    )
    assert added.exit_code == 0, added.output
    refs = write_lines("te.ref", [r[0] for r in corpus.test_refs])
    added = run_cli(
        "testset", "add", "te", "--src", write_lines("te.src", corpus.test_src), "--ref", refs
    )
    assert added.exit_code == 0, added.output
    return corpus


def _files(db_path: Path) -> list[Path]:
    directory = db_path.with_name(db_path.name + ".indexes")
    return sorted(directory.iterdir()) if directory.is_dir() else []


def _exposures(run_cli) -> list[dict]:
    out = run_cli("query", "SELECT * EXCLUDE (audit_id) FROM exposures ORDER BY seg_idx", "--json")
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout)


def test_audit_stores_the_index_then_loads_it(run_cli, db_path, registered):
    first = run_cli("audit", "--train", "tr", "--testset", "te")
    assert first.exit_code == 0, first.output
    assert "stored the training index of 'tr'" in first.stderr
    [stored] = _files(db_path)
    built = _exposures(run_cli)
    again = run_cli("audit", "--train", "tr", "--testset", "te", "--force", "--json")
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout)["timings"]["index_loaded"] == 1.0
    assert "stored the training index" not in again.stderr
    assert _exposures(run_cli) == built and _files(db_path) == [stored]


def test_no_store_index_and_quiet(run_cli, db_path, registered):
    done = run_cli("--quiet", "audit", "--train", "tr", "--testset", "te", "--no-store-index")
    assert done.exit_code == 0, done.output
    assert _files(db_path) == [] and "index" not in done.stderr


def test_a_corrupted_index_is_rebuilt_with_a_warning(run_cli, db_path, registered):
    assert run_cli("audit", "--train", "tr", "--testset", "te").exit_code == 0
    reference = _exposures(run_cli)
    [stored] = _files(db_path)
    data = bytearray(stored.read_bytes())
    data[len(data) // 2] ^= 0xFF
    stored.write_bytes(bytes(data))
    listed = json.loads(run_cli("index", "list", "--verify", "--json").stdout)
    assert "corrupted" in listed[0]["problem"]
    # `index list` checks every checksum by default: a corrupted file is never called ok.
    assert json.loads(run_cli("index", "list", "--json").stdout) == listed
    table = run_cli("index", "list").stdout
    assert "corrupted" in table and " ok" not in table
    quick = json.loads(run_cli("index", "list", "--headers-only", "--json").stdout)
    assert quick[0]["problem"] is None  # the header alone is intact
    redone = run_cli("audit", "--train", "tr", "--testset", "te", "--force")
    assert redone.exit_code == 0, redone.output
    assert f"warning: stored index {stored}: corrupted" in redone.stderr
    assert "rebuilding it" in redone.stderr
    assert _exposures(run_cli) == reference
    assert json.loads(run_cli("index", "list", "--verify", "--json").stdout)[0]["problem"] is None


def test_build_list_drop(run_cli, db_path, registered):
    built = run_cli("index", "build", "--train", "tr", "--json")
    assert built.exit_code == 0, built.output
    [file] = json.loads(built.stdout)["files"]
    assert file["action"] == "built" and file["rows"] == 120 and Path(file["path"]).is_file()
    kept = run_cli("index", "build", "--train", "tr")
    assert kept.exit_code == 0 and "0 built, 1 already stored" in kept.stdout
    assert (
        run_cli("index", "build", "--train", "tr", "--casefold", "--orders", "3,4").exit_code == 0
    )
    listed = run_cli("index", "list")
    assert listed.exit_code == 0
    assert listed.stdout.count("tr ") == 2 and "120" in listed.stdout and "ok" in listed.stdout
    items = json.loads(run_cli("index", "list", "--json").stdout)
    assert sorted(i["normalization"] for i in items) == ["nfkc", "nfkc+casefold"]
    assert {i["key"] for i in items} == {p.name.removesuffix(".index") for p in _files(db_path)}

    # The audit with casefolding uses the index built for it.
    audit = run_cli(
        "audit", "--train", "tr", "--testset", "te", "--casefold", "--orders", "3,4", "--json"
    )
    assert json.loads(audit.stdout)["timings"]["index_loaded"] == 1.0

    nothing = run_cli("index", "drop")
    assert nothing.exit_code == 2 and "say what to drop" in nothing.stderr
    unknown = run_cli("index", "drop", "--train", "nope")
    assert unknown.exit_code == 2 and "unknown training corpus 'nope'" in unknown.stderr
    one = items[0]["key"]
    dropped = run_cli("index", "drop", "--key", one)
    assert dropped.exit_code == 0 and "dropped 1 stored index file(s)" in dropped.stdout
    assert len(_files(db_path)) == 1
    assert "dropped 1" in run_cli("index", "drop", "--train", "tr").stdout
    assert run_cli("index", "list").stdout.strip() == "no stored indexes"


def test_index_commands_need_a_warehouse_and_a_training_corpus(run_cli, db_path, registered):
    missing = run_cli("index", "list", db=db_path.with_name("none.duckdb"))
    assert missing.exit_code == 2 and "no warehouse" in missing.stderr
    wrong = run_cli("index", "build", "--train", "te")
    assert wrong.exit_code == 2 and "unknown training corpus 'te'" in wrong.stderr
    bad = run_cli("index", "build", "--train", "tr", "--orders", "0")
    assert bad.exit_code == 2 and "--orders" in bad.stderr
    assert _files(db_path) == []


def test_shards_are_listed_and_audit_identically(run_cli, db_path, registered):
    assert run_cli("audit", "--train", "tr", "--testset", "te", "--no-store-index").exit_code == 0
    reference = _exposures(run_cli)
    built = run_cli("index", "build", "--train", "tr", "--shard-rows", "50")
    assert built.exit_code == 0 and "3 file(s)" in built.stdout and "3 built" in built.stdout
    listed = run_cli("--wide", "index", "list").stdout
    assert "1/3 from row 0" in listed and "3/3 from row 100" in listed
    again = run_cli("audit", "--train", "tr", "--testset", "te", "--force", "--json")
    assert json.loads(again.stdout)["timings"]["index_loaded"] == 1.0
    assert _exposures(run_cli) == reference


def test_audit_shard_options(run_cli, db_path, registered):
    reference = run_cli("audit", "--train", "tr", "--testset", "te", "--no-store-index")
    assert reference.exit_code == 0
    expected = _exposures(run_cli)
    sharded = run_cli("audit", "--train", "tr", "--testset", "te", "--force", "--shard-rows", "33")
    assert sharded.exit_code == 0, sharded.output
    assert _exposures(run_cli) == expected and len(_files(db_path)) == 4
    both = run_cli(
        "audit", "--train", "tr", "--testset", "te", "--shard-rows", "5", "--memory-limit", "4GiB"
    )
    assert both.exit_code == 2 and "leave out --shard-rows" in both.stderr
    ray_limit = run_cli(
        "audit", "--train", "tr", "--testset", "te", "--executor", "ray", "--memory-limit", "4GiB"
    )
    assert ray_limit.exit_code == 2 and "local executor only" in ray_limit.stderr
    bad = run_cli("audit", "--train", "tr", "--testset", "te", "--memory-limit", "lots")
    assert bad.exit_code == 2 and "--memory-limit 'lots': give a size such as" in bad.stderr


def test_a_fifo_in_place_of_a_stored_index_is_replaced_not_read(run_cli, db_path, registered):
    import os
    import time

    assert run_cli("audit", "--train", "tr", "--testset", "te").exit_code == 0
    reference = _exposures(run_cli)
    [stored] = _files(db_path)
    stored.unlink()
    os.mkfifo(stored)
    started = time.monotonic()
    redone = run_cli("audit", "--train", "tr", "--testset", "te", "--force")
    assert redone.exit_code == 0, redone.output
    assert time.monotonic() - started < 60
    assert "is not a regular file; rebuilding the index" in redone.stderr
    assert _exposures(run_cli) == reference and stored.is_file()
