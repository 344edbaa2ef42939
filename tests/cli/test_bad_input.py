"""Bad input through the CLI: one-line error naming file and line, exit 2, warehouse unchanged."""

from __future__ import annotations

import functools
import json
import zlib

import pytest

from tests.backends import TEMPLATES
from tests.conftest import snapshot


@pytest.fixture
def populated(run_cli, write_lines, db_path):
    """A warehouse that already holds a training corpus and a test set (a copy: made once)."""

    def make(path):
        src = write_lines("base.src", ["hello world", "good morning"])
        tgt = write_lines("base.tgt", ["hola mundo", "buenos días"])
        assert run_cli("corpus", "add", "base", "--src", src, "--tgt", tgt, db=path).exit_code == 0
        assert run_cli("testset", "add", "bt", "--src", src, "--ref", tgt, db=path).exit_code == 0

    TEMPLATES.copy_built("cli-bad-input", make, db_path)
    return snapshot(db_path)


def _assert_rejected(result, db_path, before, *fragments):
    """Exit 2, one stderr line holding every fragment, nothing on stdout, warehouse unchanged."""
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    assert "Traceback" not in result.output
    assert result.stdout == ""
    assert snapshot(db_path) == before


def test_mismatched_line_counts(run_cli, write_lines, populated, db_path):
    src = write_lines("s.txt", ["a", "b", "c"])
    tgt = write_lines("t.txt", ["A", "B"])
    result = run_cli("corpus", "add", "x", "--src", src, "--tgt", tgt)
    _assert_rejected(result, db_path, populated, f"{tgt}:3:", "has 2 lines", "has 3")


def test_mismatched_reference_count_in_test_set(run_cli, write_lines, populated, db_path):
    src = write_lines("s.txt", ["a", "b"])
    r1 = write_lines("r1.txt", ["A", "B"])
    r2 = write_lines("r2.txt", ["A", "B", "C"])
    result = run_cli("testset", "add", "x", "--src", src, "--ref", r1, "--ref", r2)
    _assert_rejected(result, db_path, populated, f"{r2}:3:", "has 3 lines")


def test_invalid_utf8(run_cli, write_lines, populated, db_path):
    src = write_lines("s.txt", b"fine\nbroken \xe9 here\n")
    tgt = write_lines("t.txt", ["A", "B"])
    result = run_cli("corpus", "add", "x", "--src", src, "--tgt", tgt)
    _assert_rejected(result, db_path, populated, f"{src}:2:", "invalid UTF-8")


def test_invalid_utf8_in_gzip_reference(run_cli, write_lines, populated, db_path):
    src = write_lines("s.txt", ["a"])
    ref = write_lines("r.txt.gz", b"\xff\n")
    result = run_cli("testset", "add", "x", "--src", src, "--ref", ref)
    _assert_rejected(result, db_path, populated, f"{ref}:1:", "invalid UTF-8")


def test_empty_file(run_cli, write_lines, populated, db_path):
    src = write_lines("s.txt", b"")
    tgt = write_lines("t.txt", ["A"])
    result = run_cli("corpus", "add", "x", "--src", src, "--tgt", tgt)
    _assert_rejected(result, db_path, populated, str(src), "empty file")


def test_missing_file(run_cli, write_lines, populated, db_path, tmp_path):
    tgt = write_lines("t.txt", ["A"])
    missing = tmp_path / "missing.txt"
    result = run_cli("corpus", "add", "x", "--src", missing, "--tgt", tgt)
    _assert_rejected(result, db_path, populated, str(missing), "no such file")


@pytest.mark.parametrize(
    ("record", "problem"),
    [
        ({"difficulty": "hard"}, "difficulty must be a number from 1 to 5, got 'hard'"),
        ({"difficulty": 7}, "whole number from 1 to 5, got 7"),
        ({"difficulty": 2.5}, "whole number from 1 to 5, got 2.5"),
        ({"difficulty": True}, "got a boolean"),
        ({"difficulty": [1]}, "got list"),
        ({"provenance": 3}, "provenance must be a string"),
        ({"id": ""}, "id must not be empty"),
        ({"id": 1.5}, "id must be a string or an integer"),
    ],
)
def test_bad_segment_metadata(run_cli, write_lines, populated, db_path, record, problem):
    src = write_lines("s.txt", ["a", "b"])
    ref = write_lines("r.txt", ["A", "B"])
    meta = write_lines("m.jsonl", [json.dumps({"id": "ok"}), json.dumps(record)])
    result = run_cli("testset", "add", "x", "--src", src, "--ref", ref, "--segments-meta", meta)
    _assert_rejected(result, db_path, populated, f"{meta}:2:", problem)


def test_duplicate_segment_ids(run_cli, write_lines, populated, db_path):
    src = write_lines("s.txt", ["a", "b", "c"])
    ref = write_lines("r.txt", ["A", "B", "C"])
    meta = write_lines("m.jsonl", ['{"id": "s1"}', '{"id": "s2"}', '{"id": "s1"}'])
    result = run_cli("testset", "add", "x", "--src", src, "--ref", ref, "--segments-meta", meta)
    _assert_rejected(
        result, db_path, populated, f"{meta}:3:", "duplicate segment id 's1'", "first on line 1"
    )


def test_explicit_id_colliding_with_a_default_index_key(run_cli, write_lines, populated, db_path):
    src = write_lines("s.txt", ["a", "b"])
    ref = write_lines("r.txt", ["A", "B"])
    meta = write_lines("m.jsonl", ['{"id": "1"}', "{}"])
    result = run_cli("testset", "add", "x", "--src", src, "--ref", ref, "--segments-meta", meta)
    _assert_rejected(result, db_path, populated, f"{meta}:2:", "duplicate segment id '1'")


def test_segment_metadata_with_wrong_line_count(run_cli, write_lines, populated, db_path):
    src = write_lines("s.txt", ["a", "b"])
    ref = write_lines("r.txt", ["A", "B"])
    meta = write_lines("m.jsonl", ['{"id": "s1"}'])
    result = run_cli("testset", "add", "x", "--src", src, "--ref", ref, "--segments-meta", meta)
    _assert_rejected(result, db_path, populated, f"{meta}:2:", "has 1 lines", "2 segments")


def test_segment_metadata_that_is_not_json(run_cli, write_lines, populated, db_path):
    src = write_lines("s.txt", ["a"])
    ref = write_lines("r.txt", ["A"])
    meta = write_lines("m.jsonl", ["{id: 1}"])
    result = run_cli("testset", "add", "x", "--src", src, "--ref", ref, "--segments-meta", meta)
    _assert_rejected(result, db_path, populated, f"{meta}:1:", "invalid JSON")


def test_bad_language_code(run_cli, write_lines, populated, db_path):
    src = write_lines("s.txt", ["a"])
    tgt = write_lines("t.txt", ["A"])
    result = run_cli("corpus", "add", "x", "--src", src, "--tgt", tgt, "--src-lang", "english!")
    _assert_rejected(result, db_path, populated, "--src-lang", "not a language code")


def test_changed_content_without_replace(run_cli, write_lines, populated, db_path):
    src = write_lines("s.txt", ["other"])
    tgt = write_lines("t.txt", ["otro"])
    result = run_cli("corpus", "add", "base", "--src", src, "--tgt", tgt)
    _assert_rejected(
        result, db_path, populated, "already exists with different content", "--replace"
    )


def test_unknown_corpus_in_show(run_cli, populated, db_path):
    result = run_cli("corpus", "show", "nope")
    _assert_rejected(result, db_path, populated, "unknown training corpus 'nope'", "known: base")


def test_warehouse_from_newer_code(run_cli, populated, db_path):
    import duckdb

    con = duckdb.connect(str(db_path))
    con.execute("INSERT INTO schema_version (version, tame_wh_version) VALUES (99, '9.9')")
    con.close()
    before = snapshot(db_path)
    result = run_cli("corpus", "list")
    _assert_rejected(result, db_path, before, "newer tame-wh", "upgrade tame-wh")


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["query", "SELECT 1", "--memory-limit", "100000000000000000000000TB"], "at most 1 PiB"),
        (
            ["audit", "--train", "base", "--testset", "bt", "--memory-limit", "9" * 30 + "TB"],
            "at most 1 PiB",
        ),
        (["leaderboard", "--as-of", "9999-12-31T23:59:59.999999-23:59"], "--as-of"),
        (["query", "SELECT 1", "--as-of", "0001-01-01T00:00:00+23:59"], "--as-of"),
        (["leaderboard", "--as-of", "9" * 25], "snapshot id that large"),
    ],
)
def test_option_values_out_of_range_are_refused_before_any_work(
    run_cli, populated, db_path, args, fragment
):
    result = run_cli(*args)
    _assert_rejected(result, db_path, populated, fragment)


def test_a_nan_lock_timeout_is_refused_not_waited_on(run_cli, populated, db_path):
    result = run_cli("--lock-timeout", "nan", "leaderboard")
    assert result.exit_code == 2 and "not nan" in result.output
    assert snapshot(db_path) == populated


@pytest.mark.parametrize("command", [["leaderboard"], ["ingest", "--testset", "bt", "--hyp", "x"]])
def test_a_warehouse_path_that_is_a_fifo_is_refused_at_once(tmp_path, command):
    import os
    import time

    from click.testing import CliRunner

    from warehouse.cli.main import main

    fifo = tmp_path / "wh.duckdb"
    os.mkfifo(fifo)
    started = time.monotonic()
    result = CliRunner().invoke(main, ["--db", str(fifo), *command])
    assert result.exit_code == 2 and "not a regular file" in result.stderr
    assert time.monotonic() - started < 5


@functools.cache
def _bomb_bytes(megabytes: int) -> bytes:
    """One gzip member of a few hundred KiB that decompresses to `megabytes` MiB of newlines
    (run-length matching: the same stream as the default strategy's, in a third of the time)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31, 9, zlib.Z_RLE)
    block = b"\n" * 2**20
    return b"".join([*(packer.compress(block) for _ in range(megabytes)), packer.flush()])


def _bomb(path, megabytes: int = 512):
    """A gzip bomb at `path`: a few hundred KiB that decompress to `megabytes` MiB."""
    path.write_bytes(_bomb_bytes(megabytes))
    return path


@pytest.mark.parametrize(
    "command",
    [
        ["ingest", "--testset", "bt", "--hyp", "{bomb}"],
        ["corpus", "add", "c2", "--src", "{bomb}", "--tgt", "{bomb}"],
        ["testset", "add", "t2", "--src", "{bomb}", "--ref", "{bomb}"],
    ],
)
def test_a_gzip_bomb_is_refused_within_seconds(run_cli, populated, db_path, tmp_path, command):
    import time

    bomb = _bomb(tmp_path / "bomb.gz")
    started = time.monotonic()
    result = run_cli(*[str(bomb) if a == "{bomb}" else a for a in command])
    _assert_rejected(result, db_path, populated, f"{bomb}:", "decompression bomb")
    assert time.monotonic() - started < 10


def test_text_inputs_are_bounded_in_size_and_line_length(
    run_cli, write_lines, populated, db_path, monkeypatch
):
    long_line = write_lines("long.txt", ["short", "x" * 50, "short"])
    monkeypatch.setenv("TAME_WH_MAX_LINE_CHARS", "40")
    result = run_cli("testset", "add", "t3", "--src", long_line, "--ref", long_line)
    _assert_rejected(result, db_path, populated, f"{long_line}:2:", "50 characters", "40")
    monkeypatch.delenv("TAME_WH_MAX_LINE_CHARS")
    big = write_lines("big.txt", ["y" * 1000] * 1200)  # 1.2 MB
    monkeypatch.setenv("TAME_WH_MAX_INPUT_MB", "1")
    result = run_cli("testset", "add", "t4", "--src", big, "--ref", big)
    _assert_rejected(result, db_path, populated, f"{big}:", "limit")
    zipped = write_lines("big.txt.gz", ["y" * 1000] * 1200)
    result = run_cli("testset", "add", "t5", "--src", zipped, "--ref", zipped)
    _assert_rejected(result, db_path, populated, f"{zipped}:", "decompresses to more than")


def test_a_truncated_gzip_file_is_refused(run_cli, write_lines, populated, db_path):
    whole = write_lines("whole.txt.gz", [f"line {i} of many words" for i in range(5000)])
    cut = whole.with_name("cut.txt.gz")
    cut.write_bytes(whole.read_bytes()[:2000])
    result = run_cli("testset", "add", "t6", "--src", cut, "--ref", cut)
    _assert_rejected(result, db_path, populated, f"{cut}:", "truncated")
