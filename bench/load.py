"""Bulk corpus loading: `tame-wh corpus add` on a 1,000,000-pair corpus vs. DuckDB's own reader.

Run: python bench/load.py [--pairs 1000000] [--keep DIR]
Reference, measured in the same run: DuckDB's native read_csv of the same two files joined by
position into one table (no validation, no hashing) — the floor for getting the text into DuckDB.
Also shown: row-by-row executemany on a sample, scaled to the full size, to show why we use Arrow.
Target (issue 2): the 1M-pair load under 15 s on the 2-core reference machine.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from measure import Measurement, print_ratio_table, run_child
from synthetic import write_parallel

_DUCKDB_FLOOR = """
import duckdb, sys
con = duckdb.connect(sys.argv[1])
opts = "columns={'line': 'VARCHAR'}, delim='\\x01', quote='', escape='', header=false"
con.execute(f\"\"\"CREATE TABLE pairs AS SELECT row_number() OVER () - 1 AS seg_idx, s.line AS src,
  [t.line] AS refs FROM read_csv('{sys.argv[2]}', {opts}) s
  POSITIONAL JOIN read_csv('{sys.argv[3]}', {opts}) t\"\"\")
"""

_ROW_BY_ROW = """
import duckdb, sys
n = int(sys.argv[4])
src = open(sys.argv[2], encoding='utf-8').read().split('\\n')[:n]
tgt = open(sys.argv[3], encoding='utf-8').read().split('\\n')[:n]
con = duckdb.connect(sys.argv[1])
con.execute('CREATE TABLE pairs (seg_idx BIGINT, src VARCHAR, refs VARCHAR[])')
rows = [(i, s, [t]) for i, (s, t) in enumerate(zip(src, tgt))]
con.executemany('INSERT INTO pairs VALUES (?, ?, ?)', rows)
"""


def main() -> None:
    """Generate the corpus, measure the three loaders, print the table and the target verdict."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=1_000_000)
    parser.add_argument("--sample", type=int, default=20_000, help="rows for the executemany row")
    parser.add_argument("--keep", type=Path, default=None, help="keep generated files here")
    args = parser.parse_args()

    work = args.keep or Path(tempfile.mkdtemp(prefix="tame-bench-load-"))
    try:
        started = time.perf_counter()
        src, tgt = write_parallel(work / "corpus", args.pairs)
        size = (src.stat().st_size + tgt.stat().st_size) / 2**20
        took = time.perf_counter() - started
        print(f"generated {args.pairs:,} pairs ({size:.0f} MiB) in {took:.1f} s")

        floor = run_child(
            "duckdb read_csv + positional join (reference)",
            [sys.executable, "-c", _DUCKDB_FLOOR, str(work / "floor.duckdb"), str(src), str(tgt)],
        )
        ours = run_child(
            "tame-wh corpus add (validate, hash, Arrow load)",
            [
                sys.executable,
                "-m",
                "warehouse.cli",
                "--db",
                str(work / "ours.duckdb"),
                "corpus",
                "add",
                "bench",
                "--src",
                str(src),
                "--tgt",
                str(tgt),
            ],
        )
        sample = min(args.sample, args.pairs)
        naive = run_child(
            f"executemany, {sample:,} rows",
            [
                sys.executable,
                "-c",
                _ROW_BY_ROW,
                str(work / "naive.duckdb"),
                str(src),
                str(tgt),
                str(sample),
            ],
        )
        scale = args.pairs / sample
        naive_scaled = Measurement(
            f"executemany scaled to {args.pairs:,} rows (estimate)",
            naive.seconds * scale,
            naive.peak_mib,
            naive.cpu_seconds * scale,
        )
        print_ratio_table(f"loading {args.pairs:,} pairs", floor, [ours, naive_scaled])
        verdict = "PASS" if ours.seconds < 15 or args.pairs != 1_000_000 else "FAIL"
        print(
            f"\ntarget: 1,000,000 pairs in < 15 s -> {ours.seconds:.2f} s, "
            f"peak {ours.peak_mib:.0f} MiB [{verdict}]"
        )
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
