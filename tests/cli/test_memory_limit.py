"""`tame-wh audit --memory-limit`: measured in a child process, the audit's peak memory stays
under the limit on a corpus whose whole index would not fit."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

from tests.exposure.synthetic_corpus import make_corpus

sys.path.insert(0, str(Path(__file__).parents[2] / "bench"))

from measure import measure_child

LIMIT_MIB = 400


def test_the_launcher_measures_the_child_not_the_measuring_process():
    held = bytearray(600 * 2**20)
    held[::4096] = b"\x01" * len(held[::4096])
    code, seconds, _cpu, peak_mib = measure_child([sys.executable, "-c", "pass"])
    assert code == 0 and seconds > 0
    assert 0 < peak_mib < 100
    assert len(held) == 600 * 2**20


def _audit_in_a_child(db_path: Path, name: str, *extra: str) -> tuple[int, float, str, Any]:
    """`audit --train tr --testset te --memory-limit LIMIT --json EXTRA` in a child process: its
    exit code, peak resident memory (MiB), stderr and JSON document (None when it failed). The
    peak is the kernel's, through the benchmarks' small launcher: a child started straight from
    pytest would inherit pytest's peak."""
    argv = [sys.executable, "-m", "warehouse.cli", "--db", str(db_path), "audit", "--train", "tr",
            "--testset", "te", "--memory-limit", f"{LIMIT_MIB}MiB", "--json", *extra]  # fmt: skip
    out_path, err_path = db_path.with_name(f"{name}.json"), db_path.with_name(f"{name}.stderr")
    with out_path.open("w") as stdout, err_path.open("w") as stderr:
        code, _seconds, _cpu, peak_mib = measure_child(argv, stdout=stdout, stderr=stderr)
    text = out_path.read_text()
    return code, peak_mib, err_path.read_text(), json.loads(text) if code == 0 else None


def test_peak_memory_stays_under_the_limit(run_cli, db_path, write_lines):
    # 20,000 pairs with random letters appended: a large vocabulary (the unsharded audit of this
    # corpus peaks at about twice the limit).
    corpus = make_corpus(n_train=20_000, n_test=20, seed=1, n_refs=1)
    rng = random.Random(3)

    def noisy(texts):
        return [t + " " + "".join(rng.choices("abcdefghijklmnopqrstuvwxyz ", k=60)) for t in texts]

    src = write_lines("tr.src", noisy(corpus.train_src))
    tgt = write_lines("tr.tgt", noisy(corpus.train_tgt))
    assert run_cli("corpus", "add", "tr", "--src", src, "--tgt", tgt).exit_code == 0
    refs = write_lines("te.ref", [r[0] for r in corpus.test_refs])
    te = write_lines("te.src", corpus.test_src)
    assert run_cli("testset", "add", "te", "--src", te, "--ref", refs).exit_code == 0

    code, peak_mib, said, out = _audit_in_a_child(db_path, "audit")
    assert code == 0, said
    assert "in shards of" in said and "peak memory" in said, said
    assert peak_mib < LIMIT_MIB, (peak_mib, said)
    reported = out["timings"]["peak_rss_bytes"]
    assert 0 < reported < LIMIT_MIB * 2**20, said


def test_a_minhash_audit_stays_under_the_limit_in_shards(run_cli, db_path, write_lines):
    # 60,000 pairs: the whole MinHash index (about 3 KB a row to build) would not fit beside the
    # process, DuckDB's share and the reserve under 400 MiB.
    corpus = make_corpus(n_train=60_000, n_test=20, seed=2, n_refs=1)
    src = write_lines("tr.src", corpus.train_src)
    tgt = write_lines("tr.tgt", corpus.train_tgt)
    assert run_cli("corpus", "add", "tr", "--src", src, "--tgt", tgt).exit_code == 0
    refs = write_lines("te.ref", [r[0] for r in corpus.test_refs])
    te = write_lines("te.src", corpus.test_src)
    assert run_cli("testset", "add", "te", "--src", te, "--ref", refs).exit_code == 0
    code, peak_mib, said, sharded = _audit_in_a_child(db_path, "minhash", "--measure", "minhash")
    assert code == 0, said
    assert "the MinHash index of 'tr' in shards of" in said, said
    assert peak_mib < LIMIT_MIB, (peak_mib, said)
    whole = run_cli("audit", "--train", "tr", "--testset", "te", "--measure", "minhash",
                    "--force", "--json")  # fmt: skip
    assert whole.exit_code == 0, whole.output
    unsharded = json.loads(whole.stdout)
    for key in ("sides", "bins", "pair_leak"):
        assert sharded[key] == unsharded[key], key


def test_a_row_too_long_for_the_audits_memory_is_refused_before_any_build(
    run_cli, db_path, write_lines, monkeypatch
):
    from tests.conftest import snapshot
    from warehouse.exposure.index import memory

    src = write_lines("tr.src", ["a short line", "x" * 5000, "another line"])
    assert run_cli("corpus", "add", "tr", "--src", src, "--tgt", src).exit_code == 0
    te = write_lines("te.src", ["a short line", "something else"])
    assert run_cli("testset", "add", "te", "--src", te, "--ref", te).exit_code == 0
    # As if building one character's grams took 1 MiB: the 5,000-character row needs ~5 GiB.
    monkeypatch.setitem(memory.LONG_ROW_BUILD_PER_CHAR, "jaccard", 2**20)
    monkeypatch.setitem(memory.LONG_ROW_BUILD_PER_CHAR, "minhash", 2**20)
    before = snapshot(db_path)
    for measure in ("jaccard", "minhash"):
        done = run_cli("audit", "--train", "tr", "--testset", "te", "--measure", measure,
                       "--memory-limit", "2GiB")  # fmt: skip
        assert done.exit_code == 2, done.output
        assert "row 1 holds 5,000 characters" in done.output, done.output
        assert "split long documents" in done.output and "--measure substring" in done.output
        assert snapshot(db_path) == before
    assert run_cli("audit", "--train", "tr", "--testset", "te", "--measure", "substring",
                   "--memory-limit", "2GiB").exit_code == 0  # fmt: skip


def test_duckdb_running_out_of_its_memory_is_a_usage_error_naming_the_limit(
    run_cli, db_path, monkeypatch
):
    import duckdb

    def exhausted(*_args, **_kwargs):
        raise duckdb.OutOfMemoryException(
            "Out of Memory Error: could not allocate block of size 197.1 MiB (396.3 MiB/591.0 "
            "MiB used)"
        )

    monkeypatch.setattr("warehouse.handle.Warehouse.audit", exhausted)
    done = run_cli("audit", "--train", "tr", "--testset", "te")
    assert done.exit_code == 2, done.output
    [line] = done.stderr.strip().splitlines()
    assert "needed more than its memory limit (396.3 MiB/591.0 MiB used)" in line
    assert "nothing of it was written" in line and "internal error" not in line
