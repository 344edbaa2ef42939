"""Audits on a Ray cluster (`--executor ray`): one task per shard on a local 2-CPU cluster on
loopback, identical to the local audit, also when a worker is killed mid-audit.

The cluster is `$RAY_ADDRESS` when set (`.ci/run` starts one); otherwise these tests start their
own (`ray start --head`) and stop it afterwards. Without Ray they are skipped, except under CI,
where that is a failure.
"""

from __future__ import annotations

import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.exposure.audited import audited, loaded_warehouse
from tests.exposure.synthetic_corpus import make_corpus
from warehouse.errors import UsageError
from warehouse.exposure.audit import run_audit
from warehouse.exposure.config import AuditConfig
from warehouse.exposure.execution import Execution
from warehouse.exposure.index import cluster
from warehouse.exposure.index.stored import list_stored_indexes

EXPOSURE_COLUMNS = (
    "seg_idx, source_exposure, source_nn, source_exact, target_exposure, target_nn, "
    "target_ref_idx, target_exact, pair_exposure, pair_nn, pair_exact, tm_hyp_idx, bin"
)
TASK_TITLE = b"ray::shard_audit"


def _no_ray(reason: str) -> None:
    """Skip, or fail under CI (where Ray must be there)."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (under CI, .ci/run installs Ray and starts a cluster)")
    pytest.skip(reason)


def _processes_under(marker: str) -> list[int]:
    """Ids of the processes whose command line mentions `marker`."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


@pytest.fixture(scope="module")
def ray_address(tmp_path_factory) -> Iterator[str]:
    """The address of a running Ray cluster: `$RAY_ADDRESS`, or one started for these tests."""
    try:
        import ray
    except ImportError:
        _no_ray("Ray is not installed (pip install 'tame-wh[ray]')")
    address = os.environ.get("RAY_ADDRESS")
    started: str | None = None
    if not address:
        if os.environ.get("CI"):
            _no_ray("RAY_ADDRESS is not set")
        temp = str(tmp_path_factory.mktemp("ray"))
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        argv = [str(Path(sys.executable).with_name("ray")), "start", "--head", "--num-cpus", "2"]
        argv += ["--node-ip-address", "127.0.0.1", "--port", str(port), "--temp-dir", temp]
        argv += ["--include-dashboard", "false", "--disable-usage-stats"]
        subprocess.run(
            argv,
            check=True,
            capture_output=True,
            env={**os.environ, "RAY_USAGE_STATS_ENABLED": "0"},
        )
        address, started = f"127.0.0.1:{port}", temp
    yield address
    ray.shutdown()
    if started is not None:  # stop the processes of the cluster started here, and only those
        for pid in _processes_under(started):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                continue


@pytest.fixture
def con(db_path, write_lines):
    """A warehouse with a 4,000-pair training corpus (random letters make each shard's build
    take a moment) and a 30-segment test set."""
    corpus = make_corpus(n_train=4000, n_test=30, seed=4, n_refs=2)
    rng = random.Random(5)

    def noisy(texts):
        return [t + " " + "".join(rng.choices("abcdefghij ", k=30)) for t in texts]

    train = noisy(corpus.train_src), noisy(corpus.train_tgt)
    con = loaded_warehouse(db_path, write_lines, corpus, train)
    yield con
    con.close()


def _audit(con, config=None, **execution):
    return audited(con, EXPOSURE_COLUMNS, config, **execution)


def test_an_audit_on_the_cluster_equals_the_local_audit(con, ray_address):
    reference, _, _ = _audit(con, store_index=False)
    rows, timings, said = _audit(con, executor="ray", ray_address=ray_address, shard_rows=700)
    assert rows == reference and timings["index_loaded"] == 0.0
    assert any("6 shard(s) of 700 rows" in m for m in said)
    assert sum("done on the cluster" in m for m in said) == 6
    # The tasks stored the shards they built; the next audit's tasks load them.
    assert [i.row_offset for i in list_stored_indexes(con)] == list(range(0, 4000, 700))
    rows, timings, _ = _audit(con, executor="ray", ray_address=ray_address)
    assert rows == reference and timings["index_loaded"] == 1.0
    # The tasks score by the audit's measure.
    containment = AuditConfig(measure="containment")
    reference, _, _ = _audit(con, containment, store_index=False)
    assert reference != rows
    rows, _, _ = _audit(con, containment, executor="ray", ray_address=ray_address)
    assert rows == reference


def test_a_damaged_shard_is_rebuilt_on_the_cluster(con, ray_address):
    reference, _, _ = _audit(con, executor="ray", ray_address=ray_address, shard_rows=2000)
    [first, _] = list_stored_indexes(con)
    path = Path(first.path)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 1
    path.write_bytes(bytes(data))
    rows, _, said = _audit(con, executor="ray", ray_address=ray_address)
    assert rows == reference
    assert any(m.startswith(f"warning: stored index {path}") and "rebuilt" in m for m in said)


def test_a_worker_killed_mid_audit_is_retried_and_the_audit_completes(con, ray_address):
    reference, _, _ = _audit(con, store_index=False)
    killed: list[int] = []

    def kill_first_task() -> None:
        deadline = time.monotonic() + 120
        while not killed and time.monotonic() < deadline:
            for pid in _processes_under(TASK_TITLE.decode()):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    continue
                killed.append(pid)
                return
            time.sleep(0.01)

    killer = threading.Thread(target=kill_first_task)
    killer.start()
    rows, _, _ = _audit(
        con, executor="ray", ray_address=ray_address, shard_rows=500, store_index=False
    )
    killer.join()
    assert killed, "no task process was seen running"
    assert rows == reference


def test_an_unreachable_cluster_is_a_one_line_error_and_writes_nothing(con):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens there once closed
    before = snapshot_of(con)
    with pytest.raises(UsageError, match=f"Ray cluster at 127.0.0.1:{port} cannot be reached"):
        unreachable = Execution(executor="ray", ray_address=f"127.0.0.1:{port}")
        run_audit(con, "train", "test", execution=unreachable)
    assert snapshot_of(con) == before


def snapshot_of(con) -> dict:
    """Every audit-related row of the open warehouse."""
    return {
        t: con.execute(f"SELECT * FROM {t} ORDER BY ALL").fetchall()
        for t in ("audits", "exposures", "tm_segment_stats")
    }


def test_without_ray_the_error_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(UsageError, match=r"pip install 'tame-wh\[ray\]'"):
        cluster.connect("127.0.0.1:1")


def test_an_address_is_needed(monkeypatch):
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    with pytest.raises(UsageError, match="--ray-address"):
        cluster.connect(None)
    with pytest.raises(UsageError, match="HOST:PORT"):
        cluster.connect("nowhere")


def _substring_rows(con, config, **execution):
    rows, timings, said = audited(
        con, "seg_idx, source_exposure, source_nn, bin", config, **execution
    )
    audit_id = con.execute(
        "SELECT audit_id FROM audits ORDER BY created_at DESC LIMIT 1"
    ).fetchone()
    details = con.execute(
        "SELECT * EXCLUDE (audit_id) FROM substring_lens WHERE audit_id = ? ORDER BY ALL", audit_id
    ).fetchall()
    return rows, details, timings, said


def test_the_substring_lens_on_the_cluster_equals_the_local_one(con, ray_address):
    config = AuditConfig(measure="substring")
    reference = _substring_rows(con, config, store_index=False, shard_rows=1500)
    # Shards built by the tasks (not stored: no file is left), then stored and loaded.
    unstored = _substring_rows(con, config, executor="ray", ray_address=ray_address,
                               shard_rows=700, store_index=False)  # fmt: skip
    assert unstored[:2] == reference[:2]
    assert unstored[2]["index_shards"] == 12 and unstored[2]["index_loaded"] == 0.0
    assert any("6 shard(s) of the target side" in m for m in unstored[3])
    built = _substring_rows(con, config, executor="ray", ray_address=ray_address, shard_rows=700)
    assert built[:2] == reference[:2]
    loaded = _substring_rows(con, config, executor="ray", ray_address=ray_address, shard_rows=700)
    assert loaded[:2] == reference[:2] and loaded[2]["index_loaded"] == 1.0
    # The same stored shards, read by this process, answer alike.
    local = _substring_rows(con, config, shard_rows=700)
    assert local[:2] == reference[:2] and local[2]["index_loaded"] == 1.0
