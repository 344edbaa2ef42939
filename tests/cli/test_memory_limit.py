"""`tame-wh audit --memory-limit`: measured in a child process, the audit's peak memory stays
under the limit on a corpus whose whole index would not fit."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

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

    argv = [sys.executable, "-m", "warehouse.cli", "--db", str(db_path), "audit", "--train", "tr"]
    argv += ["--testset", "te", "--memory-limit", f"{LIMIT_MIB}MiB", "--json"]
    out_path = db_path.with_name("audit.json")
    err_path = db_path.with_name("audit.stderr")
    with out_path.open("w") as stdout, err_path.open("w") as stderr:
        # The child's own peak resident memory, measured by the kernel through the benchmarks'
        # small launcher: a child started straight from pytest would inherit pytest's peak.
        code, _seconds, _cpu, peak_mib = measure_child(argv, stdout=stdout, stderr=stderr)
    said = err_path.read_text()
    assert code == 0, said
    assert "in shards of" in said and "peak memory" in said, said
    assert peak_mib < LIMIT_MIB, (peak_mib, said)
    reported = json.loads(out_path.read_text())["timings"]["peak_rss_bytes"]
    assert 0 < reported < LIMIT_MIB * 2**20, said
