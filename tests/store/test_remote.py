"""The lake watchdog's probe of the catalog: a PostgreSQL server is found alive by its answer to
an SSLRequest (no driver loaded), a closed port or a silent listener is not."""

from __future__ import annotations

import socket
import subprocess
import sys

from psycopg.conninfo import conninfo_to_dict

from warehouse.store.remote import _catalog_socket, _postmaster_answers


def test_a_live_catalog_server_answers_the_probe(pg_dsn):
    info = {k: str(v) for k, v in conninfo_to_dict(pg_dsn).items()}
    target = _catalog_socket(info)
    assert target is not None
    assert _postmaster_answers(target, 5.0) is True


def test_a_closed_port_does_not_answer():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])  # closed again when the block ends
    assert _postmaster_answers(("127.0.0.1", port), 2.0) is False


def test_a_listener_that_accepts_but_never_answers_is_not_alive():
    with socket.socket() as server:  # a paused server: the kernel accepts, nobody replies
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        port = int(server.getsockname()[1])
        assert _postmaster_answers(("127.0.0.1", port), 0.3) is False


def test_the_probe_target_follows_the_address_or_defers_to_libpq(monkeypatch):
    for name in ("PGHOST", "PGHOSTADDR", "PGPORT"):
        monkeypatch.delenv(name, raising=False)
    assert _catalog_socket({"host": "db.example", "port": "6543"}) == ("db.example", 6543)
    assert _catalog_socket({"host": "db.example"}) == ("db.example", 5432)
    assert _catalog_socket({"host": "/run/pg", "port": "5433"}) == "/run/pg/.s.PGSQL.5433"
    assert _catalog_socket({"host": "a,b"}) is None  # several hosts: libpq's order decides
    assert _catalog_socket({"dbname": "lake"}) is None  # libpq's compiled-in default socket
    monkeypatch.setenv("PGHOST", "env.example")
    assert _catalog_socket({"dbname": "lake"}) == ("env.example", 5432)


def test_the_probe_module_does_not_load_the_driver():
    code = (
        "import sys\n"
        "from warehouse.store.remote import _postmaster_answers\n"
        "_postmaster_answers(('127.0.0.1', 1), 0.5)\n"
        "print('psycopg' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
