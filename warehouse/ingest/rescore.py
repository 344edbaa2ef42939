"""Re-scoring stored runs: a run's statistics under other metric options, computed from its stored
hypotheses and stored beside it as a run of its own — the run a fresh ingest of the same output
with those options would store (docs/metrics.md, "Re-scoring stored runs")."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

import duckdb
import pyarrow as pa

from warehouse import __version__
from warehouse.basics import Notify, utc_now
from warehouse.errors import UsageError
from warehouse.ingest.prepare import stored_test_set
from warehouse.ingest.runs import PreparedRun
from warehouse.ingest.write import insert_rows, segment_stats_table, store_intervals, stored_scores
from warehouse.metrics.options import DEFAULT_OPTIONS, MetricOptions
from warehouse.metrics.plugins import PluginMetric
from warehouse.metrics.surface import metric_settings
from warehouse.stats.resample import BootstrapSettings
from warehouse.store.connection import transaction
from warehouse.store.corpora import get_corpus
from warehouse.store.run_refs import resolve_run
from warehouse.store.sums import refresh_runs

# What a re-scored run shares with its source, copied row for row (its own run id); the run row
# itself is copied with its metric settings and time of ingest replaced.
_SHARED_TABLES = ("hypotheses", "metric_values", "run_tags", "run_warnings")


@dataclass(frozen=True)
class RescoreResult:
    """What happened to one stored run: `added` (re-scored beside it) or `unchanged` (a run
    with these options was stored already, or the run itself has them)."""

    action: str
    source_run_id: str
    run_id: str
    model_slug: str
    condition: str | None
    test_set: str
    signatures: dict[str, str]
    scores: dict[str, float | None]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return asdict(self)


def rescore_targets(
    con: duckdb.DuckDBPyConnection,
    refs: Sequence[str],
    *,
    every: bool = False,
    testset: str | None = None,
) -> list[str]:
    """The runs as ingested that `refs` name (a re-scored run stands for its source), or with
    `every` all of them (of `testset` when given), oldest first, each once."""
    if every == bool(refs):
        raise UsageError("name the runs to re-score, or give --all (not both)")
    if testset is not None:
        get_corpus(con, testset, "test")  # an unknown name is a usage error
    if every:
        rows = con.execute(
            "SELECT r.run_id FROM runs r JOIN corpora c ON c.corpus_id = r.test_corpus_id "
            "WHERE r.run_id NOT IN (SELECT run_id FROM run_rescores) "
            "AND (? IS NULL OR c.name = ?) ORDER BY r.created_at, r.run_id",
            [testset, testset],
        ).fetchall()
        return [r for (r,) in rows]
    out: list[str] = []
    for ref in refs:
        run_id = resolve_run(con, ref, testset)
        source = con.execute(
            "SELECT source_run_id FROM run_rescores WHERE run_id = ?", [run_id]
        ).fetchone()
        run_id = str(source[0]) if source is not None else run_id
        if run_id not in out:
            out.append(run_id)
    return out


# The signatures of the statistics `options` compute; a run's other signatures (declared by an
# imported file, or a plugin's) go with the values they describe.
_SURFACE = ("bleu", "chrf", "ter")


def _stored_options(settings: dict[str, Any]) -> MetricOptions:
    """The metric options a stored run's statistics were computed under."""
    return MetricOptions(**settings["options"]) if settings.get("options") else DEFAULT_OPTIONS


def _stored_run(
    con: duckdb.DuckDBPyConnection,
    run_id: str,
    changes: Mapping[str, Any],
    bootstrap: BootstrapSettings | None,
) -> PreparedRun:
    """A stored run read back as a prepared run scored under its own metric options with
    `changes` (its id is the one a fresh ingest of its hypotheses with those options gets)."""
    row = con.execute(
        "SELECT r.test_corpus_id, c.name, r.model_slug, r.condition, r.created_at, "
        "r.metric_settings FROM runs r JOIN corpora c ON c.corpus_id = r.test_corpus_id "
        "WHERE r.run_id = ?",
        [run_id],
    ).fetchone()
    assert row is not None  # resolved above, in the same transaction
    corpus_id, test_name, model_slug, condition, created_at, stored_settings = row
    stored = json.loads(stored_settings or "{}")
    options = replace(_stored_options(stored), **changes)
    test = stored_test_set(con, str(test_name))
    hyps = con.execute(
        "SELECT hyp, error FROM hypotheses WHERE run_id = ? ORDER BY seg_idx", [run_id]
    ).fetchall()
    entry_values = con.execute(
        "SELECT seg_idx, metric, value FROM metric_values WHERE run_id = ? AND seg_idx IS NOT "
        "NULL ORDER BY seg_idx, metric",
        [run_id],
    ).fetchall()
    n_refs = max(len(r) for r in test.refs)
    settings = metric_settings(n_refs, options)
    kept = {k: v for k, v in (stored.get("signatures") or {}).items() if k not in _SURFACE}
    settings["signatures"] = {**kept, **settings["signatures"]}
    return PreparedRun(
        label=run_id,
        test_corpus_id=str(corpus_id),
        test_name=test.name,
        new_test_set=None,
        model_slug=str(model_slug),
        condition=condition,
        created_at=created_at,
        hyps=[h for h, _ in hyps],
        errors=[e for _, e in hyps],
        latency=[],
        entry_tokens={},
        refs=test.refs,
        seg_metrics=[(int(i), str(m), float(v)) for i, m, v in entry_values],
        run_metrics={},
        document=None,
        settings=settings,
        ci=None,
        difficulty=test.difficulty,
        keys=test.keys,
        sources=test.sources,
        options=options,
        bootstrap=bootstrap,
    )


def _copy_shared_rows(con: duckdb.DuckDBPyConnection, source: str, run: PreparedRun) -> None:
    """The source's run row (metric settings and time of ingest replaced), hypotheses, entry
    metrics, tags and input warnings under the re-scored run's id."""
    settings = json.dumps({**run.settings, "tame_wh": __version__})
    con.execute(
        "INSERT INTO runs BY NAME SELECT * REPLACE (CAST(? AS VARCHAR) AS run_id, "
        "CAST(? AS TIMESTAMP) AS ingested_at, CAST(? AS JSON) AS metric_settings) "
        "FROM runs WHERE run_id = ?",
        [run.run_id, utc_now(), settings, source],
    )
    for table in _SHARED_TABLES:
        con.execute(
            f"INSERT INTO {table} BY NAME SELECT * REPLACE (CAST(? AS VARCHAR) AS run_id) "
            f"FROM {table} WHERE run_id = ?",
            [run.run_id, source],
        )


def _scored(
    con: duckdb.DuckDBPyConnection,
    source: str,
    changes: Mapping[str, Any],
    plugins: Sequence[PluginMetric],
    bootstrap: BootstrapSettings | None,
) -> tuple[PreparedRun, bool]:
    """A stored run scored again (statistics, plugin values, intervals), and whether a run with
    its new id is stored already (then nothing is computed)."""
    run = _stored_run(con, source, changes, bootstrap).use_plugins(plugins)
    if con.execute("SELECT 1 FROM runs WHERE run_id = ?", [run.run_id]).fetchone():
        return run, True
    run.plugin_values()
    _ = run.stats, run.confidence
    return run, False


def _write(con: duckdb.DuckDBPyConnection, source: str, run: PreparedRun) -> None:
    """Store a re-scored run beside its source, in one transaction."""
    with transaction(con):
        if con.execute("SELECT 1 FROM runs WHERE run_id = ?", [run.run_id]).fetchone():
            return  # another process stored it meanwhile
        names = {p.name for p in run.plugins}
        added = [row for row in run.seg_metrics if row[1] in names]
        _copy_shared_rows(con, source, run)
        insert_rows(con, "segment_stats", segment_stats_table(run))
        insert_rows(con, "metric_values", _metric_rows(run.run_id, added))
        con.execute("INSERT INTO run_rescores VALUES (?, ?, ?)", [run.run_id, source, utc_now()])
        refresh_runs(con, [run.run_id])
        if run.confidence is not None:
            store_intervals(con, run.run_id, run.confidence)


def _metric_rows(run_id: str, rows: Sequence[tuple[int, str, float]]) -> pa.Table:
    """Per-entry metric values as rows of `metric_values`."""
    return pa.table(
        {
            "run_id": pa.array([run_id] * len(rows), pa.string()),
            "seg_idx": pa.array([r[0] for r in rows], pa.int64()),
            "metric": pa.array([r[1] for r in rows], pa.string()),
            "value": pa.array([r[2] for r in rows], pa.float64()),
        }
    )


def rescore_runs(
    con: duckdb.DuckDBPyConnection,
    run_ids: Sequence[str],
    changes: Mapping[str, Any],
    *,
    plugins: Sequence[PluginMetric] = (),
    bootstrap: BootstrapSettings | None = None,
    notify: Notify | None = None,
) -> list[RescoreResult]:
    """Store each run's statistics under its metric options with `changes` (`tokenize`,
    `lowercase`, `chrf_word_order`, `ter`), with the metric plugins' values, beside it
    (nothing stored is changed); a run that has them already is left as it is. Every run is
    scored before the first is written (a failing plugin stores nothing), then each is written
    in a transaction of its own."""
    unknown = sorted(set(changes) - set(MetricOptions.__dataclass_fields__))
    if unknown:
        raise UsageError(f"unknown metric options: {', '.join(unknown)}")
    if not changes and not plugins:
        raise UsageError("give the metric options to change (--tokenize, …) or --metric NAME")
    say = notify or (lambda _m: None)
    scored = [(run_id, *_scored(con, run_id, changes, plugins, bootstrap)) for run_id in run_ids]
    results = []
    for source, run, stored in scored:
        if not stored:
            _write(con, source, run)
            say(f"re-scored {source} as {run.run_id}")
        results.append(
            RescoreResult(
                action="unchanged" if stored else "added",
                source_run_id=source,
                run_id=run.run_id,
                model_slug=run.model_slug,
                condition=run.condition,
                test_set=run.test_name,
                signatures=dict(run.settings["signatures"]),
                scores=stored_scores(con, run.run_id),
            )
        )
    return results
