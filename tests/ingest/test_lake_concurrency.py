"""Many writers on one lake at once: 8 processes ingest 8 distinct runs each while an audit
recomputes and readers loop over `leaderboard` and `query` — every run stored exactly once, the
same run sent by two processes stored once, no reader ever sees a run without all its rows. And a
writer killed with SIGKILL at a random point leaves nothing partial behind."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.backends import Warehouse
from tests.conftest import VOCABULARY
from tests.ingest.lake_workers import PARTIAL_RUNS

ROOT = Path(__file__).resolve().parents[2]
WRITERS, SEGMENTS = 8, 12
# Runs per writer: enough for every writer to queue behind the others (32 commits on a data
# directory, 8 on the slower S3 data path, beside the twins' and the audit's, contend for the
# lake). The 8 x 50 soak of the same scenario is `python bench/lake.py --soak`.
RUNS_EACH = {"lake-dir": 4, "lake-s3": 1}

pytestmark = pytest.mark.slow


def _lines(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def _sentences(rng: random.Random, n: int) -> list[str]:
    return [" ".join(rng.choice(VOCABULARY) for _ in range(6)) for _ in range(n)]


def _worker(lake: Warehouse, *args: str | Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.ingest.lake_workers", *map(str, args)],
        cwd=ROOT,
        env={**lake.child_env(), "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _cli(lake: Warehouse, *args: str | Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "warehouse.cli", *map(str, args)],
        cwd=ROOT,
        env={**lake.child_env(), "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _setup(lake: Warehouse, tmp_path: Path) -> list[str]:
    rng = random.Random(3)
    train = _sentences(rng, 80)
    test = train[:3] + _sentences(rng, SEGMENTS - 3)
    files = {
        name: _lines(tmp_path / f"{name}.txt", lines)
        for name, lines in {
            "train_src": train,
            "train_tgt": [s.upper() for s in train],
            "test_src": test,
            "test_ref": [s.upper() for s in test],
        }.items()
    }
    assert (
        lake.run(
            "corpus", "add", "tr", "--src", files["train_src"], "--tgt", files["train_tgt"]
        ).exit_code
        == 0
    )
    assert (
        lake.run(
            "testset", "add", "ts", "--src", files["test_src"], "--ref", files["test_ref"]
        ).exit_code
        == 0
    )
    assert lake.run("audit", "--train", "tr", "--testset", "ts").exit_code == 0
    return [s.upper() for s in test]


# On the S3 data path, a team's setup (the data directory's concurrency is exercised by the
# killed-writer test below and by the copy during eight writers, tests/store/test_copy.py).
@pytest.mark.parametrize("lake", ["lake-s3"], indirect=True)
def test_eight_writers_an_audit_and_readers_at_once(lake, tmp_path):
    runs_each = RUNS_EACH[lake.kind]
    refs = _setup(lake, tmp_path)
    rng = random.Random(11)
    hyp_dir = tmp_path / "hyps"
    hyp_dir.mkdir()
    plans = []
    for w in range(WRITERS):
        files = []
        for k in range(runs_each):
            hyps = [r if rng.random() < 0.5 else r.lower() for r in refs]
            hyps[0] = f"writer {w} run {k}"  # every run distinct
            files.append(str(_lines(hyp_dir / f"w{w}-r{k:02d}.txt", hyps)))
        plans.append(files)
    same = _lines(tmp_path / "same.txt", refs)  # sent by two processes at once
    stop = tmp_path / "stop"
    writing = tmp_path / "writing"  # exists while the writers run
    writing.touch()
    reads = [tmp_path / f"read{i}.log" for i in range(2)]
    readers = [_worker(lake, "read", log, stop, writing) for log in reads]
    auditor = _worker(lake, "audit", tmp_path / "audit.log", "tr", "ts", stop)
    twins = [
        _cli(
            lake,
            "ingest",
            "--testset",
            "ts",
            "--hyp",
            same,
            "--model-slug",
            "twin",
            "--no-intervals",
        )
        for _ in range(2)
    ]
    writers = [
        _worker(lake, "ingest", tmp_path / f"w{w}.log", "ts", *plans[w]) for w in range(WRITERS)
    ]
    started = time.monotonic()
    twin_said = []
    for proc in writers + twins:
        out, _ = proc.communicate(timeout=1500)
        assert proc.returncode == 0, out
        if proc in twins:
            twin_said.append(out)
    writing.unlink()
    # Each reader reads once more after the last write (how long the writes take varies).
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not all(
        log.exists() and any(r["writing"] is False for r in _records(log)) for log in reads
    ):
        time.sleep(0.2)
    stop.touch()
    for proc in [*readers, auditor]:
        out, _ = proc.communicate(timeout=300)
        assert proc.returncode == 0, out
    elapsed = time.monotonic() - started

    # Every writer command succeeded and said it ingested its run.
    for w in range(WRITERS):
        records = _records(tmp_path / f"w{w}.log")
        assert len(records) == runs_each
        # Only the commands that did not ingest, whole (a failure names its cause).
        failed = [r for r in records if r["code"] != 0 or "ingested run" not in r["output"]]
        assert failed == [], f"writer {w}: {failed}"
    assert sorted(t.split(" run ")[0] for t in twin_said) == ["already ingested", "ingested"]

    # Every run + the twin, none lost, none twice, each complete; every key unique.
    runs = lake.sql("SELECT count(*), count(DISTINCT run_id) FROM runs")[0]
    assert runs == (WRITERS * runs_each + 1, WRITERS * runs_each + 1)
    assert lake.sql(PARTIAL_RUNS) == []
    assert lake.sql("SELECT count(*) FROM runs WHERE model_slug = 'twin'") == [(1,)]
    doctor = json.loads(lake.run("doctor", "--json").stdout)
    assert doctor["ok"] is True and doctor["warehouse"]["constraint_violations"] == []

    # The audit recomputed while the runs arrived; every run has its bins for the final audit.
    audits = _records(tmp_path / "audit.log")
    assert audits and all(a["code"] == 0 for a in audits), audits[-3:]
    missing_bins = lake.sql(
        "SELECT count(*) FROM runs r WHERE NOT EXISTS (SELECT 1 FROM run_bin_sums b "
        "JOIN audits a USING (audit_id) WHERE b.run_id = r.run_id AND b.bin = 'all')"
    )
    assert missing_bins == [(0,)]

    # Readers looped all along, while the runs arrived and after, and never saw a run without
    # its rows.
    for log in reads:
        seen = [r for r in _records(log) if r["what"] == "query"]
        assert {r["writing"] for r in seen} == {True, False}, seen
        assert all(r["code"] == 0 and r["partial"] == [] for r in seen), seen[-3:]
        assert not [r for r in _records(log) if r["what"] == "leaderboard"]
    print(f"\n{WRITERS}x{runs_each} runs with an audit and 2 readers: {elapsed:.1f} s")


# Kills per data path, alternating ingest and audit, each at a random point of the command
# (bench/lake.py --soak runs the concurrent writers at scale).
TRIALS = 6


def test_a_writer_killed_at_random_points_leaves_nothing_partial(lake, tmp_path):
    refs = _setup(lake, tmp_path)
    rng = random.Random(5)
    big_refs = [" ".join(rng.choice(VOCABULARY) for _ in range(12)) for _ in range(400)]
    big_src = _lines(tmp_path / "big_src.txt", [s.lower() for s in big_refs])
    assert (
        lake.run(
            "testset",
            "add",
            "big",
            "--src",
            big_src,
            "--ref",
            _lines(tmp_path / "big_ref.txt", big_refs),
        ).exit_code
        == 0
    )
    # How long a writer takes, to kill it within that span.
    started = time.monotonic()
    probe = lake.run("ingest", "--testset", "big", "--hyp", big_src, "--model-slug", "p", "--json")
    span = time.monotonic() - started + 1.0  # a child process also starts Python
    probe_id = json.loads(probe.stdout)[0]["run_id"]
    outcomes = []
    for trial in range(TRIALS):
        if trial % 2:
            command = ("audit", "--train", "tr", "--testset", "big", "--force")
        else:
            hyps = [r if rng.random() < 0.7 else r.lower() for r in big_refs]
            hyps[0] = f"killed {trial}"
            hyp = _lines(tmp_path / f"k{trial}.txt", hyps)
            command = ("ingest", "--testset", "big", "--hyp", str(hyp), "--model-slug", f"k{trial}")
        proc = _cli(lake, *command)
        time.sleep(rng.uniform(0.1, span))
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=60)
        outcomes.append(proc.returncode)
        # Nothing partial: every run complete, every audit with all its exposures.
        assert lake.sql(PARTIAL_RUNS) == []
        assert (
            lake.sql(
                "SELECT a.audit_id FROM audits a WHERE a.n_segments <> (SELECT count(*) FROM "
                "exposures e WHERE e.audit_id = a.audit_id) OR a.n_segments <> (SELECT count(*) "
                "FROM tm_segment_stats t WHERE t.audit_id = a.audit_id)"
            )
            == []
        )
        # The next command succeeds at once (the killed writer's lock went with its session).
        after = lake.run("--lock-timeout", "20", "runs", "tag", probe_id, f"trial={trial}")
        assert after.exit_code == 0, after.output
    assert -signal.SIGKILL in outcomes  # some writers were killed mid-command
    doctor = json.loads(lake.run("doctor", "--json").stdout)
    assert doctor["ok"] is True and doctor["warehouse"]["constraint_violations"] == []
    last = _lines(tmp_path / "last.txt", refs)
    assert lake.run("ingest", "--testset", "ts", "--hyp", last, "--model-slug", "z").exit_code == 0
