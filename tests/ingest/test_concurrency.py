"""Concurrent ingest: eight processes started at once on one warehouse all land, none twice."""

from __future__ import annotations

import subprocess
import sys

import duckdb


def test_eight_concurrent_ingests_all_land_exactly_once(tmp_path, write_lines, run_cli, db_path):
    src = write_lines("s", [f"sentence number {i}" for i in range(50)])
    ref = write_lines("r", [f"frase número {i}" for i in range(50)])
    assert run_cli("testset", "add", "ts", "--src", src, "--ref", ref).exit_code == 0
    commands = []
    for k in range(8):
        # Processes 6 and 7 ingest the same run: it must be stored once.
        variant = min(k, 6)
        hyp = write_lines(f"h{k}", [f"frase {variant} {i}" for i in range(50)])
        commands.append(
            [
                sys.executable,
                "-m",
                "warehouse.cli",
                "--db",
                str(db_path),
                "--lock-timeout",
                "120",
                "ingest",
                "--testset",
                "ts",
                "--hyp",
                str(hyp),
                "--model-slug",
                "m",
            ]
        )
    procs = [
        subprocess.Popen(c, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for c in commands
    ]
    outcomes = [p.communicate(timeout=300) for p in procs]
    for proc, (_out, err) in zip(procs, outcomes, strict=True):
        assert proc.returncode == 0, err
    said = "".join(out for out, _ in outcomes)
    assert said.count("already ingested run") == 1
    con = duckdb.connect(str(db_path), read_only=True)
    assert con.execute("SELECT count(*), count(DISTINCT run_id) FROM runs").fetchone() == (7, 7)
    assert con.execute("SELECT count(*) FROM hypotheses").fetchone() == (7 * 50,)
    assert con.execute(
        "SELECT count(*) FROM (SELECT run_id FROM segment_stats "
        "GROUP BY run_id HAVING count(*) = 50)"
    ).fetchone() == (7,)


def test_ingest_gives_up_after_its_lock_timeout(tmp_path, write_lines, run_cli, db_path):
    src = write_lines("s", ["a b c"])
    assert run_cli("testset", "add", "ts", "--src", src, "--ref", src).exit_code == 0
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); "
            "print('ready', flush=True); time.sleep(30)",
            str(db_path),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "ready"
        result = run_cli(
            "ingest", "--testset", "ts", "--hyp", src, "--model-slug", "m", "--lock-timeout", "0.5"
        )
        assert result.exit_code == 2
        assert "locked by another process" in result.stderr
    finally:
        holder.kill()
        holder.wait()
