"""A small local server implementing PostgREST's upsert contract on top of a real Postgres.

`POST /rest/v1/<table>?on_conflict=a,b` with `Prefer: resolution=merge-duplicates` and a JSON
list of rows becomes `INSERT … ON CONFLICT (a, b) DO UPDATE SET <sent columns>`; the service key
must come as `apikey` and `Authorization: Bearer`. Failures can be scripted per request.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import psycopg
from psycopg import sql


class PostgrestStub:
    """Start with `with PostgrestStub(dsn, key) as stub:`; `stub.url` is the project URL."""

    def __init__(self, dsn: str, key: str) -> None:
        self.dsn = dsn
        self.key = key
        self.requests: list[dict[str, Any]] = []
        self.scripted: list[int] = []  # statuses to answer with before doing real work
        self.lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_args: Any) -> None:
                return

            def _reply(self, status: int, body: Any) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                if status == 429:
                    self.send_header("Retry-After", "0")
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length)
                status, reply = stub.handle(self.path, dict(self.headers), body)
                self._reply(status, reply)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> PostgrestStub:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def handle(self, path: str, headers: dict[str, str], body: bytes) -> tuple[int, Any]:
        """Answer one POST."""
        lowered = {k.lower(): v for k, v in headers.items()}
        with self.lock:
            self.requests.append({"path": path, "bytes": len(body)})
            if self.scripted:
                status = self.scripted.pop(0)
                return status, {"message": f"scripted {status}", "code": str(status)}
        if (
            lowered.get("apikey") != self.key
            or lowered.get("authorization") != f"Bearer {self.key}"
        ):
            return 401, {"message": "Invalid API key", "code": "401"}
        parts = urlsplit(path)
        prefix = "/rest/v1/"
        if not parts.path.startswith(prefix):
            return 404, {"message": "not found"}
        table = parts.path[len(prefix) :]
        if "resolution=merge-duplicates" not in lowered.get("prefer", ""):
            return 400, {"message": "only merge-duplicates upserts are supported"}
        conflict = parse_qs(parts.query).get("on_conflict", [""])[0].split(",")
        rows = json.loads(body)
        if isinstance(rows, dict):
            rows = [rows]
        try:
            self._upsert(table, conflict, rows)
        except psycopg.Error as exc:
            return 400, {"message": str(exc).splitlines()[0], "code": "PGRST"}
        return 201, []

    def _upsert(self, table: str, conflict: list[str], rows: list[dict[str, Any]]) -> None:
        """Insert or merge the rows, as PostgREST does, in one transaction."""
        if not rows:
            return
        columns = list(rows[0])
        statement = sql.SQL(
            "INSERT INTO {t} ({cols}) VALUES ({vals}) ON CONFLICT ({key}) DO UPDATE SET {sets}"
        ).format(
            t=sql.Identifier(table),
            cols=sql.SQL(", ").join(map(sql.Identifier, columns)),
            vals=sql.SQL(", ").join(sql.Placeholder() * len(columns)),
            key=sql.SQL(", ").join(map(sql.Identifier, conflict)),
            sets=sql.SQL(", ").join(
                sql.SQL("{c} = EXCLUDED.{c}").format(c=sql.Identifier(c))
                for c in columns
                if c not in conflict
            ),
        )
        with psycopg.connect(self.dsn) as conn, conn.cursor() as cur:
            cur.executemany(
                statement,
                [
                    [json.dumps(r[c]) if isinstance(r[c], (dict, list)) else r[c] for c in columns]
                    for r in rows
                ],
            )
