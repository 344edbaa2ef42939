"""Only scores leave the warehouse: a report full of text (prompts, messages, API keys, notes,
text under metric names) is ingested, synced by both transports, and every column of every
table on the Postgres side is searched for every string of the report."""

from __future__ import annotations

import json
from typing import Any

import psycopg
import pytest

from tests.sync.postgrest_stub import PostgrestStub
from warehouse.store.schema import open_warehouse
from warehouse.sync.migrate import migrate
from warehouse.sync.postgres import public_run_card, sync_direct
from warehouse.sync.rest import sync_rest

KEY = "service-role-key-for-the-stub"
# Strings the allow-list sends on purpose (identity fields and entry ids).
IDENTITY = {
    "hostile-model",
    "zero-shot-hostile",
    "hostile-dataset",
    "en-es",
    "fp-hostile-0001",
    "2026-01-02T03:04:05Z",
    "seg-alpha",
    "seg-beta",
}


def _entry(i: int, seg: str) -> dict[str, Any]:
    return {
        "id": seg,
        "source": f"Private source sentence number {i} about the harbour.",
        "expected": [f"Frase privada de referencia {i} sobre el puerto.", f"Otra referencia {i}."],
        "predicted": f"Hipótesis privada del sistema {i} sobre el puerto.",
        "prompt": f"SYSTEM: translate faithfully. USER: private prompt {i}",
        "target": f"private target text {i}",
        "messages": [
            {"role": "system", "content": f"private system message {i}"},
            {"role": "user", "content": f"private user message {i}"},
        ],
        "response": f"private raw model response {i}",
        "translation": f"private translation field {i}",
        "reasoning": {"trace": f"private chain of thought {i}", "tokens": 12},
        "error": f"private error text echoing the prompt {i}" if i == 1 else None,
        "provenance": f"private-provenance-{i}",
        "latency_s": 0.5 + i,
        "difficulty": 2,
        "usage": {"prompt_tokens": 30, "completion_tokens": 12, "note": f"private usage note {i}"},
        "plugin_metrics": {
            "fst": {"accept": 1.0, "analysis": f"private analysis string {i}"},
            "private phrase as a metric key {i}": 0.5,
        },
        "comet": 0.8,
        "notes": [f"private list note {i}", 3, {"deep": f"private nested note {i}"}],
    }


HOSTILE_REPORT: dict[str, Any] = {
    "model_slug": "hostile-model",
    "condition": "zero-shot-hostile",
    "dataset": {
        "id": "hostile-dataset",
        "language_pair": "en-es",
        "description": "private dataset description",
    },
    "fingerprint": {"hash": "fp-hostile-0001", "comment": "private fingerprint comment"},
    "created_at": "2026-01-02T03:04:05Z",
    "elapsed_seconds": 12.5,
    "config": {
        "api_key": "sk-private-api-key-0123456789",
        "base_url": "https://user:private-password@llm.example.com/v1",
        "temperature": 0.2,
        "system_prompt": "private system prompt of the run",
    },
    "prompt": "private top-level prompt template {source}",
    "target": "private top-level target",
    "messages": [{"role": "user", "content": "private top-level message"}],
    "response": "private top-level response",
    "translation": "private top-level translation",
    "notes": "private free-text notes about the run",
    "tags": ["private-tag-one", 7],
    "totals": {"prompt_tokens": 60, "completion_tokens": 24, "total_cost_usd": 0.01},
    "scores": {
        "semantic_score": 0.7,
        "judge": {"rationale": "private judge rationale", "score": 0.6},
    },
    "entries": [_entry(0, "seg-alpha"), _entry(1, "seg-beta")],
}


def _strings(value: Any, out: set[str]) -> set[str]:
    """Every string of a JSON value: values, and keys that are free text (field names of the
    format, such as `language_pair`, are not private)."""
    if isinstance(value, str):
        out.add(value)
    elif isinstance(value, dict):
        for key, inner in value.items():
            if " " in key:
                out.add(key)
            _strings(inner, out)
    elif isinstance(value, list):
        for inner in value:
            _strings(inner, out)
    return out


SECRETS = sorted(s for s in _strings(HOSTILE_REPORT, set()) if s not in IDENTITY and len(s) >= 12)


def _dump(dsn: str) -> str:
    """Every row of every table in the target database, as text."""
    with psycopg.connect(dsn) as conn:
        tables = [
            (schema, name)
            for schema, name in conn.execute(
                "SELECT table_schema, table_name FROM information_schema.tables "
                "WHERE table_schema NOT IN ('pg_catalog', 'information_schema')"
            )
        ]
        texts = []
        for schema, name in tables:
            rows = conn.execute(
                psycopg.sql.SQL("SELECT t::text FROM {}.{} t").format(
                    psycopg.sql.Identifier(schema), psycopg.sql.Identifier(name)
                )
            ).fetchall()
            texts.extend(r[0] for r in rows)
    return "\n".join(texts)


def test_the_report_holds_at_least_thirty_private_strings():
    assert len(SECRETS) >= 30


@pytest.mark.parametrize("pg_dsn", ["supabase-defaults"], indirect=True)  # one kind suffices
@pytest.mark.parametrize("transport", ["direct", "rest"])
def test_no_text_of_the_run_card_reaches_postgres(pg_dsn, run_cli, db_path, tmp_path, transport):
    report = tmp_path / "hostile.json"
    report.write_text(json.dumps(HOSTILE_REPORT))
    ingested = run_cli("ingest", report)
    assert ingested.exit_code == 0, ingested.output
    migrate(pg_dsn)
    con = open_warehouse(db_path)
    try:
        if transport == "direct":
            assert sync_direct(con, pg_dsn).sent_runs == 1
        else:
            with PostgrestStub(pg_dsn, KEY) as stub:
                assert sync_rest(con, stub.url, KEY, sleep=lambda _s: None).sent_runs == 1
    finally:
        con.close()
    dump = _dump(pg_dsn)
    assert [s for s in SECRETS if s in dump] == []
    # What is meant to be there is there: identity, numbers, entry ids and error flags.
    with psycopg.connect(pg_dsn) as conn:
        (card,) = conn.execute("SELECT run_card FROM run_cards").fetchone()
    assert card["model_slug"] == "hostile-model" and card["dataset"]["id"] == "hostile-dataset"
    assert card["config"] == {"temperature": 0.2} and card["totals"]["total_cost_usd"] == 0.01
    assert card["scores"] == {"semantic_score": 0.7, "judge": {"score": 0.6}}
    assert [e["id"] for e in card["entries"]] == ["seg-alpha", "seg-beta"]
    assert card["entries"][1]["error"] is True and "error" not in card["entries"][0]
    assert card["entries"][0]["plugin_metrics"] == {"fst": {"accept": 1.0}}
    assert card["entries"][0]["usage"] == {"prompt_tokens": 30, "completion_tokens": 12}
    assert card["tags"] == [7]


@pytest.mark.parametrize(
    "field",
    ["prompt", "messages", "response", "translation", "target", "config", "notes", "reasoning"],
)
def test_public_run_card_drops_every_text_field(field):
    card = public_run_card(HOSTILE_REPORT)
    text = json.dumps(card)
    found = _strings(
        {field: HOSTILE_REPORT.get(field, HOSTILE_REPORT["entries"][0].get(field))}, set()
    )
    assert [s for s in found if len(s) >= 12 and s in text] == []


def test_carried_metrics_reach_postgres_only_under_identifier_like_names(
    pg_dsn, run_cli, db_path, tmp_path
):
    report = tmp_path / "hostile.json"
    report.write_text(json.dumps(HOSTILE_REPORT))
    assert run_cli("ingest", report).exit_code == 0
    migrate(pg_dsn)
    con = open_warehouse(db_path)
    try:
        sync_direct(con, pg_dsn)
    finally:
        con.close()
    with psycopg.connect(pg_dsn) as conn:
        (carried,) = conn.execute("SELECT plugin_metrics FROM run_cards").fetchone()
    assert "plugin_metrics.fst.accept" in carried
    assert not [name for name in carried if " " in name]  # "private phrase as a metric key"
    assert all(m["signature"] is None for m in carried.values())
