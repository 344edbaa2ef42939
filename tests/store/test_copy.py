"""`tame-wh copy` between a local file and a lake, both ways, and `tame-wh lake maintain`: the
round trip local → lake → local answers every table and view query byte for byte as the
original; maintenance keeps the data and drops only history."""

from __future__ import annotations

import json

import duckdb
from click.testing import CliRunner

from cli.main import main
from warehouse.store.schema import code_schema_version

# Views whose floating-point sums may differ in the last bit with the order rows are read in are
# compared after rounding to 12 significant digits; everything else must be equal to the bit.


def _relations(path) -> dict[str, list[tuple]]:
    """Every table and view of a local warehouse, rows sorted."""
    con = duckdb.connect(str(path), read_only=True)
    try:
        names = [
            r[0]
            for r in con.execute(
                "SELECT table_name FROM duckdb_tables() UNION ALL "
                "SELECT view_name FROM duckdb_views() WHERE NOT internal ORDER BY 1"
            ).fetchall()
        ]
        return {n: con.execute(f'SELECT * FROM "{n}" ORDER BY ALL').fetchall() for n in names}
    finally:
        con.close()


def _cli(*args):
    return CliRunner().invoke(main, [*map(str, args)])


def test_local_to_lake_to_local_gives_identical_tables_and_views(lake, tmp_path):
    original = tmp_path / "original.duckdb"
    assert _cli("--db", original, "demo").exit_code == 0
    there = _cli(
        "copy", "--from", original, "--to", lake.db, "--to-data-path", lake.data_path, "--json"
    )
    assert there.exit_code == 0, there.output
    report = json.loads(there.stdout)
    assert report["verified"] is True and report["schema_version"] == code_schema_version()
    assert {t["table"]: t["rows"] for t in report["tables"]}["runs"] == 3
    # The lake answers like the original.
    board = json.loads(lake.run("leaderboard", "--json").output)
    local_board = json.loads(_cli("--db", original, "leaderboard", "--json").output)
    assert board == local_board
    back = tmp_path / "back.duckdb"
    returned = _cli("copy", "--from", lake.db, "--to", back, "--json")
    assert returned.exit_code == 0 and json.loads(returned.stdout)["verified"] is True
    before, after = _relations(original), _relations(back)
    assert sorted(before) == sorted(after)
    for name in before:
        assert after[name] == before[name], name


def test_copy_refuses_a_destination_with_data_and_the_same_warehouse(lake, tmp_path):
    original = tmp_path / "o.duckdb"
    assert _cli("--db", original, "demo").exit_code == 0
    assert lake.run("demo").exit_code == 0
    snapshots = lake.sql("SELECT count(*) FROM ducklake_snapshots('tame')")
    refused = _cli("copy", "--from", original, "--to", lake.db)
    assert refused.exit_code == 2 and "already holds data" in refused.output
    assert lake.sql("SELECT count(*) FROM ducklake_snapshots('tame')") == snapshots
    same = _cli("copy", "--from", lake.db, "--to", lake.db)
    assert same.exit_code == 2 and "same warehouse" in same.output
    missing = _cli("copy", "--from", tmp_path / "none.duckdb", "--to", tmp_path / "x.duckdb")
    assert missing.exit_code == 2 and not (tmp_path / "x.duckdb").exists()


def test_maintain_compacts_and_expires_history_but_keeps_the_data(lake):
    assert lake.run("demo").exit_code == 0
    first = lake.sql("SELECT min(snapshot_id) FROM ducklake_snapshots('tame')")[0][0]
    board = json.loads(lake.run("leaderboard", "--json").output)
    listed = json.loads(lake.run("lake", "snapshots", "--json").output)
    assert listed[0]["snapshot_id"] > first and "runs" in " ".join(s["changes"] for s in listed)
    dry = json.loads(lake.run("lake", "maintain", "--keep-days", "0", "--dry-run", "--json").output)
    assert dry["dry_run"] is True and dry["snapshots_expired"] > 0
    done = lake.run("lake", "maintain", "--keep-days", "0", "--grace-hours", "0", "--json")
    assert done.exit_code == 0, done.output
    result = json.loads(done.output)
    assert result["files_merged"] >= result["files_created"] and result["snapshots_left"] >= 1
    assert json.loads(lake.run("leaderboard", "--json").output) == board
    gone = lake.run("leaderboard", "--as-of", str(listed[1]["snapshot_id"]))
    assert gone.exit_code == 2 and "no such snapshot" in gone.output
    doctor = json.loads(lake.run("doctor", "--json").output)
    assert doctor["ok"] is True


def test_lake_commands_refuse_a_local_file(tmp_path):
    for command in (("lake", "maintain"), ("lake", "snapshots")):
        result = _cli("--db", tmp_path / "wh.duckdb", *command)
        assert result.exit_code == 2 and "is a local file" in result.output
    assert not (tmp_path / "wh.duckdb").exists()
