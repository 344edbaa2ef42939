"""The stored sums behind the views: those of a run just written (computed from its rows in
memory) equal those recomputed from the stored tables, on a file and on a lake."""

from __future__ import annotations

import json

from warehouse.store.connection import close_connection, connect, transaction
from warehouse.store.resources import sql_statements
from warehouse.store.sums import refresh_runs

WORDS = ["river", "market", "bread", "window", "letter", "garden", "station", "morning"]


def _lines(path, lines):
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def _sums(con, run_id):
    whole = con.execute("SELECT * FROM run_sums WHERE run_id = ?", [run_id]).fetchall()
    bins = con.execute(
        "SELECT * FROM run_bin_sums WHERE run_id = ? ORDER BY ALL", [run_id]
    ).fetchall()
    return whole, bins


def test_a_runs_sums_from_its_rows_in_memory_equal_those_from_the_stored_tables(
    warehouse, tmp_path
):
    test = [" ".join(WORDS[(i + k) % 8] for k in range(3 + i % 4)) for i in range(24)]
    train = test[::2] + [" ".join(reversed(s.split())) for s in test[1::2]]
    refs = [s.upper() for s in test]
    hyps = [r if i % 3 else r.lower() for i, r in enumerate(refs)]
    run = warehouse.run
    train_src, train_tgt = _lines(tmp_path / "ts", train), _lines(tmp_path / "tt", train)
    test_src, test_ref = _lines(tmp_path / "s", test), _lines(tmp_path / "r", refs)
    assert run("corpus", "add", "tr", "--src", train_src, "--tgt", train_tgt).exit_code == 0
    assert run("testset", "add", "ts", "--src", test_src, "--ref", test_ref).exit_code == 0
    assert run("audit", "--train", "tr", "--testset", "ts").exit_code == 0
    entries = [
        {"source": test[i], "expected": refs[i], "predicted": hyps[i], "latency_s": 0.1 * i}
        for i in range(24)
    ]
    report = tmp_path / "run.json"
    report.write_text(json.dumps({"model_slug": "m", "entries": entries}), encoding="utf-8")
    done = run("ingest", report, "--testset", "ts", "--json")
    assert done.exit_code == 0, done.output
    con = connect(warehouse.address)
    try:
        [run_id] = [r for (r,) in con.execute("SELECT run_id FROM runs").fetchall()]
        written = _sums(con, run_id)
        assert len(written[0]) == 1 and len(written[1]) > 1  # whole run; 'all' and each bin
        assert written[0][0][-3:] != (None, None, None)  # latency mean, median and p95
        with transaction(con):
            refresh_runs(con, [run_id])  # from the stored tables, replacing the rows
        assert _sums(con, run_id) == written
    finally:
        close_connection(con)


def test_the_sums_file_marks_its_deletes_for_runs_just_written():
    kinds = [s.is_delete for s in sql_statements("refresh_run_sums")]
    assert kinds == [True, False, True, False]
    wanted = {"run_ids", "segment_stats", "hypotheses", "runs"}
    assert set().union(*(s.parameters for s in sql_statements("refresh_run_sums"))) == wanted
