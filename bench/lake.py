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
Targets (issue 12): ingest on the lake <= 2x the file's, leaderboard < 2 s, start-up < 1 s.
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

from analytics import fill
from measure import Measurement, load_average, median_each, print_ratio_table, run_child

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
    return [sys.executable, "-m", "cli", "--quiet", "--db", db, *args]


def _timed(label: str, argv: list[str], repeat: int) -> Measurement:
    return median_each(label, [run_child(label, argv) for _ in range(repeat)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--segments", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--s3", action="store_true", help="Data path on the S3 server.")
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

        def ingests(db: str, label: str, files: list[Path]) -> Measurement:
            runs = [
                run_child(
                    label,
                    _cli(
                        db,
                        "ingest",
                        "--testset",
                        "bench-test",
                        "--hyp",
                        str(f),
                        "--model-slug",
                        f"bench-{f.stem}",
                    ),
                )
                for f in files
            ]
            return median_each(label, runs)

        half = args.repeat
        ingest_file = ingests(local, "ingest, local file", hyp_files[:half])
        ingest_lake = ingests(lake, "ingest, lake", hyp_files[half:])
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
            f"\ntargets: ingest lake/file {ratio:.2f}x (<= 2x: {'met' if ratio <= 2 else 'MISSED'})"
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
