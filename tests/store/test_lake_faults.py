"""Faults of a lake's services while commands run: the catalog's PostgreSQL stopped or restarted,
the object store cut off, each at several points of `ingest`, `audit`, `copy`, `lake maintain`
and `sync` (the fault is injected when the command reaches a named function:
tests/store/fault_driver.py). After every fault the command has ended with a documented status —
0, or 4 with one line naming the service — never an internal error or an abort; no run or audit
is partial; once the service is back the same command succeeds and `doctor` is healthy.

A throwaway PostgreSQL cluster (its own data directory and loopback port) holds the catalog, so
stopping it touches no other test; the object store is reached through a loopback TCP forwarder
(tests/store/tcp_proxy.py) in front of the test S3 server, so cutting it off loses no object.
"""

from __future__ import annotations

import glob
import json
import os
import random
import shlex
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest

from tests.backends import (
    PG_DSN_ENV,
    S3_ENDPOINT_ENV,
    Warehouse,
    drop_database,
    new_bucket,
    new_database,
    require_service,
    s3_environment,
)
from tests.conftest import VOCABULARY
from tests.ingest.lake_workers import PARTIAL_RUNS
from warehouse.store.lake import INLINE_ROW_LIMIT

ROOT = Path(__file__).resolve().parents[2]
# More rows than a write inlines in the catalog: every run and corpus is Parquet files on the data
# path, so the object store and the data directory have writes and reads in flight.
SEGMENTS = INLINE_ROW_LIMIT + 50
# What the commands may end with under a fault: success, or a remote service's failure.
DOCUMENTED = (0, 4)

pytestmark = pytest.mark.slow


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _require_root() -> None:
    if os.geteuid() != 0:
        if os.environ.get("CI"):
            pytest.fail("the fault tests run PostgreSQL as its own user: CI runs them as root")
        pytest.skip("the fault tests need root (they run a PostgreSQL cluster as postgres)")


@dataclass
class Cluster:
    """A PostgreSQL cluster of this module's own, on a loopback port."""

    bin: str
    data: Path
    port: int

    def _pg_ctl(self, *args: str) -> str:
        options = f"-p {self.port} -k {self.data.parent} -c listen_addresses=127.0.0.1 -c fsync=off"
        return " ".join(
            [
                "runuser -u postgres --",
                shlex.quote(f"{self.bin}/pg_ctl"),
                "-D",
                shlex.quote(str(self.data)),
                "-l",
                shlex.quote(str(self.data.parent / "log")),
                "-o",
                shlex.quote(options),
                *args,
            ]
        )

    def command(self, action: str) -> str:
        """The shell command that stops (at once, as a crash would) or restarts the server."""
        if action == "stop":
            return self._pg_ctl("-m", "immediate", "stop")
        if action == "restart":
            return self._pg_ctl("-m", "immediate", "-w", "restart")
        if action in ("pause", "resume"):
            # The postmaster and every backend, stopped (or continued) as one.
            pid = f"$(head -n 1 {shlex.quote(str(self.data / 'postmaster.pid'))})"
            signal = "STOP" if action == "pause" else "CONT"
            return f"kill -{signal} {pid} $(pgrep -P {pid})"
        raise ValueError(action)

    def ensure_running(self) -> None:
        """Continue a paused server; start it unless it runs."""
        if (self.data / "postmaster.pid").exists():
            subprocess.run(self.command("resume"), shell=True, check=False)
        status = subprocess.run(self._pg_ctl("status"), shell=True, capture_output=True)
        if status.returncode != 0:
            subprocess.run(self._pg_ctl("-w", "start"), shell=True, check=True)

    @property
    def dsn(self) -> str:
        return f"host=127.0.0.1 port={self.port} user=postgres dbname=postgres"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    _require_root()
    require_service(PG_DSN_ENV, "PostgreSQL")  # the same server packages as the CI's
    bins = sorted(glob.glob("/usr/lib/postgresql/*/bin"))
    if not bins:
        pytest.fail("no PostgreSQL server binaries under /usr/lib/postgresql")
    root = tmp_path_factory.mktemp("faults-pg")
    os.chmod(root, 0o755)
    for parent in root.parents:
        if str(parent).startswith(("/tmp", str(tmp_path_factory.getbasetemp()))):
            os.chmod(parent, os.stat(parent).st_mode | 0o755)
    subprocess.run(["chown", "postgres", str(root)], check=True)
    data = root / "data"
    subprocess.run(
        ["runuser", "-u", "postgres", "--", f"{bins[-1]}/initdb", "-D", str(data), "-A", "trust",
         "-U", "postgres", "--no-sync"],
        check=True,
        stdout=subprocess.DEVNULL,
    )  # fmt: skip
    made = Cluster(bins[-1], data, _free_port())
    made.ensure_running()
    try:
        yield made
    finally:
        subprocess.run(made.command("stop"), shell=True, check=False)


@dataclass
class Proxy:
    """The forwarder between tame-wh and the S3 server: killed to cut the store off."""

    port: int
    target: int
    process: subprocess.Popen | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.store.tcp_proxy", str(self.port), str(self.target)],
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.05)
        raise RuntimeError("the S3 forwarder did not start")

    def ensure_running(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGCONT)
            return
        self.start()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()


class FaultLakes:
    """The module's lakes, one per kind, each made on first use by this test process and kept
    until the module ends (tests of both kinds interleave on a worker: nothing is made twice)."""

    def __init__(self, cluster: Cluster, tmp_path_factory: pytest.TempPathFactory) -> None:
        self.cluster = cluster
        self.tmp_path_factory = tmp_path_factory
        self.made: dict[str, tuple[Warehouse, Proxy | None, Path]] = {}
        self.sync_databases: list[str] = []

    def get(self, kind: str) -> tuple[Warehouse, Proxy | None, Path]:
        if kind not in self.made:
            self.made[kind] = self._make(kind)
        return self.made[kind]

    def _make(self, kind: str) -> tuple[Warehouse, Proxy | None, Path]:
        """A lake on the module's cluster with a test set, a training corpus and an audit."""
        name = f"faults_{kind.replace('-', '_')}"
        with psycopg.connect(self.cluster.dsn, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
            conn.execute(f'CREATE DATABASE "{name}"')
        work = self.tmp_path_factory.mktemp(name)
        proxy = None
        env: dict[str, str] = {}
        if kind == "lake-s3":
            endpoint = require_service(S3_ENDPOINT_ENV, "S3")
            bucket = new_bucket(endpoint)
            proxy = Proxy(_free_port(), int(endpoint.rsplit(":", 1)[1]))
            proxy.start()
            env = {**s3_environment(f"http://127.0.0.1:{proxy.port}")}
            data_path = f"s3://{bucket}/lake/"
        else:
            data_path = str(work / "lake-data")
        lake = Warehouse(
            kind,
            f"ducklake:postgres:host=127.0.0.1 port={self.cluster.port} user=postgres "
            f"dbname={name}",
            data_path,
            env,
        )
        rng = random.Random(5)
        lines = [" ".join(rng.choice(VOCABULARY) for _ in range(7)) for _ in range(SEGMENTS * 3)]
        files = {
            "train.src": lines,
            "train.tgt": [s.upper() for s in lines],
            "test.src": lines[:SEGMENTS],
            "test.ref": [s.upper() for s in lines[:SEGMENTS]],
        }
        for file, text in files.items():
            (work / file).write_text("".join(t + "\n" for t in text), encoding="utf-8")
        sync_name, sync_dsn = new_database()
        self.sync_databases.append(sync_name)
        (work / "sync.dsn").write_text(sync_dsn, encoding="utf-8")
        with pytest.MonkeyPatch.context() as patch:  # in-process commands reach the store too
            for key, value in env.items():
                patch.setenv(key, value)
            for args in (
                ["migrate", "--dsn", sync_dsn],
                ["corpus", "add", "tr", "--src", work / "train.src", "--tgt", work / "train.tgt"],
                ["testset", "add", "ts", "--src", work / "test.src", "--ref", work / "test.ref"],
                ["audit", "--train", "tr", "--testset", "ts"],
            ):
                done = lake.run(*args)  # in-process: the set-up is not under test
                assert done.exit_code == 0, done.output
        return lake, proxy, work

    def close(self) -> None:
        for _, proxy, _ in self.made.values():
            if proxy is not None:
                proxy.stop()
        for name in self.sync_databases:
            drop_database(name)


@pytest.fixture(scope="module")
def fault_lakes(cluster: Cluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[FaultLakes]:
    lakes = FaultLakes(cluster, tmp_path_factory)
    try:
        yield lakes
    finally:
        lakes.close()


@pytest.fixture
def faulty(
    request: pytest.FixtureRequest, fault_lakes: FaultLakes, monkeypatch: pytest.MonkeyPatch
) -> tuple[Warehouse, Cluster, Proxy | None, Path]:
    """The module's lake of the kind named by the parameter, its environment set (in-process
    checks reach the store too)."""
    lake, proxy, work = fault_lakes.get(request.param)
    for key, value in lake.env.items():
        monkeypatch.setenv(key, value)
    return lake, fault_lakes.cluster, proxy, work


def _run(
    lake: Warehouse, driver: list[str], args: list[object], env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """`tame-wh ARGS` in a child process (through the fault driver when `driver` is given)."""
    command = (
        [sys.executable, "-m", "tests.store.fault_driver", *driver, "--"]
        if driver
        else [sys.executable, "-m", "warehouse.cli"]
    )
    return subprocess.run(
        [*command, *map(str, args)],
        cwd=ROOT,
        env={**lake.child_env(), "PYTHONPATH": str(ROOT), **(env or {})},
        capture_output=True,
        text=True,
        timeout=300,
    )


_counter = iter(range(10**6))


def _hyp(work: Path) -> Path:
    """A new, distinct system output for the test set."""
    k = next(_counter)
    rng = random.Random(k)
    refs = (work / "test.ref").read_text(encoding="utf-8").splitlines()
    lines = [r if rng.random() < 0.6 else r.lower() for r in refs]
    lines[0] = f"fault trial {k}"
    path = work / f"hyp{k}.txt"
    path.write_text("".join(t + "\n" for t in lines), encoding="utf-8")
    return path


# (command, where the fault strikes): the points are functions each command reaches.
CASES = {
    "ingest before attach": ("ingest", "warehouse.store.lake.attach"),
    "ingest mid-write": ("ingest", "warehouse.ingest.write._write_one"),
    "ingest before commit": ("ingest", "warehouse.ingest.write.store_intervals"),
    "ingest after commit": ("ingest", "warehouse.ingest.write.write_runs:after"),
    "audit mid-write": ("audit", "warehouse.exposure.audit._store_tm_stats"),
    "audit before commit": ("audit", "warehouse.exposure.audit._record"),
    "copy mid-read": ("copy", "warehouse.store.copy._copy_table"),
    "maintain": ("maintain", "warehouse.store.maintain._call"),
    "sync reading": ("sync", "warehouse.sync.postgres.collect_payloads"),
}


# The catalog cases repeated on an S3 data path (where a write also has objects in flight).
S3_CATALOG_CASES = (
    "ingest mid-write",
    "ingest before commit",
    "audit before commit",
    "copy mid-read",
)


def _args(command: str, work: Path) -> list[object]:
    if command == "ingest":
        return ["ingest", "--testset", "ts", "--hyp", _hyp(work), "--model-slug", "m"]
    if command == "audit":
        return ["audit", "--train", "tr", "--testset", "ts", "--force"]
    if command == "copy":
        target = work / f"copy{next(_counter)}.duckdb"
        return ["copy", "--from", "$DB", "--to", target]
    if command == "maintain":
        return ["lake", "maintain", "--keep-days", "0", "--grace-hours", "0"]
    if command == "sync":
        return ["sync", "--dsn", (work / "sync.dsn").read_text(encoding="utf-8"), "--full"]
    raise ValueError(command)


def _check_after(lake: Warehouse, args: list[object], first: subprocess.CompletedProcess) -> str:
    """The checks every fault ends with; returns the outcome as the closing table names it."""
    said = first.stderr
    assert first.returncode in DOCUMENTED, (first.returncode, said)
    # DuckDB's own abort (a C++ terminate) prints the C++ runtime's two lines before tame-wh's
    # last word; anywhere else they would be an unexplained crash.
    aborted = "error: DuckDB aborted the process during" in said
    for bad in (
        "internal error",
        "Traceback",
        "INTERNAL Error",
        *(() if aborted else ("terminate called",)),
    ):
        assert bad not in said, said
    if first.returncode == 4:
        errors = [line for line in said.splitlines() if line.startswith("error: ")]
        assert len(errors) == 1 and "lake " in errors[0], said
    assert lake.sql(PARTIAL_RUNS) == []
    again = lake.run(*args)  # in-process: the same command, without a second start-up
    assert again.exit_code == 0, again.output
    doctor = json.loads(lake.run("doctor", "--json").stdout)
    assert doctor["ok"] is True, doctor["warehouse"]
    return "succeeded" if first.returncode == 0 else "clear error (exit 4), nothing lost"


def _resolve(args: list[object], lake: Warehouse) -> list[object]:
    return [lake.db if a == "$DB" else a for a in args]


# A paused service never answers; the command must stop within the lake timeout (here 6 s).
PAUSE_TIMEOUT = 6
PAUSE_CASES = ("ingest mid-write", "audit before commit", "copy mid-read")
STORAGE_CASES = ("ingest mid-write", "ingest before commit", "audit mid-write", "copy mid-read")


def _strike(
    faulty: tuple[Warehouse, Cluster, Proxy | None, Path],
    case: str,
    fault: str,
    paused: str | None = None,
) -> tuple[list[object], subprocess.CompletedProcess]:
    """Run a case's command with `fault` (a shell command) struck at its point, then bring every
    service back. With `paused` (the service the message must name), the fault silences a
    service: the command must end with exit 4 within the lake timeout. Returns the arguments
    that run the same command again (a new file for `copy`) and the struck run."""
    lake, cluster, proxy, work = faulty
    command, point = CASES[case]
    args = _resolve(_args(command, work), lake)
    timeout = {"TAME_WH_LAKE_TIMEOUT": str(PAUSE_TIMEOUT)} if paused else {}
    started = time.monotonic()
    try:
        first = _run(lake, [point, fault], args, timeout)
    finally:
        cluster.ensure_running()
        if proxy is not None:
            proxy.ensure_running()
    elapsed = time.monotonic() - started
    assert "was never reached" not in first.stderr, (case, first.stderr)
    if paused:
        assert first.returncode == 4, first.stderr
        assert f"has not answered for {PAUSE_TIMEOUT} s" in first.stderr, first.stderr
        assert paused in first.stderr
        # Bounded: the timeout, one probe interval, and the command's own start-up.
        assert elapsed < PAUSE_TIMEOUT + 20, elapsed
    if command == "copy":
        args = _resolve(_args(command, work), lake)
    return args, first


FAULTS = ("stop", "restart")


def _catalog_faults() -> list[tuple[str, str, str]]:
    """(lake kind, case, fault): the catalog stopped or restarted at each point, the two faults
    taking turns down the list of cases; on S3 each case gets the fault it did not get on the
    directory lake, so that those cases meet both."""
    order = list(CASES)
    return [("lake-dir", case, FAULTS[k % 2]) for k, case in enumerate(order)] + [
        ("lake-s3", case, FAULTS[(order.index(case) + 1) % 2]) for case in S3_CATALOG_CASES
    ]


@pytest.mark.parametrize(("faulty", "case", "fault"), _catalog_faults(), indirect=["faulty"])
def test_a_catalog_fault_ends_in_a_documented_status_and_loses_nothing(faulty, case, fault):
    lake, cluster = faulty[:2]
    args, first = _strike(faulty, case, cluster.command(fault))
    outcome = _check_after(lake, args, first)
    print(f"FAULT-TABLE | catalog {fault} | {case} | {lake.kind} | {outcome}")


@pytest.mark.parametrize(
    ("faulty", "case"),
    [("lake-s3", case) for case in STORAGE_CASES],
    indirect=["faulty"],
)
def test_an_object_store_cut_off_ends_in_a_documented_status_and_loses_nothing(faulty, case):
    lake, proxy = faulty[0], faulty[2]
    assert proxy is not None and proxy.process is not None
    args, first = _strike(faulty, case, f"kill -9 {proxy.process.pid}")
    outcome = _check_after(lake, args, first)
    if first.returncode == 4:
        assert "lake data path (object store" in first.stderr, first.stderr
    print(f"FAULT-TABLE | object store killed | {case} | {lake.kind} | {outcome}")


@pytest.mark.parametrize(
    ("faulty", "case"),
    [("lake-dir", case) for case in PAUSE_CASES] + [("lake-s3", "ingest mid-write")],
    indirect=["faulty"],
)
def test_a_paused_catalog_ends_the_command_within_the_lake_timeout(faulty, case):
    lake, cluster = faulty[:2]
    args, first = _strike(faulty, case, cluster.command("pause"), "lake catalog (PostgreSQL")
    outcome = _check_after(lake, args, first)
    print(f"FAULT-TABLE | catalog paused | {case} | {lake.kind} | {outcome}")


@pytest.mark.parametrize(
    ("faulty", "case"),
    [("lake-s3", "ingest mid-write"), ("lake-s3", "copy mid-read")],
    indirect=["faulty"],
)
def test_a_paused_object_store_ends_the_command_within_the_lake_timeout(faulty, case):
    lake, proxy = faulty[0], faulty[2]
    assert proxy is not None and proxy.process is not None
    pause = f"kill -STOP {proxy.process.pid}"
    args, first = _strike(faulty, case, pause, "lake data path (object store")
    outcome = _check_after(lake, args, first)
    print(f"FAULT-TABLE | object store paused | {case} | {lake.kind} | {outcome}")


# Seconds after the writers' lock is taken at which the catalog stops (the window in which
# DuckDB was seen to abort the process: 0.1 to 0.2 s).
ABORT_DELAYS = (0.05, 0.12, 0.18, 0.3)


@pytest.mark.parametrize("faulty", ["lake-dir"], indirect=True)
def test_a_catalog_stopped_just_after_the_writers_lock_never_aborts_the_process(faulty):
    lake, cluster, _proxy, work = faulty
    outcomes = []
    for delay in ABORT_DELAYS:
        args = _resolve(_args("ingest", work), lake)
        stop = f"(sleep {delay}; {cluster.command('stop')}) >/dev/null 2>&1 &"
        try:
            first = _run(lake, ["warehouse.store.connection.hold_writers_lock:after", stop], args)
        finally:
            time.sleep(max(0.0, delay + 0.5))
            cluster.ensure_running()
        assert first.returncode != -signal.SIGABRT and first.returncode != 134, first.stderr
        outcome = _check_after(lake, args, first)
        if "DuckDB aborted the process" in first.stderr:
            outcome += " (DuckDB aborted: the last word said so)"
        outcomes.append(outcome)
        if first.returncode == 4:
            assert "lake catalog" in first.stderr or "DuckDB aborted" in first.stderr
    print(f"FAULT-TABLE | catalog stopped 0.05-0.3 s after the writers' lock | ingest | "
          f"{lake.kind} | {len(outcomes)} trials: {', '.join(sorted(set(outcomes)))}")  # fmt: skip


@pytest.mark.parametrize("faulty", ["lake-dir"], indirect=True)
def test_an_abort_inside_the_process_is_exit_4_with_one_line_and_loses_nothing(faulty):
    # What a C++ terminate in DuckDB raises, delivered while the writers' lock is held.
    lake, _cluster, _proxy, work = faulty
    args = _resolve(_args("ingest", work), lake)
    first = _run(lake, ["warehouse.store.connection.hold_writers_lock:after", "kill -ABRT $PPID"],
                 args)  # fmt: skip
    assert first.returncode == 4, (first.returncode, first.stderr)
    [line] = [x for x in first.stderr.splitlines() if x.startswith("error: ")]
    assert "DuckDB aborted the process during `tame-wh ingest` on the lake" in line
    assert "may or may not have landed" in line
    outcome = _check_after(lake, args, first)
    print(f"FAULT-TABLE | SIGABRT inside the process | ingest | {lake.kind} | {outcome}")


@pytest.mark.parametrize("faulty", ["lake-s3"], indirect=True)
def test_a_stalled_store_the_catalog_names_ends_the_writer_and_frees_its_lock(faulty, tmp_path):
    # The documented normal use: later commands name the lake by its catalog alone, and the
    # watchdog must probe the store the catalog records.
    lake, _cluster, proxy, work = faulty
    assert proxy is not None and proxy.process is not None
    args = _resolve(_args("ingest", work), lake)
    struck = tmp_path / "struck-at"
    pause = f"date +%s.%N > {shlex.quote(str(struck))}; kill -STOP {proxy.process.pid}"
    env = {"TAME_WH_LAKE_TIMEOUT": str(PAUSE_TIMEOUT), "TAME_WH_DATA_PATH": ""}
    try:
        first = _run(lake, ["warehouse.ingest.write._write_one", pause], args, env)
        ended = time.time()
        # The writers' lock is free the moment the command has ended (store still stalled).
        from warehouse.store.lake import _WRITER_LOCK_KEY

        with psycopg.connect(lake.address.libpq, autocommit=True) as conn:
            free = conn.execute("SELECT pg_try_advisory_lock(%s)", [_WRITER_LOCK_KEY]).fetchone()
            conn.execute("SELECT pg_advisory_unlock_all()")
    finally:
        proxy.ensure_running()
    assert first.returncode == 4, first.stderr
    stalled_for = ended - float(struck.read_text())
    assert stalled_for < PAUSE_TIMEOUT + 5, stalled_for
    assert free == (True,)
    bucket = lake.data_path.removeprefix("s3://").split("/")[0]
    assert (
        f"lake data path (object store http://127.0.0.1:{proxy.port}, bucket {bucket}, "
        f"prefix lake/) has not answered for {PAUSE_TIMEOUT} s"
    ) in first.stderr, first.stderr
    assert "recorded in the catalog" not in first.stderr
    outcome = _check_after(lake, args, first)
    print(f"FAULT-TABLE | object store paused, data path from the catalog | ingest mid-write | "
          f"{lake.kind} | {outcome} (ended {stalled_for:.1f} s after the stall)")  # fmt: skip


@pytest.fixture
def mounted_lake(cluster: Cluster, tmp_path: Path) -> Iterator[tuple[Warehouse, Path, Path]]:
    """A directory lake whose data path is a small tmpfs of its own (to fill, or to remount
    read-only), with a test set and a training corpus."""
    mount = tmp_path / "mnt"
    mount.mkdir()
    made = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(mount)], capture_output=True
    )
    if made.returncode != 0:
        pytest.fail(f"cannot mount a tmpfs for the data path: {made.stderr!r}")
    name = f"faults_mnt_{next(_counter)}"
    with psycopg.connect(cluster.dsn, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    lake = Warehouse(
        "lake-dir",
        f"ducklake:postgres:host=127.0.0.1 port={cluster.port} user=postgres dbname={name}",
        str(mount / "lake"),
    )
    rng = random.Random(9)
    lines = [" ".join(rng.choice(VOCABULARY) for _ in range(7)) for _ in range(SEGMENTS)]
    for file, text in {"test.src": lines, "test.ref": [s.upper() for s in lines]}.items():
        (tmp_path / file).write_text("".join(t + "\n" for t in text), encoding="utf-8")
    done = _run(
        lake, [], ["testset", "add", "ts", "--src", tmp_path / "test.src", "--ref",
                   tmp_path / "test.ref"]
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    try:
        yield lake, mount, tmp_path
    finally:
        subprocess.run(["mount", "-o", "remount,rw", str(mount)], capture_output=True)
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


@pytest.mark.parametrize("fault", ["read-only", "full"])
def test_a_data_directory_that_turns_read_only_or_full_loses_nothing(mounted_lake, fault):
    lake, mount, work = mounted_lake
    runs_before = lake.sql("SELECT count(*) FROM runs")
    args = ["ingest", "--testset", "ts", "--hyp", _hyp(work), "--model-slug", "m"]
    filler = mount / "filler"
    if fault == "read-only":
        action = f"mount -o remount,ro {shlex.quote(str(mount))}"
    else:
        action = f"dd if=/dev/zero of={shlex.quote(str(filler))} bs=64k 2>/dev/null; true"
    try:
        first = _run(lake, ["warehouse.ingest.write._write_one", action], args)
    finally:
        subprocess.run(["mount", "-o", "remount,rw", str(mount)], capture_output=True)
        filler.unlink(missing_ok=True)
    assert "was never reached" not in first.stderr, first.stderr
    # A full disk is exit 2 as on a file (docs/cli.md), a read-only one a storage failure (4).
    assert first.returncode == (4 if fault == "read-only" else 2), first.stderr
    errors = [line for line in first.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and "nothing" in errors[0], first.stderr
    assert "internal error" not in first.stderr and "Traceback" not in first.stderr
    assert lake.sql("SELECT count(*) FROM runs") == runs_before
    assert lake.sql(PARTIAL_RUNS) == []
    again = lake.run(*args)
    assert again.exit_code == 0, again.output
    assert json.loads(lake.run("doctor", "--json").stdout)["ok"] is True
    print(f"FAULT-TABLE | data directory {fault} | ingest mid-write | lake-dir | clear error "
          f"(exit {first.returncode}), nothing lost")  # fmt: skip
