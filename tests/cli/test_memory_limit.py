"""`tame-wh audit --memory-limit`: measured in a child process, the audit's peak memory stays
under the limit on a corpus whose whole index would not fit."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys

from tests.exposure.synthetic_corpus import make_corpus

LIMIT_MIB = 400


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

    argv = [sys.executable, "-m", "cli", "--db", str(db_path), "audit", "--train", "tr"]
    argv += ["--testset", "te", "--memory-limit", f"{LIMIT_MIB}MiB", "--json"]
    err = db_path.with_name("audit.stderr")
    with err.open("w") as stderr:
        child = subprocess.Popen(
            argv,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
        )
        assert child.stdout is not None
        out = child.stdout.read()
        # This child's own resource usage (its peak resident memory), measured by the kernel.
        _pid, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
    said = err.read_text()
    assert child.returncode == 0, said
    assert "in shards of" in said and "peak memory" in said, said
    limit = LIMIT_MIB * 2**20
    assert usage.ru_maxrss * 1024 < limit, (usage.ru_maxrss, said)
    assert 0 < json.loads(out)["timings"]["peak_rss_bytes"] < limit, said
