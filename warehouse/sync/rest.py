"""Syncing through Supabase's REST API (PostgREST upserts) in bounded, retried batches."""

from __future__ import annotations

import json
import random
import re
import time
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime, timezone
from typing import Any

import duckdb
import httpx
from postgrest.exceptions import APIError

from warehouse.errors import RemoteError, UsageError
from warehouse.sync.dsn import redact, url_label, url_secrets
from warehouse.sync.postgres import RunPayload, SyncReport, plan_sync, record_synced

KEY_ENV_VAR = "SUPABASE_SERVICE_ROLE_KEY"
MAX_ROWS = 500
MAX_BYTES = 1_000_000
MAX_ATTEMPTS = 6
# Fingerprints per stale-bin DELETE: their filter travels in the URL (~70 characters each), kept
# well under the 8 KB many gateways allow.
DELETE_FINGERPRINTS = 80
Sleep = Callable[[float], None]


def batches(payloads: Sequence[RunPayload]) -> Iterator[list[RunPayload]]:
    """Consecutive batches of at most MAX_ROWS runs and about MAX_BYTES of run-card JSON."""
    batch: list[RunPayload] = []
    size = 0
    for payload in payloads:
        weight = len(json.dumps(payload.card, default=str)) + len(json.dumps(payload.bins))
        if batch and (len(batch) >= MAX_ROWS or size + weight > MAX_BYTES):
            yield batch
            batch, size = [], 0
        batch.append(payload)
        size += weight
    if batch:
        yield batch


class _StatusRecorder:
    """httpx response hook remembering the last HTTP status and Retry-After header."""

    def __init__(self) -> None:
        self.status = 0
        self.retry_after: float | None = None

    def __call__(self, response: httpx.Response) -> None:
        self.status = response.status_code
        header = response.headers.get("retry-after")
        try:
            self.retry_after = float(header) if header else None
        except ValueError:
            self.retry_after = None


def check_url(url: str) -> None:
    """A Supabase project URL must be http(s)://host…; refused otherwise, without echoing it."""
    if not re.match(r"^https?://[^\s/?#]+", url, re.IGNORECASE) or any(c.isspace() for c in url):
        raise UsageError(
            f"--supabase-url {url_label(url)!r} is not an http(s):// URL of a Supabase project"
        )


def _client(url: str, key: str, recorder: _StatusRecorder) -> Any:
    """A supabase client whose HTTP layer reports statuses to `recorder`."""
    from supabase import ClientOptions, create_client

    http = httpx.Client(event_hooks={"response": [recorder]}, timeout=60)
    try:
        return create_client(url, key, options=ClientOptions(httpx_client=http))
    except Exception as exc:  # supabase raises its own exception types for bad URLs or keys
        secrets = [key, *url_secrets(url)]
        raise RemoteError(
            f"cannot use Supabase at {url_label(url)}: {redact(str(exc), secrets)}"
        ) from None


def _request(
    request: Callable[[], Any],
    recorder: _StatusRecorder,
    what: str,
    key: str | list[str],
    sleep: Sleep,
) -> None:
    """One PostgREST request, retried with backoff on 429 and 5xx; other failures are one-line
    errors naming `what`."""
    for attempt in range(1, MAX_ATTEMPTS + 1):
        try:
            request()
            return
        except (APIError, httpx.TransportError) as exc:
            status = recorder.status if isinstance(exc, APIError) else 0
            retryable = status == 429 or status >= 500 or isinstance(exc, httpx.TransportError)
            detail = exc.message if isinstance(exc, APIError) and exc.message else str(exc)
            if not retryable or attempt == MAX_ATTEMPTS:
                failure = f"HTTP {status}" if status else "network error"
                secrets = [key] if isinstance(key, str) else key
                raise RemoteError(
                    f"Supabase {what} failed ({failure}): {redact(detail, secrets)}"
                ) from None
            delay = recorder.retry_after or min(30.0, 0.5 * 2 ** (attempt - 1))
            sleep(delay * (0.75 + random.random() / 2))


def _upsert(
    client: Any,
    recorder: _StatusRecorder,
    table: str,
    rows: list[dict[str, Any]],
    conflict: str,
    key: str | list[str],
    sleep: Sleep,
) -> None:
    """Upsert rows into a table."""
    _request(
        lambda: client.table(table).upsert(rows, on_conflict=conflict).execute(),
        recorder,
        f"upsert into {table}",
        key,
        sleep,
    )


def _delete_stale_bins(
    client: Any,
    recorder: _StatusRecorder,
    batch: list[RunPayload],
    key: str | list[str],
    sleep: Sleep,
) -> None:
    """Delete the target's bin rows of the batch's runs that the runs no longer have (their
    audit was removed or replaced): one request per distinct set of current bins."""
    groups: dict[tuple[str, ...], list[str]] = {}
    for p in batch:
        bins = tuple(sorted(b["bin"] for b in p.bins))
        groups.setdefault(bins, []).append(p.fingerprint)
    for bins, all_fingerprints in groups.items():
        for start in range(0, len(all_fingerprints), DELETE_FINGERPRINTS):
            fingerprints = all_fingerprints[start : start + DELETE_FINGERPRINTS]

            def delete(
                bins: tuple[str, ...] = bins, fingerprints: list[str] = fingerprints
            ) -> None:
                query = client.table("run_bins").delete().in_("fingerprint_hash", fingerprints)
                if bins:
                    query = query.not_.in_("bin", list(bins))
                query.execute()

            _request(delete, recorder, "delete from run_bins", key, sleep)


def sync_rest(
    con: duckdb.DuckDBPyConnection,
    url: str,
    key: str,
    *,
    full: bool = False,
    dry_run: bool = False,
    sleep: Sleep = time.sleep,
    notify: Callable[[str], None] | None = None,
) -> SyncReport:
    """Upsert new or changed runs batch by batch; each batch is recorded once the target has it."""
    started = time.perf_counter()
    check_url(url)
    target = f"rest:{url_label(url).rstrip('/')}"
    secrets = [key, *url_secrets(url)]
    report, pending = plan_sync(con, target, "supabase-rest", full=full, dry_run=dry_run)
    if dry_run:
        return report
    report.sent_runs = report.sent_bins = 0  # counted batch by batch below
    if not pending:
        return report
    recorder = _StatusRecorder()
    client = _client(url, key, recorder)
    for batch in batches(pending):
        # PostgREST updates only the columns it is sent: stamp the runs that are (re)sent.
        now = datetime.now(timezone.utc).isoformat()
        cards = [{**p.card, "synced_at": now} for p in batch]
        _upsert(client, recorder, "run_cards", cards, "fingerprint_hash", secrets, sleep)
        bins = [{**b, "synced_at": now} for p in batch for b in p.bins]
        if bins:
            _upsert(client, recorder, "run_bins", bins, "fingerprint_hash,bin", secrets, sleep)
        _delete_stale_bins(client, recorder, batch, secrets, sleep)
        record_synced(con, target, batch)
        report.sent_runs += len(batch)
        report.sent_bins += len(bins)
        if notify:
            notify(f"sent {report.sent_runs}/{len(pending)} runs")
    report.seconds = time.perf_counter() - started
    return report
