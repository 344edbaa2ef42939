"""A small local server implementing PostgREST's upsert contract on top of a real Postgres.

`POST /rest/v1/<table>?on_conflict=a,b` with `Prefer: resolution=merge-duplicates` and a JSON
list of rows becomes `INSERT … ON CONFLICT (a, b) DO UPDATE SET <sent columns>`;
`DELETE /rest/v1/<table>?col=in.(x,y)&other=not.in.(z)` deletes the matching rows. The service
key must come as `apikey` and `Authorization: Bearer`. Failures can be scripted per request.
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
                if status == 204:
                    self.send_response(204)
                    self.end_headers()
                    return
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

            def do_DELETE(self) -> None:
                status, reply = stub.handle(self.path, dict(self.headers), b"", method="DELETE")
                self._reply(status, reply)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> PostgrestStub:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def handle(
        self, path: str, headers: dict[str, str], body: bytes, method: str = "POST"
    ) -> tuple[int, Any]:
        """Answer one POST (upsert) or DELETE."""
        lowered = {k.lower(): v for k, v in headers.items()}
        with self.lock:
            self.requests.append({"path": path, "bytes": len(body), "method": method})
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
        if method == "DELETE":
            try:
                self._delete(table, parse_qs(parts.query))
            except (psycopg.Error, ValueError) as exc:
                return 400, {"message": str(exc).splitlines()[0], "code": "PGRST"}
            return 204, None
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

    def _delete(self, table: str, params: dict[str, list[str]]) -> None:
        """Delete the rows matching every `in.(…)` / `not.in.(…)` filter (at least one)."""
        conditions = []
        values: list[Any] = []
        for column, [expression] in params.items():
            negated = expression.startswith("not.")
            operator = expression.removeprefix("not.")
            if not (operator.startswith("in.(") and operator.endswith(")")):
                raise ValueError(f"unsupported filter {column}={expression}")
            items = [v.strip('"') for v in operator[4:-1].split(",") if v]
            condition = sql.SQL("{c} = ANY({v})").format(
                c=sql.Identifier(column), v=sql.Placeholder()
            )
            conditions.append(sql.SQL("NOT ({})").format(condition) if negated else condition)
            values.append(items)
        if not conditions:
            raise ValueError("a DELETE needs a filter")
        statement = sql.SQL("DELETE FROM {t} WHERE {w}").format(
            t=sql.Identifier(table), w=sql.SQL(" AND ").join(conditions)
        )
        with psycopg.connect(self.dsn) as conn:
            conn.execute(statement, values)

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
