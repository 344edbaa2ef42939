"""A lake against a local file, measured in the same run: ingest, leaderboard, start-up.

Run: python bench/lake.py [--runs 1000] [--segments 2000] [--repeat 3] [--s3]
Needs $TAME_WH_TEST_PG_DSN (an admin DSN: the lake's catalog is a fresh database, dropped at the
end) and, with --s3, $TAME_WH_TEST_S3_ENDPOINT (an S3-compatible server; a fresh bucket). Without
--s3 the lake's data path is a directory.

Both warehouses hold the same --runs runs x --segments segments (bench/analytics.py's synthetic
fill, written to the file and copied to the lake with `tame-wh copy`). Every timing is a `tame-wh`
child process (start-up included), the median of --repeat:
- `ingest` of a new --segments-segment run (statistics, bootstrap intervals, storage);
- `leaderboard --json` over all runs;
- start-up: `init` on the up-to-date warehouse (attach, schema check, nothing to do).
Targets: ingest on the lake <= 1.2x the file's (docs/lake.md), CPU seconds of that ingest,
leaderboard < 2 s, start-up < 1 s.

`--soak [--writers 8] [--runs-each 50]`: the concurrency soak instead. WRITERS processes each
ingest RUNS_EACH distinct runs, one command at a time, while an auditor recomputes the audit,
two readers loop over `leaderboard` and `query`, and two more processes send the same run at
once (the children of tests/ingest/lake_workers.py). Verdicts: every command succeeded; WRITERS x
RUNS_EACH + 1 runs stored, none lost, none twice, none partial; the twin stored once; no reader
ever saw a partial run; `doctor` healthy. The test suite runs the same scenario at 8 x 8.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the soak's workers

from analytics import fill
from measure import (
    Measurement,
    load_average,
    median_each,
    median_ingests,
    print_ratio_table,
    run_child,
)

from warehouse.store.address import parse_address
from warehouse.store.copy import copy_warehouse

WORDS = [
    "river",
    "market",
    "teacher",
    "window",
    "bread",
    "morning",
    "letter",
    "ticket",
    "garden",
    "station",
    "city",
]


def _catalog(admin: str) -> tuple[str, str]:
    """A fresh catalog database: its name and a lake address for it."""
    import psycopg
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    name = f"tame_bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    info = {k: v for k, v in conninfo_to_dict(admin).items() if v is not None}
    info["dbname"] = name
    return name, "ducklake:postgres:" + make_conninfo("", **info)


def _drop(admin: str, name: str) -> None:
    import psycopg

    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _s3_data_path(endpoint: str) -> str:
    """A fresh bucket on the S3 server; sets the AWS variables for this process and children."""
    import boto3

    os.environ.update(
        {
            "AWS_ACCESS_KEY_ID": "bench",
            "AWS_SECRET_ACCESS_KEY": "bench-secret",
            "AWS_REGION": "us-east-1",
            "AWS_ENDPOINT_URL_S3": endpoint,
        }
    )
    bucket = f"tame-bench-{uuid.uuid4().hex[:10]}"
    boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1").create_bucket(Bucket=bucket)
    return f"s3://{bucket}/lake/"


def _cli(db: str, *args: str) -> list[str]:
    return [sys.executable, "-m", "warehouse.cli", "--quiet", "--db", db, *args]


def _timed(label: str, argv: list[str], repeat: int) -> Measurement:
    return median_each(label, [run_child(label, argv) for _ in range(repeat)])


def _lines(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def soak(lake: str, data_path: str, work: Path, writers: int, runs_each: int) -> bool:
    """The concurrency soak (see the module's docstring); prints its verdicts, returns whether
    all held."""
    import json
    import subprocess

    from tests.ingest.lake_workers import PARTIAL_RUNS
    from warehouse.store.connection import close_connection, connect

    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "TAME_WH_DB": lake, "TAME_WH_DATA_PATH": data_path,
           "PYTHONPATH": str(root)}  # fmt: skip

    def child(module: str, *args: object) -> subprocess.Popen:
        """A child process; what it prints goes to a file of its own in `work`."""
        log = (work / f"child-{len(list(work.glob('child-*')))}.out").open("w")
        return subprocess.Popen(
            [sys.executable, "-m", module, *map(str, args)],
            cwd=root,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            text=True,
        )

    rng = random.Random(3)

    def sentence() -> str:
        return " ".join(rng.choice(WORDS) for _ in range(6))

    train = [sentence() for _ in range(80)]
    test = train[:3] + [sentence() for _ in range(9)]
    refs = [t.upper() for t in test]
    setup = [
        ["corpus", "add", "tr", "--src", _lines(work / "tr.src", train),
         "--tgt", _lines(work / "tr.tgt", [t.upper() for t in train])],
        ["testset", "add", "ts", "--src", _lines(work / "ts.src", test),
         "--ref", _lines(work / "ts.ref", refs)],
        ["audit", "--train", "tr", "--testset", "ts"],
    ]  # fmt: skip
    for args in setup:
        if child("warehouse.cli", *args).wait() != 0:
            raise SystemExit(f"soak set-up failed: tame-wh {' '.join(map(str, args))}")
    plans = []
    for w in range(writers):
        files = []
        for k in range(runs_each):
            hyps = [r if rng.random() < 0.5 else r.lower() for r in refs]
            hyps[0] = f"writer {w} run {k}"
            files.append(_lines(work / f"w{w}-r{k:03d}.txt", hyps))
        plans.append(files)
    same = _lines(work / "same.txt", refs)
    stop = work / "stop"
    started = time.perf_counter()
    readers = [child("tests.ingest.lake_workers", "read", work / f"read{i}.log", stop)
               for i in range(2)]  # fmt: skip
    auditor = child("tests.ingest.lake_workers", "audit", work / "audit.log", "tr", "ts", stop)
    twins = [child("warehouse.cli", "ingest", "--testset", "ts", "--hyp", same,
                   "--model-slug", "twin", "--no-intervals") for _ in range(2)]  # fmt: skip
    ingesters = [child("tests.ingest.lake_workers", "ingest", work / f"w{w}.log", "ts", *plans[w])
                 for w in range(writers)]  # fmt: skip
    verdicts: list[tuple[str, bool]] = []
    codes = [p.wait() for p in ingesters + twins]
    writing = time.perf_counter() - started
    stop.touch()
    codes += [p.wait() for p in [*readers, auditor]]
    verdicts.append(("every process ended with 0", all(c == 0 for c in codes)))
    records = [
        json.loads(line)
        for w in range(writers)
        for line in (work / f"w{w}.log").read_text(encoding="utf-8").splitlines()
    ]
    failed = [r for r in records if r["code"] != 0 or "ingested run" not in r["output"]]
    verdicts.append((f"{len(records)} ingest commands, {len(failed)} failed", not failed))
    con = connect(parse_address(lake), read_only=True)
    try:
        total, distinct = con.execute(
            "SELECT count(*), count(DISTINCT run_id) FROM runs"
        ).fetchone()
        partial = con.execute(PARTIAL_RUNS).fetchall()
        twin = con.execute("SELECT count(*) FROM runs WHERE model_slug = 'twin'").fetchone()[0]
    finally:
        close_connection(con)
    expected = writers * runs_each + 1
    verdicts += [
        (f"{total} runs stored of {expected}: {expected - distinct} lost, "
         f"{total - distinct} duplicated", total == distinct == expected),
        (f"{len(partial)} partial runs", not partial),
        (f"the run sent twice at once stored {twin} time(s)", twin == 1),
    ]  # fmt: skip
    seen = [
        json.loads(line)
        for i in range(2)
        for line in (work / f"read{i}.log").read_text(encoding="utf-8").splitlines()
    ]
    bad_reads = [r for r in seen if r["code"] != 0 or r.get("partial")]
    verdicts.append((f"{len(seen)} reads, {len(bad_reads)} saw a partial run or failed",
                     not bad_reads))  # fmt: skip
    doctor = subprocess.run(_cli(lake, "doctor", "--json"), env=env, capture_output=True, text=True)
    verdicts.append(("doctor healthy", json.loads(doctor.stdout).get("ok") is True))
    print(f"\nsoak: {writers} writers x {runs_each} runs, an auditor and 2 readers: "
          f"{writing:.1f} s of writing; load average {load_average()}")  # fmt: skip
    for text, held in verdicts:
        print(f"  {'held' if held else 'FAILED'}: {text}")
    return all(held for _, held in verdicts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--segments", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--s3", action="store_true", help="Data path on the S3 server.")
    parser.add_argument("--soak", action="store_true", help="Run the concurrency soak instead.")
    parser.add_argument("--writers", type=int, default=8, help="Soak: writer processes.")
    parser.add_argument("--runs-each", type=int, default=50, help="Soak: runs per writer.")
    args = parser.parse_args()
    admin = os.environ.get("TAME_WH_TEST_PG_DSN")
    if not admin:
        raise SystemExit("set TAME_WH_TEST_PG_DSN (an admin DSN of a PostgreSQL server)")
    work = Path(tempfile.mkdtemp(prefix="tame-lake-bench-"))
    catalog, lake = _catalog(admin)
    try:
        if args.s3:
            endpoint = os.environ.get("TAME_WH_TEST_S3_ENDPOINT")
            if not endpoint:
                raise SystemExit("--s3 needs TAME_WH_TEST_S3_ENDPOINT")
            data_path = _s3_data_path(endpoint)
        else:
            data_path = str(work / "lake-data")
        if args.soak:
            if not soak(lake, data_path, work, args.writers, args.runs_each):
                raise SystemExit(1)
            return
        local = str(work / "local.duckdb")
        print(
            f"{args.runs} runs x {args.segments} segments; lake data path: "
            f"{'S3 server' if args.s3 else 'directory'}; load average {load_average()}"
        )
        started = time.perf_counter()
        fill(Path(local), args.runs, args.segments)
        filled = time.perf_counter() - started
        started = time.perf_counter()
        copied = copy_warehouse(Path(local), parse_address(lake, data_path))
        assert copied.verified
        print(
            f"filled the file in {filled:.1f} s; copied it to the lake in "
            f"{time.perf_counter() - started:.1f} s (verified table by table)"
        )

        rng = random.Random(1)
        hyp_files = []
        for k in range(args.repeat * 2):
            path = work / f"hyp{k}.txt"
            path.write_text(
                "".join(
                    " ".join(rng.choice(WORDS) for _ in range(12)) + "\n"
                    for _ in range(args.segments)
                ),
                encoding="utf-8",
            )
            hyp_files.append(path)

        half = args.repeat
        ingest_file = median_ingests(
            "ingest, local file", _cli(local), "bench-test", [str(f) for f in hyp_files[:half]]
        )
        ingest_lake = median_ingests(
            "ingest, lake", _cli(lake), "bench-test", [str(f) for f in hyp_files[half:]]
        )
        board_file = _timed(
            "leaderboard --json, local file", _cli(local, "leaderboard", "--json"), args.repeat
        )
        board_lake = _timed(
            "leaderboard --json, lake", _cli(lake, "leaderboard", "--json"), args.repeat
        )
        start_file = _timed(
            "start-up (init, up to date), local file", _cli(local, "init"), args.repeat + 2
        )
        start_lake = _timed(
            "start-up (init, up to date), lake", _cli(lake, "init"), args.repeat + 2
        )
        print_ratio_table(f"ingest of a {args.segments}-segment run", ingest_file, [ingest_lake])
        print_ratio_table(f"leaderboard over {args.runs + 2 * half} runs", board_file, [board_lake])
        print_ratio_table("command start-up on an up-to-date warehouse", start_file, [start_lake])
        ratio = ingest_lake.seconds / ingest_file.seconds
        print(
            f"\ntargets: ingest lake/file {ratio:.2f}x (<= 1.2x: "
            f"{'met' if ratio <= 1.2 else 'MISSED'}), {ingest_lake.cpu_seconds:.2f} CPU s per "
            f"ingest on a lake of {args.runs} runs"
            f"; leaderboard on the lake {board_lake.seconds:.2f} s (< 2 s: "
            f"{'met' if board_lake.seconds < 2 else 'MISSED'}); start-up on the lake "
            f"{start_lake.seconds:.2f} s (< 1 s: {'met' if start_lake.seconds < 1 else 'MISSED'})"
            f"; load average {load_average()}"
        )
    finally:
        _drop(admin, catalog)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
