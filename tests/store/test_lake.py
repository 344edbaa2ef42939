"""Lake addresses and how a lake is opened: parsing, secrets kept out of output and rows, bad
addresses refused in one line with exit 2 and nothing written, start-up without DDL, the schema
in DuckLake's dialect and the constraints the application keeps."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid

import duckdb
import psycopg
import pytest
from click.testing import CliRunner

from tests.backends import (
    LAKES,
    PG_DSN_ENV,
    Warehouse,
    drop_database,
    make_warehouse,
    new_database,
    require_service,
)
from warehouse.cli.main import main
from warehouse.errors import LockTimeoutError, RemoteError, UsageError
from warehouse.store import lake as lake_module
from warehouse.store.address import LakeAddress, parse_address
from warehouse.store.connection import close_connection, connect
from warehouse.store.lake import parse_as_of, s3_settings
from warehouse.store.lake_dialect import enforced_constraints, lake_schema_files, violations

# --- Addresses (no services needed) -----------------------------------------------------------


def test_a_lake_address_is_parsed_and_printed_without_change_of_meaning():
    address = parse_address("ducklake:postgres:host=db.example port=5432 dbname=wh user=ci", "/d")
    assert isinstance(address, LakeAddress)
    assert address.database == "wh" and address.data_path == "/d/"
    assert str(address) == "ducklake:postgres:dbname=wh host=db.example port=5432 user=ci"
    assert parse_address("wh.duckdb").name == "wh.duckdb"  # type: ignore[union-attr]


def test_s3_data_paths_keep_their_url_and_get_a_trailing_slash():
    address = parse_address("ducklake:postgres:dbname=wh", "s3://bucket/team/lake")
    assert isinstance(address, LakeAddress)
    assert address.data_path == "s3://bucket/team/lake/" and address.is_s3


@pytest.mark.parametrize(
    ("db", "data_path", "message"),
    [
        ("ducklake:postgres:dbname=wh password=hunter2", None, "must not contain password"),
        ("ducklake:postgres:dbname=wh sslpassword=hunter2", None, "sslpassword"),
        ("ducklake:postgres:host=x", None, "names no database"),
        ("ducklake:postgres:dbname='unterminated", None, "not a libpq connection string"),
        ("ducklake:sqlite:wh.db", None, "only PostgreSQL lake catalogs"),
        # Near misses: the catalog without the lake prefix, or the URL after the wrong prefix.
        ("postgres:host=h dbname=wh password=hunter2", None, "names a PostgreSQL database"),
        ("postgresql://u:hunter2@h/wh", None, "starts with ducklake:postgres:"),
        ("ducklake:postgresql://u:hunter2@h/wh", None, "ducklake:postgres:postgresql://"),
        ("ducklake:postgres://u:hunter2@h/wh", None, "for a URL"),
        ("wh.duckdb", "/data", "--data-path is for a lake"),
        ("ducklake:postgres:dbname=wh", "gs://bucket/x", "only s3:// URLs"),
        ("ducklake:postgres:dbname=wh", "s3:///x", "names no bucket"),
    ],
)
def test_bad_addresses_are_usage_errors_that_never_echo_a_password(db, data_path, message):
    with pytest.raises(UsageError) as caught:
        parse_address(db, data_path)
    assert message in str(caught.value)
    assert "hunter2" not in str(caught.value)


def test_a_password_in_the_address_is_exit_2_without_touching_anything(tmp_path):
    result = CliRunner().invoke(
        main, ["--db", "ducklake:postgres:dbname=wh password=hunter2", "runs", "list"]
    )
    assert result.exit_code == 2
    assert "hunter2" not in result.output and "PGPASSWORD" in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_s3_settings_come_from_the_standard_variables():
    settings = s3_settings(
        {
            "AWS_ACCESS_KEY_ID": "id",
            "AWS_SECRET_ACCESS_KEY": "secret",
            "AWS_DEFAULT_REGION": "eu-central-1",
            "AWS_ENDPOINT_URL": "http://127.0.0.1:9000/",
        }
    )
    assert (settings.endpoint, settings.use_ssl, settings.url_style) == (
        "127.0.0.1:9000",
        False,
        "path",
    )
    assert settings.region == "eu-central-1" and "secret" not in settings.describe()
    supabase = s3_settings({"AWS_ENDPOINT_URL_S3": "https://abc.supabase.co/storage/v1/s3"})
    assert supabase.endpoint == "abc.supabase.co/storage/v1/s3" and supabase.use_ssl
    assert s3_settings({}).url_style == "vhost" and s3_settings({}).endpoint is None
    with pytest.raises(UsageError):
        s3_settings({"TAME_WH_S3_URL_STYLE": "sideways"})


def test_as_of_takes_a_snapshot_id_or_a_time_in_utc():
    assert parse_as_of("42").snapshot == 42
    when = parse_as_of("2026-05-01T12:00:00+02:00").time
    assert when is not None and when.isoformat() == "2026-05-01T10:00:00"
    assert parse_as_of("2026-05-01").option() == "SNAPSHOT_TIME '2026-05-01 00:00:00.000000+00'"
    with pytest.raises(UsageError):
        parse_as_of("last tuesday')")


def test_the_lake_dialect_drops_every_constraint_and_keeps_them_as_checks():
    for _number, statements in lake_schema_files():
        for statement in statements:
            upper = statement.upper()
            if "CREATE TABLE" in upper:
                assert "PRIMARY KEY" not in upper and "UNIQUE" not in upper
                assert "CHECK (" not in upper and "NEXTVAL" not in upper
            assert "CREATE SEQUENCE" not in upper
    described = {c.describe() for c in enforced_constraints()}
    assert "runs (run_id) unique" in described
    assert "corpora (name) unique" in described
    assert "metric_values (run_id, seg_idx, metric) unique" in described
    # A table rebuilt to change a CHECK hands the new one to its name; the old one is gone.
    assert (
        "exposures check (bin IN ('source_exact', 'target_exact', 'near', 'medium', 'far'))"
        in described
    )
    assert "exposures check (bin IN ('source_exact', 'near', 'medium', 'far'))" not in described
    assert not any(c.table.endswith(("_v12", "_v20")) for c in enforced_constraints())


def test_violations_counts_each_broken_key_and_check_and_skips_missing_tables():
    # The lake's tables carry no constraints; here, tables made as a lake makes them.
    con = duckdb.connect(":memory:")
    con.execute("CREATE TABLE corpora (corpus_id VARCHAR, name VARCHAR, role VARCHAR, "
                "n_segments INTEGER, n_refs INTEGER)")  # fmt: skip
    assert violations(con) == []
    con.execute(
        "INSERT INTO corpora VALUES ('a', 'x', 'train', 1, 1), ('b', 'x', 'test', 0, 1), "
        "('c', 'y', 'other', 2, 1), ('c', 'z', 'test', 2, 1)"
    )
    assert sorted(violations(con)) == [
        "corpora (corpus_id) unique: 1 violation(s)",
        "corpora (name) unique: 1 violation(s)",
        "corpora check (n_segments > 0): 1 violation(s)",
        "corpora check (role IN ('train', 'test')): 1 violation(s)",
    ]


# --- Against the catalog and the storage ------------------------------------------------------


def _run(lake, *args, db=None, data_path=None):
    options = ["--db", db or lake.db]
    if data_path or lake.data_path:
        options += ["--data-path", data_path or lake.data_path]
    return CliRunner().invoke(main, [*options, *map(str, args)])


def _one_line_exit_2(result) -> str:
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    return lines[0]


def _catalog_tables(lake) -> int:
    info = dict(lake.address.conninfo)
    with psycopg.connect(lake.address.libpq, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_tables WHERE schemaname = 'public' "
            "AND tablename LIKE 'ducklake%%'"
        ).fetchone()
    assert info["dbname"]
    return int(row[0]) if row else 0


def test_start_up_on_an_up_to_date_lake_runs_no_ddl(lake):
    assert lake.run("init").exit_code == 0
    before = lake.sql(
        "SELECT max(snapshot_id), max(schema_version) FROM ducklake_snapshots('tame')"
    )
    for command in (("init",), ("runs", "list"), ("leaderboard",), ("doctor",)):
        assert lake.run(*command).exit_code == 0
    after = lake.sql("SELECT max(snapshot_id), max(schema_version) FROM ducklake_snapshots('tame')")
    assert after == before


def test_a_new_lake_gives_every_table_statistics_and_keeps_no_placeholder_row(lake, tmp_path):
    # Without a statistics row DuckLake asks its catalog again for every column of the table
    # each query names (docs/lake.md); the placeholder row that makes one is deleted again.
    assert lake.run("init").exit_code == 0
    without_stats = lake.sql(
        "SELECT t.table_name FROM __ducklake_metadata_tame.tame_lake.ducklake_table t "
        "WHERE t.end_snapshot IS NULL AND t.table_id NOT IN "
        "(SELECT table_id FROM __ducklake_metadata_tame.tame_lake.ducklake_table_stats)"
    )
    assert without_stats == []
    local = Warehouse("local", str(tmp_path / "local.duckdb"))
    assert local.run("init").exit_code == 0
    lake_rows, local_rows = lake.tables(), local.tables()
    for rows in (lake_rows, local_rows):  # applied when each was made
        rows["schema_version"] = [(v, tame_wh) for v, _applied, tame_wh in rows["schema_version"]]
    assert lake_rows == local_rows


@pytest.mark.parametrize("lake", LAKES, indirect=True)  # the data path matters
def test_an_existing_lake_needs_no_data_path_and_a_wrong_one_writes_nothing(lake, tmp_path):
    assert lake.run("init").exit_code == 0
    without = CliRunner().invoke(main, ["--db", lake.db, "runs", "list", "--json"])
    assert without.exit_code == 0 and json.loads(without.stdout) == []
    snapshots = lake.sql("SELECT count(*) FROM ducklake_snapshots('tame')")
    other = "s3://elsewhere/lake/" if lake.address.is_s3 else str(tmp_path / "elsewhere")
    for command in (("init",), ("runs", "list"), ("corpus", "list")):
        line = _one_line_exit_2(_run(lake, *command, data_path=other))
        assert "does not match the data path this lake records" in line
    assert lake.sql("SELECT count(*) FROM ducklake_snapshots('tame')") == snapshots


@pytest.mark.parametrize("new_lake", LAKES, indirect=True)  # the data path matters
def test_a_new_lake_needs_a_data_path(new_lake):
    line = _one_line_exit_2(CliRunner().invoke(main, ["--db", new_lake.db, "init"]))
    assert "needs --data-path" in line
    assert _catalog_tables(new_lake) == 0


@pytest.mark.parametrize("new_lake", LAKES, indirect=True)  # the data path matters
def test_readers_of_a_catalog_without_a_lake_create_nothing(new_lake):
    for command in (("runs", "list"), ("leaderboard",), ("query", "SELECT 1"), ("report", "x")):
        line = _one_line_exit_2(new_lake.run(*command))
        assert "no warehouse at ducklake:postgres:" in line
    assert _catalog_tables(new_lake) == 0


def test_an_unreachable_catalog_is_one_line_and_exit_4(tmp_path):
    # The server did not answer: a remote failure (exit 4), not a wrong address.
    db = "ducklake:postgres:host=127.0.0.1 port=1 dbname=nowhere connect_timeout=2"
    for command in (("init",), ("runs", "list"), ("corpus", "list"), ("doctor",)):
        result = CliRunner().invoke(main, ["--db", db, "--data-path", str(tmp_path), *command])
        if command == ("doctor",):
            assert result.exit_code == 3 and "catalog              NOT reachable" in result.output
            continue
        assert result.exit_code == 4, result.output
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: lake catalog ")
        assert "cannot connect" in lines[0] and "nothing was written" in lines[0]
    assert list(tmp_path.iterdir()) == []


def test_a_wrong_password_is_one_line_exit_2_and_never_printed(monkeypatch, tmp_path):
    admin = require_service(PG_DSN_ENV, "PostgreSQL")
    name, libpq = new_database()
    role = f"tame_pw_{uuid.uuid4().hex[:8]}"
    try:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(
                "DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = "
                "'tame_password_login') THEN CREATE ROLE tame_password_login NOLOGIN; "
                "END IF; END $$"
            )
            conn.execute(
                f"CREATE ROLE {role} LOGIN PASSWORD 'right-pw-123' IN ROLE tame_password_login"
            )
        info = dict(parse_address("ducklake:postgres:" + libpq).conninfo)  # type: ignore[union-attr]
        info["user"] = role
        db = "ducklake:postgres:" + " ".join(f"{k}={v}" for k, v in info.items())
        monkeypatch.setenv("PGPASSWORD", "wrong-pw-456")
        try:
            psycopg.connect(LakeAddress(tuple(info.items())).libpq).close()
        except psycopg.OperationalError:
            pass
        else:
            message = "the test cluster does not check passwords (pg_hba: +tame_password_login)"
            if __import__("os").environ.get("CI"):
                pytest.fail(message)
            pytest.skip(message)
        result = CliRunner().invoke(main, ["--db", db, "--data-path", str(tmp_path), "init"])
        line = _one_line_exit_2(result)
        assert "password authentication failed" in line
        assert "wrong-pw-456" not in result.output and "right-pw-123" not in result.output
        assert list(tmp_path.iterdir()) == []
    finally:
        drop_database(name)
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f"DROP ROLE IF EXISTS {role}")


@pytest.mark.parametrize("option", ["-c no_such_setting=1", "-c work_mem=lots"])
def test_a_setting_the_server_refuses_in_the_address_is_a_wrong_address(tmp_path, option):
    require_service(PG_DSN_ENV, "PostgreSQL")
    name, libpq = new_database()
    try:
        db = f"ducklake:postgres:{libpq} options='{option}'"
        result = CliRunner().invoke(main, ["--db", db, "--data-path", str(tmp_path), "init"])
        line = _one_line_exit_2(result)  # the call names it: fix the call, not the server
        assert "cannot connect" in line and "nothing was written" in line
        assert list(tmp_path.iterdir()) == []
    finally:
        drop_database(name)


def test_a_missing_bucket_is_one_line_exit_2_and_writes_nothing(tmp_path, monkeypatch):
    setup = make_warehouse("lake-s3", tmp_path, monkeypatch)
    lake = next(setup)
    try:
        result = _run(lake, "init", data_path="s3://no-such-bucket-for-tame/lake/")
        line = _one_line_exit_2(result)
        assert "the bucket does not exist" in line
        assert _catalog_tables(lake) == 0
        assert lake.env["AWS_SECRET_ACCESS_KEY"] not in result.output
    finally:
        setup.close()


@pytest.mark.parametrize("lake", LAKES, indirect=True)  # the data path matters
def test_a_lake_written_by_a_newer_tame_wh_is_refused_and_left_alone(lake):
    assert lake.run("init").exit_code == 0
    from warehouse.store.schema import writing

    with writing(lake.address) as con:
        con.execute("INSERT INTO schema_version (version, tame_wh_version) VALUES (99, '9.9')")
    snapshots = lake.sql("SELECT count(*) FROM ducklake_snapshots('tame')")
    for command in (("init",), ("runs", "list"), ("demo",), ("leaderboard",)):
        line = _one_line_exit_2(lake.run(*command))
        assert "written by a newer tame-wh" in line
    assert lake.sql("SELECT count(*) FROM ducklake_snapshots('tame')") == snapshots


# On the S3 data path, whose secrets (the catalog's password and the object store's key) are a
# superset of a data directory's.
@pytest.mark.parametrize("lake", ["lake-s3"], indirect=True)
def test_secrets_appear_in_no_output_and_no_stored_row(lake, monkeypatch):
    monkeypatch.setenv("PGPASSWORD", "pg-secret-never-shown")
    outputs = [
        lake.run("demo"),
        lake.run("doctor", "--json"),
        lake.run("doctor"),
        lake.run("query", "SELECT * FROM duckdb_settings()"),
        lake.run("query", "SELECT * FROM duckdb_databases()"),
        lake.run("--debug", "query", "SELECT * FROM duckdb_secrets()"),
    ]
    secrets = ["pg-secret-never-shown"]
    if lake.address.is_s3:
        secrets.append(lake.env["AWS_SECRET_ACCESS_KEY"])
    text = "\n".join(r.output for r in outputs) + json.dumps(lake.tables(), default=str)
    for secret in secrets:
        assert secret not in text
    assert outputs[0].exit_code == 0 and json.loads(outputs[1].stdout)["ok"] is True


# The catalog address is the same whatever the data path: a data directory's lake is enough.
@pytest.mark.parametrize("new_lake", ["lake-dir"], indirect=True)
def test_address_values_that_can_carry_secrets_are_shown_redacted(new_lake, tmp_path):
    # Only host, port, dbname, user, sslmode and service are shown verbatim; `options`,
    # `passfile`, `application_name` and any other key's value is `***` in every message.
    secrets = ("appsecret-91f2", "/tmp/passfile-secret-55c1", "statement_timeout=987654")
    db = (
        f"{new_lake.db} application_name={secrets[0]} passfile={secrets[1]} "
        f"options='-c {secrets[2]}'"
    )
    outputs = []
    for args in (
        ["--data-path", new_lake.data_path, "init"],
        ["doctor"],
        ["doctor", "--json"],
        ["report", "no-such-run"],
        ["query", "SELECT * FROM nowhere"],
        ["--debug", "report", "no-such-run"],
    ):
        result = CliRunner().invoke(main, ["--db", db, *args])
        outputs.append(result.output)
    unreachable = CliRunner().invoke(
        main,
        ["--db", f"ducklake:postgres:host=127.0.0.1 port=1 dbname=x application_name={secrets[0]}",
         "leaderboard"],
    )  # fmt: skip
    assert unreachable.exit_code == 4  # the server did not answer
    outputs.append(unreachable.output)
    for output in outputs:
        for secret in secrets:
            assert secret not in output
    assert outputs[0].startswith("created warehouse ducklake:postgres:application_name=*** ")
    assert "application_name=*** " in outputs[1] and "passfile=*** " in outputs[1]
    assert "dbname=" in outputs[1] and "options=***" in outputs[1]


# --- Opening without a look at the catalog first ----------------------------------------------


def test_a_reader_attaches_an_existing_lake_without_loading_a_postgresql_driver(lake):
    script = (  # the watchdog probes every 10 ms: its probes must not load the driver either
        "import sys\n"
        "import warehouse.store.remote as remote\n"
        "remote.PROBE_EVERY = 0.01\n"
        "from warehouse.cli.main import main\n"
        "try:\n"
        "    main(sys.argv[1:])\n"
        "except SystemExit as exit:\n"
        "    print('exit', exit.code, 'psycopg' in sys.modules, file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, *lake.args(), "leaderboard", "--json"],
        env=lake.child_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert json.loads(done.stdout) == []
    assert done.stderr.strip().splitlines()[-1] == "exit 0 False"


def test_an_attach_started_ahead_is_taken_by_the_command_that_opens_the_lake(lake):
    address = lake.address
    assert isinstance(address, LakeAddress)
    opened: list[bool] = []
    real = lake_module._open_existing

    def counted(*args, **kwargs):
        opened.append(kwargs["read_only"])
        return real(*args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(lake_module, "_open_existing", counted)
        lake_module.attach_ahead(address, read_only=True)
        lake_module.attach_ahead(address, read_only=False)  # no command takes this one
        con = connect(address, read_only=True)
        try:
            assert con.execute("SELECT count(*) FROM runs").fetchone() == (0,)
        finally:
            close_connection(con)
        assert len(lake_module._AHEAD) == 1
        lake_module.drop_ahead()
    assert sorted(opened) == [False, True]  # one attach each: the reader did not attach again
    assert lake_module._AHEAD == []


def test_an_attach_ahead_of_a_command_that_does_not_open_the_lake_is_closed(lake, monkeypatch):
    closed: list[bool] = []
    monkeypatch.setattr(lake_module._Ahead, "discard", lambda self: closed.append(self.read_only))
    assert lake.run("leaderboard", "--help").exit_code == 0
    assert closed == []  # --help starts nothing
    assert lake.run("ingest", "--no-such-option").exit_code == 2
    assert closed == [False]  # started for ingest, which stopped before opening the lake


def test_a_writers_lock_session_connects_while_the_command_goes_on(lake):
    address = lake.address
    assert isinstance(address, LakeAddress)
    lock = lake_module.WriterLock.connecting(address)
    try:
        lock.acquire(address, 5)
        assert lock.held
        with lake_module.catalog_session(address) as pg:
            other = lake_module.WriterLock(pg)
            with pytest.raises(LockTimeoutError):
                other.acquire(address, 0.2)
    finally:
        lock.release()
    assert not lock.held


def test_a_lock_session_that_cannot_connect_fails_when_the_lock_is_wanted(tmp_path):
    address = parse_address("ducklake:postgres:host=127.0.0.1 port=1 dbname=none user=x")
    assert isinstance(address, LakeAddress)
    lock = lake_module.WriterLock.connecting(address)
    with pytest.raises(RemoteError, match="cannot connect"):
        lock.acquire(address, 1)
    lock.release()  # nothing to give back, and no error


def test_an_ignored_password_file_is_named_by_its_role_never_by_its_path(lake, tmp_path):
    home = tmp_path / "home-of-jdoe-private"
    home.mkdir()
    passfile = home / ".pgpass"
    passfile.write_text("*:*:*:*:never-used\n", encoding="utf-8")
    passfile.chmod(0o644)  # libpq ignores a file others can read, and says so with its path
    env = {**lake.child_env(), "HOME": str(home)}
    env.pop("PGPASSFILE", None)
    done = subprocess.run(
        [sys.executable, "-m", "warehouse.cli", "runs", "list"],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "home-of-jdoe-private" not in done.stderr + done.stdout, done.stderr
    assert done.stderr.count("password file") == 1, done.stderr
    assert "warning: the PostgreSQL password file ($PGPASSFILE or ~/.pgpass)" in done.stderr
