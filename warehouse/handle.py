"""The warehouse as one handle: `Warehouse.open(address)` for reading or writing, owning the
connection, a lake writer's lock and the schema check, with the main verbs as methods (what a
script or notebook holds; docs/python.md)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal

import duckdb

from warehouse import __version__
from warehouse.errors import SchemaError, UsageError
from warehouse.store.address import Address, LakeAddress, parse_address
from warehouse.store.connection import (
    DEFAULT_LOCK_TIMEOUT,
    close_connection,
    connect,
    missing_warehouse,
)
from warehouse.store.lake import AsOf, parse_as_of
from warehouse.store.schema import code_schema_version, open_warehouse, stored_schema_version

if TYPE_CHECKING:
    import pyarrow as pa

    from warehouse.analysis.clusters import ClusterRequest
    from warehouse.analysis.compare import Comparison
    from warehouse.analysis.export import ExportResult
    from warehouse.analysis.meta import MetaReport
    from warehouse.analysis.query import QueryResult
    from warehouse.analysis.regressions import RegressionReport
    from warehouse.analysis.replicates import GroupComparison, ReplicateGroup
    from warehouse.analysis.runs import Deletion, RunFilter, RunSummary
    from warehouse.basics import Notify
    from warehouse.demo import DemoResult
    from warehouse.exposure.config import AuditOptions
    from warehouse.exposure.execution import Execution
    from warehouse.exposure.index.stored import BuildResult, StoredIndex
    from warehouse.exposure.summary import AuditResult
    from warehouse.html.build_state import DashboardResult
    from warehouse.html.report_file import ReportFile
    from warehouse.ingest.batch import IngestRequest, Progress
    from warehouse.ingest.human import AnnotatedIngest
    from warehouse.ingest.rescore import RescoreResult
    from warehouse.ingest.runs import IngestResult
    from warehouse.inputs.corpus_files import CorpusData
    from warehouse.metrics.options import MetricOptions
    from warehouse.stats.clusters import Board
    from warehouse.store.copy import CopyResult
    from warehouse.store.corpora import AddResult, CorpusDeletion, CorpusInfo, Replacement
    from warehouse.store.human import HumanSetResult
    from warehouse.store.maintain import MaintainResult
    from warehouse.store.schema import SchemaStatus
    from warehouse.store.snapshots import Snapshot
    from warehouse.sync.migrate import MigrationReport
    from warehouse.sync.postgres import SyncReport

Access = Literal["read", "write"]


class Rows(Sequence[dict[str, Any]]):
    """Rows of a result, each a dict by column name; also as Arrow (`arrow()`), pandas (`df()`)
    or polars (`pl()`)."""

    def __init__(self, records: list[dict[str, Any]], table: pa.Table | None = None) -> None:
        self._records = records
        self._table = table

    def __len__(self) -> int:
        return len(self._records)

    def __getitem__(self, index: Any) -> Any:
        return self._records[index]

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self._records)

    def __repr__(self) -> str:
        return f"Rows({len(self)} rows)"

    def arrow(self) -> pa.Table:
        """The rows as an Arrow table."""
        if self._table is None:
            import pyarrow as pa

            self._table = pa.Table.from_pylist(self._records)
        return self._table

    def df(self) -> Any:
        """The rows as a pandas DataFrame (pandas must be installed)."""
        return self.arrow().to_pandas()

    def pl(self) -> Any:
        """The rows as a polars DataFrame (polars must be installed)."""
        import polars

        return polars.from_arrow(self.arrow())


def require_current_schema(
    con: duckdb.DuckDBPyConnection, address: Address, as_of: AsOf | None = None
) -> None:
    """Refuse to read an empty file, an older schema (readers never upgrade) or a newer one."""
    stored = stored_schema_version(con)
    current = code_schema_version()
    if stored == 0:
        if as_of is not None:
            raise SchemaError(f"--as-of {as_of}: the lake held no warehouse yet then")
        raise missing_warehouse(address)
    if stored < current and as_of is not None:
        raise SchemaError(
            f"--as-of {as_of}: the lake's schema was version {stored} then; this tame-wh reads "
            f"version {current} (choose a later snapshot)"
        )
    if stored < current:
        raise SchemaError(
            f"{address}: schema version {stored} is older than this tame-wh's ({current}); run "
            "`tame-wh init` to upgrade it (read-only commands never change the warehouse)"
        )
    if stored > current:
        raise SchemaError(
            f"{address}: written by a newer tame-wh (schema version {stored}); this tame-wh "
            f"{__version__} knows schema versions up to {current}; upgrade tame-wh"
        )


class Warehouse:
    """A warehouse (a DuckDB file or a DuckLake lake) opened for reading or for writing. Open it
    with `Warehouse.open`, use it in a `with` block (or call `close`); `con` is the DuckDB
    connection, for anything the methods do not cover."""

    def __init__(
        self,
        con: duckdb.DuckDBPyConnection,
        address: Address,
        access: Access,
        as_of: AsOf | None,
        lock_timeout: float,
    ) -> None:
        self._con: duckdb.DuckDBPyConnection | None = con
        self.address = address
        self.access = access
        self.as_of = as_of
        self.lock_timeout = lock_timeout

    @classmethod
    def open(
        cls,
        address: str | Path | Address | None = None,
        *,
        access: Access = "write",
        data_path: str | None = None,
        as_of: str | AsOf | None = None,
        lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
    ) -> Warehouse:
        """The warehouse at `address` (a file path or `ducklake:postgres:…`; default
        `$TAME_WH_DB`, else `./tame.duckdb`). `access="write"` creates or upgrades it and, on a
        lake, holds the writers' lock until closed; `access="read"` opens an existing warehouse
        of this version's schema read-only, at the lake snapshot `as_of` when given."""
        if access not in ("read", "write"):
            raise UsageError(f"access must be 'read' or 'write', not {access!r}")
        parsed = address if isinstance(address, LakeAddress) else parse_address(address, data_path)
        moment = parse_as_of(as_of) if isinstance(as_of, str) else as_of
        if access == "write":
            if moment is not None:
                raise UsageError(
                    "as_of reads a past snapshot: open the warehouse with access='read'"
                )
            con = open_warehouse(parsed, lock_timeout=lock_timeout)
            return cls(con, parsed, access, None, lock_timeout)
        if isinstance(parsed, Path) and moment is None and not parsed.exists():
            raise missing_warehouse(parsed)
        con = connect(parsed, read_only=True, lock_timeout=lock_timeout, as_of=moment)
        try:
            require_current_schema(con, parsed, moment)
        except BaseException:
            close_connection(con)
            raise
        return cls(con, parsed, access, moment, lock_timeout)

    @classmethod
    def open_if_exists(
        cls,
        address: str | Path | Address | None = None,
        *,
        lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
    ) -> Warehouse | None:
        """The warehouse at `address` read-only as it is (any schema: for its settings), or None
        when there is none; nothing is created or upgraded."""
        from warehouse.store.connection import warehouse_exists

        parsed = address if isinstance(address, LakeAddress) else parse_address(address)
        if not warehouse_exists(parsed):
            return None
        con = connect(parsed, read_only=True, lock_timeout=lock_timeout)
        return cls(con, parsed, "read", None, lock_timeout)

    @staticmethod
    def init(
        address: str | Path | Address | None = None, *, lock_timeout: float = DEFAULT_LOCK_TIMEOUT
    ) -> SchemaStatus:
        """Create the warehouse at `address`, or upgrade it to this version's schema (a no-op
        when current; on a lake the catalog is moved out of `public` and sealed)."""
        from warehouse.store.schema import init_warehouse

        parsed = address if isinstance(address, LakeAddress) else parse_address(address)
        return init_warehouse(parsed, lock_timeout=lock_timeout)

    @staticmethod
    def diagnose(address: Address, *, lock_timeout: float) -> dict[str, Any]:
        """Versions, CPU threads, native module and the warehouse's health (what `doctor`
        prints); never creates anything."""
        from warehouse.store.doctor import diagnose

        return diagnose(address, lock_timeout)

    @staticmethod
    def copy(
        source: Address,
        destination: Address,
        *,
        lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
        notify: Notify | None = None,
    ) -> CopyResult:
        """Copy every table of the warehouse `source` into a new (or empty) `destination`,
        verified table by table before it is committed."""
        from warehouse.store.copy import copy_warehouse

        return copy_warehouse(source, destination, lock_timeout=lock_timeout, notify=notify)

    @staticmethod
    def demo(
        address: Address,
        *,
        lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
        notify: Notify | None = None,
    ) -> DemoResult:
        """Load the bundled English-Spanish example and runs into the warehouse at `address`
        (created, or reused)."""
        from warehouse.demo import run_demo

        return run_demo(address, lock_timeout=lock_timeout, notify=notify)

    @staticmethod
    def migrate(dsn: str | None = None, *, dry_run: bool = False) -> MigrationReport:
        """Apply the pending numbered migrations to the Supabase/Postgres database at `dsn`
        (default `$TAME_WH_PG_DSN`), in order."""
        from warehouse.sync.dsn import resolve_dsn
        from warehouse.sync.migrate import migrate

        return migrate(resolve_dsn(dsn), dry_run=dry_run)

    @staticmethod
    def ingest_batch(
        address: Address,
        request: IngestRequest,
        *,
        lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
        notify: Notify | None = None,
        progress: Progress | None = None,
    ) -> list[IngestResult]:
        """Store the runs of `request` in the warehouse at `address` (created on first use),
        scoring what is new without holding the warehouse, writing all in one transaction."""
        from warehouse.basics import silent
        from warehouse.ingest.batch import ingest_batch, no_progress

        return ingest_batch(
            address,
            request,
            lock_timeout=lock_timeout,
            notify=notify or silent,
            progress=progress or no_progress,
        )

    @staticmethod
    def safe_query(
        address: Address,
        sql: str,
        *,
        timeout: float | None = None,
        memory_mb: float | None = None,
        lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
        arrow: bool = False,
        as_of: AsOf | None = None,
    ) -> QueryResult:
        """One vetted, read-only, time- and memory-bounded SELECT over the existing warehouse
        at `address` (what `tame-wh query` runs: safe for other people's SQL)."""
        from warehouse.analysis.query import run_query

        return run_query(
            address,
            sql,
            timeout=timeout,
            memory_mb=memory_mb,
            lock_timeout=lock_timeout,
            arrow=arrow,
            as_of=as_of,
        )

    @staticmethod
    def compare_files(
        refs: Sequence[str],
        *,
        significance: bool = False,
        method: str = "sign",
        n_bootstrap: int | None = None,
        alpha: float | None = None,
        seed: int | None = None,
        bin_name: str | None = None,
        train: str | None = None,
        allow_different_testsets: bool = False,
    ) -> Comparison:
        """Compare test-report / run-card files without any warehouse (scored in memory; an
        exposure bin needs a warehouse's audits)."""
        from warehouse.analysis.compare import compare

        return compare(
            None,
            refs,
            significance=significance,
            method=method,
            n_bootstrap=n_bootstrap,
            alpha=alpha,
            seed=seed,
            bin_name=bin_name,
            train=train,
            allow_different_testsets=allow_different_testsets,
        )

    @property
    def con(self) -> duckdb.DuckDBPyConnection:
        """The open DuckDB connection."""
        if self._con is None:
            raise UsageError(f"the warehouse {self.address} is closed")
        return self._con

    def close(self) -> None:
        """Close the connection (a lake writer's lock is given back); closing twice is fine."""
        if self._con is not None:
            close_connection(self._con)
            self._con = None

    def __enter__(self) -> Warehouse:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._con is None else self.access
        return f"Warehouse({str(self.address)!r}, {state})"

    def _writable(self, verb: str) -> duckdb.DuckDBPyConnection:
        """The connection, for a verb that writes (refused on a warehouse opened for reading)."""
        if self.access != "write":
            raise UsageError(f"{verb} writes: open the warehouse with access='write'")
        return self.con

    # --- Reading ---------------------------------------------------------------------------

    def leaderboard(
        self,
        *,
        testset: str | None = None,
        sort: str = "composite",
        limit: int | None = None,
        train: str | None = None,
        tags: Mapping[str, str] | None = None,
        bin_name: str | None = None,
        options: MetricOptions | None = None,
        plugin_metrics: Sequence[str] = (),
        bin_by: str | None = None,
        exclude_tags: Sequence[tuple[str, str | None]] = (),
    ) -> Rows:
        """Runs ranked by `sort` (or by chrF++ on the exposure bin `bin_name`, each row then
        with its `bin` scores and intervals), each with every leaderboard column
        (docs/scores.md); the runs as ingested, or with `options` those scored under them, or
        with `plugin_metrics` those the metric plugins scored, ranked by the first; exposure
        columns from an audit by the measure `bin_by` when given; runs with every tag of
        `tags` and none of `exclude_tags` ((key, value), a None value for any)."""
        from warehouse.analysis.leaderboard import leaderboard

        rows = leaderboard(
            self.con, testset=testset, sort=sort, limit=limit, train=train,
            tags=dict(tags or {}), bin_name=bin_name, options=options,
            plugin_metrics=plugin_metrics, bin_by=bin_by, exclude_tags=exclude_tags,
        )  # fmt: skip
        return Rows(rows)

    def runs(
        self,
        *,
        testset: str | None = None,
        model_slug: str | None = None,
        tags: Mapping[str, str] | None = None,
    ) -> list[RunSummary]:
        """Stored runs with their whole-run scores and tags."""
        from warehouse.analysis.runs import list_runs

        return list_runs(self.con, testset=testset, model_slug=model_slug, tags=dict(tags or {}))

    def report(
        self,
        run: str,
        *,
        train: str | None = None,
        testset: str | None = None,
        bin_by: str | None = None,
    ) -> dict[str, Any]:
        """Everything about one run (a run id, a unique prefix or a model slug, on `testset`
        when given): the document `tame-wh report --json` prints; its exposure from an audit by
        the measure `bin_by` when given."""
        from warehouse.analysis.report import build_report

        return build_report(self.con, run, train=train, testset=testset, bin_by=bin_by)

    def replicates(
        self,
        *,
        testset: str | None = None,
        n_bootstrap: int | None = None,
        alpha: float | None = None,
        seed: int | None = None,
    ) -> list[ReplicateGroup]:
        """One entry per configuration's replicate group (an unlabelled run alone): mean and
        standard deviation of its scores across replicates and an interval counting segment
        and seed noise (docs/statistics.md, "Replicates")."""
        from warehouse.analysis.replicates import replicate_groups
        from warehouse.stats.resample import bootstrap_settings

        settings = bootstrap_settings(self.con, n_bootstrap, alpha, seed)
        return replicate_groups(self.con, settings, testset=testset)

    def replicate_clusters(
        self,
        groups: Sequence[ReplicateGroup],
        *,
        metric: str = "chrf_plus_plus",
        correction: str = "holm",
        n_bootstrap: int | None = None,
        alpha: float | None = None,
        seed: int | None = None,
    ) -> list[Board]:
        """Tie groups of replicate groups, one board per test set: every pair of groups compared
        on the mean of its replicates, segments and replicates resampled (docs/statistics.md,
        "Replicates")."""
        from warehouse.analysis.replicates import replicate_clusters
        from warehouse.stats.resample import bootstrap_settings

        settings = bootstrap_settings(self.con, n_bootstrap, alpha, seed)
        return replicate_clusters(self.con, groups, metric, correction=correction,
                                  settings=settings)  # fmt: skip

    def compare_replicates(
        self,
        run_a: str,
        run_b: str,
        *,
        n_bootstrap: int | None = None,
        alpha: float | None = None,
        seed: int | None = None,
    ) -> GroupComparison:
        """The replicate groups of two runs compared metric by metric with the two-level sign
        test (docs/statistics.md, "Replicates")."""
        from warehouse.analysis.replicates import compare_groups
        from warehouse.stats.resample import bootstrap_settings

        settings = bootstrap_settings(self.con, n_bootstrap, alpha, seed)
        return compare_groups(self.con, run_a, run_b, settings)

    def clusters(self, runs: Sequence[str], request: ClusterRequest | None = None) -> list[Board]:
        """Tie groups of the named runs, one board per test set: every pair tested on one
        metric, p-values corrected, each run's cluster and rank range (docs/statistics.md)."""
        from warehouse.analysis.clusters import ClusterRequest, board_clusters

        return board_clusters(self.con, runs, request or ClusterRequest())

    def store_clusters(self, boards: Sequence[Board]) -> int:
        """Store tie-group boards (`clusters`) for the leaderboard view, reports, the dashboard
        and sync, each replacing the stored board of its test set, metric, method and
        correction; the rows written."""
        from warehouse.analysis.clusters import store_boards

        return store_boards(self._writable("store_clusters"), boards)

    def show_run(self, run: str, *, testset: str | None = None) -> dict[str, Any]:
        """One run: identity, counts, scores, tags, warnings, signatures (`runs show`)."""
        from warehouse.analysis.runs import show_run

        return show_run(self.con, run, testset)

    def corpora(self, role: str | None = None) -> list[CorpusInfo]:
        """Registered collections, oldest first: training corpora (`role="train"`), test sets
        (`"test"`) or both."""
        from warehouse.store.corpora import list_corpora

        return list_corpora(self.con, role)

    def corpus(self, name: str, role: str | None = None) -> CorpusInfo:
        """One registered training corpus or test set, by name."""
        from warehouse.store.corpora import get_corpus

        return get_corpus(self.con, name, role)

    def compare(
        self,
        runs: Sequence[str],
        *,
        significance: bool = False,
        method: str = "sign",
        n_bootstrap: int | None = None,
        alpha: float | None = None,
        seed: int | None = None,
        bin_name: str | None = None,
        train: str | None = None,
        allow_different_testsets: bool = False,
    ) -> Comparison:
        """Runs side by side on their common segments (run ids, prefixes, model slugs or
        report files) and, with `significance`, a paired test of every pair (docs/statistics.md)."""
        from warehouse.analysis.compare import compare

        return compare(
            self.con,
            runs,
            significance=significance,
            method=method,
            n_bootstrap=n_bootstrap,
            alpha=alpha,
            seed=seed,
            bin_name=bin_name,
            train=train,
            allow_different_testsets=allow_different_testsets,
        )

    def regressions(
        self,
        *,
        testset: str | None = None,
        model_slug: str | None = None,
        latest: bool = False,
        method: str = "sign",
        n_bootstrap: int | None = None,
        alpha: float | None = None,
        seed: int | None = None,
    ) -> RegressionReport:
        """Significant drops of each run against the previous run of the same model, condition
        and test set (only each group's newest run when `latest`), by the paired test `method`."""
        from warehouse.analysis.regressions import find_regressions
        from warehouse.stats.significance import method_settings

        settings = method_settings(self.con, method, n_bootstrap, alpha, seed)
        return find_regressions(
            self.con,
            testset=testset,
            model_slug=model_slug,
            latest=latest,
            method=method,
            settings=settings,
        )

    def gate(
        self,
        run: str,
        *,
        against: str = "previous",
        require_baseline: bool = False,
        method: str = "sign",
        n_bootstrap: int | None = None,
        alpha: float | None = None,
        seed: int | None = None,
        metrics: Sequence[str] = (),
        margins: Sequence[str] = (),
        correction: str | None = None,
    ) -> RegressionReport:
        """Judge one run against a pinned baseline (`previous`, `best`, `tag:KEY=VALUE` or a
        run) by the gate's policy: the gated `metrics` (default chrF++ and the settings'
        `gate.metric.*`), their `METRIC=MARGIN` margins and the `correction` across them
        (default Holm); every other shared metric is tested with `method` as information; no
        baseline passes with a note unless `require_baseline` (docs/statistics.md, "The
        gate")."""
        from warehouse.analysis.regressions import gate_run
        from warehouse.stats.gate import resolve_gate_policy
        from warehouse.stats.significance import method_settings
        from warehouse.store.settings import read_settings

        settings = method_settings(self.con, method, n_bootstrap, alpha, seed)
        policy = resolve_gate_policy(
            read_settings(self.con), metrics, margins, correction, settings.alpha
        )
        return gate_run(
            self.con,
            run,
            against=against,
            require_baseline=require_baseline,
            method=method,
            settings=settings,
            policy=policy,
        )

    def setting(self, key: str, default: float) -> float:
        """One `settings` row's value (`default` when the warehouse has no such row)."""
        from warehouse.store.settings import read_settings

        return float(read_settings(self.con).get(key, default))

    def check_against(self, against: str) -> None:
        """Refuse a gate's baseline rule that cannot name a run (before a run is stored)."""
        from warehouse.analysis.regressions import check_against

        check_against(self.con, against)

    def snapshots(self, limit: int = 20) -> list[Snapshot]:
        """A lake's newest snapshots, newest first, with what each changed."""
        from warehouse.store.snapshots import list_snapshots

        return list_snapshots(self.con, limit)

    def query(self, sql: str, params: Sequence[Any] | None = None) -> Rows:
        """The rows of one SQL statement on this connection (use `tame-wh query` for the
        read-only, bounded form that other people's SQL needs)."""
        table = self.con.execute(sql, list(params or [])).to_arrow_table()
        return Rows(table.to_pylist(), table)

    # --- Writing ---------------------------------------------------------------------------

    def add_corpus(
        self,
        name: str,
        src: str | Path,
        tgt: str | Path,
        *,
        src_lang: str | None = None,
        tgt_lang: str | None = None,
        replace: bool = False,
    ) -> AddResult:
        """Register a parallel training corpus from two aligned text files."""
        from warehouse.inputs.corpus_files import read_training_corpus
        from warehouse.store.corpora import add_corpus

        data = read_training_corpus(name, src, tgt, src_lang, tgt_lang)
        return add_corpus(self._writable("add_corpus"), data, replace=replace)

    def add_text_corpus(
        self,
        name: str,
        path: str | Path,
        *,
        lang: str | None = None,
        fmt: str | None = None,
        replace: bool = False,
    ) -> AddResult:
        """Register documents or monolingual text as a training corpus (one document per line,
        or JSON Lines with a `text` field); audits of it score by containment by default."""
        from warehouse.inputs.corpus_files import read_text_corpus
        from warehouse.store.corpora import add_corpus

        data = read_text_corpus(name, path, lang, fmt)
        return add_corpus(self._writable("add_text_corpus"), data, replace=replace)

    def add_test_set(
        self,
        name: str,
        src: str | Path,
        refs: Sequence[str | Path],
        *,
        segments_meta: str | Path | None = None,
        src_lang: str | None = None,
        tgt_lang: str | None = None,
        replace: bool = False,
    ) -> AddResult:
        """Register a test set: sources, one or more reference files, optional metadata."""
        from warehouse.inputs.corpus_files import read_test_set
        from warehouse.store.corpora import add_corpus

        data = read_test_set(name, src, list(refs), segments_meta, src_lang, tgt_lang)
        return add_corpus(self._writable("add_test_set"), data, replace=replace)

    def deletion_plan(self, name: str, role: str) -> CorpusDeletion:
        """What deleting the training corpus (`role="train"`) or test set (`"test"`) called
        `name` would remove: its segments, audits and runs (nothing is changed)."""
        from warehouse.store.corpora import deletion_plan

        return deletion_plan(self.con, name, role)

    def delete_corpus(
        self, name: str, role: str, *, confirmed: CorpusDeletion | None = None
    ) -> CorpusDeletion:
        """Delete a training corpus or test set and every audit and run that depends on it, in
        one transaction; with `confirmed` (a plan the user agreed to), a deletion that would
        now remove anything else is refused."""
        from warehouse.store.corpora import delete_named_corpus

        return delete_named_corpus(self._writable("delete"), name, role, confirmed=confirmed)

    def rename_corpus(self, name: str, new_name: str, role: str) -> CorpusInfo:
        """Rename a training corpus or test set (its id, audits and runs stay)."""
        from warehouse.store.corpora import rename_corpus

        return rename_corpus(self._writable("rename"), name, new_name, role)

    def replacement_plan(self, data: CorpusData) -> Replacement | None:
        """What registering `data` with `replace=True` would remove (None: nothing)."""
        from warehouse.store.corpora import replacement_plan

        return replacement_plan(self.con, data)

    def add(
        self,
        data: CorpusData,
        *,
        replace: bool = False,
        confirmed: Replacement | None = None,
        notify: Notify | None = None,
    ) -> AddResult:
        """Register a collection read by `read_training_corpus` / `read_test_set`; with
        `confirmed` (a plan the user agreed to), a replacement removing more is refused."""
        from warehouse.basics import silent
        from warehouse.store.corpora import add_corpus

        return add_corpus(
            self._writable("add"),
            data,
            replace=replace,
            notify=notify or silent,
            confirmed=confirmed,
        )

    def tag_run(
        self, run: str, tags: Mapping[str, str], remove: Sequence[str] = ()
    ) -> tuple[str, dict[str, str]]:
        """Set tags on a run (a key's old value replaced) and remove others; the run id and its
        tags now."""
        from warehouse.analysis.runs import tag_run

        return tag_run(self._writable("tag_run"), run, dict(tags), remove)

    def delete_runs(self, runs: Sequence[str], *, dry_run: bool = False) -> Deletion:
        """Delete runs and everything stored for them, in one transaction (`dry_run`: count
        only)."""
        from warehouse.analysis.runs import delete_runs_by_ref

        return delete_runs_by_ref(self._writable("delete_runs"), runs, dry_run=dry_run)

    def maintain(
        self, *, keep_days: int | None = None, grace_hours: int | None = None, dry_run: bool = False
    ) -> MaintainResult:
        """A lake's upkeep: flush inlined rows, merge small files, expire old snapshots, delete
        files no snapshot needs."""
        from warehouse.store.maintain import DEFAULT_GRACE_HOURS, DEFAULT_KEEP_DAYS, maintain_lake

        return maintain_lake(
            self._writable("maintain"),
            keep_days=DEFAULT_KEEP_DAYS if keep_days is None else keep_days,
            grace_hours=DEFAULT_GRACE_HOURS if grace_hours is None else grace_hours,
            dry_run=dry_run,
        )

    def sync(
        self,
        *,
        dsn: str | None = None,
        supabase_url: str | None = None,
        key: str | None = None,
        full: bool = False,
        dry_run: bool = False,
        notify: Notify | None = None,
    ) -> SyncReport:
        """Push new or changed runs' denormalised columns to Postgres (`dsn`, default
        `$TAME_WH_PG_DSN`) or to Supabase's REST API (`supabase_url`; `key` defaults to
        `$SUPABASE_SERVICE_ROLE_KEY`)."""
        if supabase_url is not None:
            from warehouse.sync.rest import KEY_ENV_VAR, sync_rest

            key = key or os.environ.get(KEY_ENV_VAR)
            if not key:
                raise UsageError(f"the REST transport needs the service role key in ${KEY_ENV_VAR}")
            return sync_rest(
                self._writable("sync"),
                supabase_url,
                key,
                full=full,
                dry_run=dry_run,
                notify=notify,
            )
        con = self._writable("sync")
        from warehouse.sync.dsn import resolve_dsn
        from warehouse.sync.postgres import sync_direct

        return sync_direct(con, resolve_dsn(dsn), full=full, dry_run=dry_run)

    def audit(
        self,
        train: str,
        testset: str,
        options: AuditOptions | None = None,
        *,
        execution: Execution | None = None,
        force: bool = False,
        progress: Callable[[int, int], None] | None = None,
        notify: Callable[[str], None] | None = None,
    ) -> AuditResult:
        """The exposure of every segment of `testset` to the training corpus `train`, configured
        by `options` (unset choices from the settings, else defaults) and run as `execution`
        says; an identical stored audit is reused unless `force` (docs/exposure.md)."""
        from warehouse.exposure.audit import run_audit
        from warehouse.exposure.config import AuditOptions
        from warehouse.exposure.execution import LOCAL

        con = self._writable("audit")
        return run_audit(
            con,
            train,
            testset,
            (options or AuditOptions()).resolve(con, train_name=train, test_name=testset),
            execution or LOCAL,
            force=force,
            progress=progress,
            notify=notify,
        )

    def tm_hypotheses(self, audit_id: str) -> list[str]:
        """The translation-memory hypothesis of every segment of an audit's test set, in order
        (the target of its source's nearest training neighbour)."""
        from warehouse.exposure.summary import tm_hypotheses

        return tm_hypotheses(self.con, audit_id)

    def build_index(
        self,
        train: str,
        options: AuditOptions | None = None,
        *,
        shard_rows: int | None = None,
        threads: int | None = None,
        force: bool = False,
        notify: Notify | None = None,
    ) -> BuildResult:
        """Build and store beside the warehouse the index of training corpus `train` for the
        gram orders and normalisation of `options` (every shard with `shard_rows`)."""
        from warehouse.exposure.config import AuditOptions
        from warehouse.exposure.index.stored import build_stored_index
        from warehouse.store.corpora import get_corpus

        corpus = get_corpus(self.con, train, "train")
        return build_stored_index(
            self.con,
            corpus,
            (options or AuditOptions()).resolve(self.con),
            shard_rows=shard_rows,
            threads=threads,
            force=force,
            progress=notify or (lambda _m: None),
        )

    def stored_indexes(self, *, verify: bool = True) -> list[StoredIndex]:
        """The index files stored beside the warehouse, each checked (whole, or its header)."""
        from warehouse.exposure.index.stored import list_stored_indexes

        return list_stored_indexes(self.con, verify=verify)

    def drop_indexes(
        self,
        *,
        train: str | None = None,
        key: str | None = None,
        stale: bool = False,
        everything: bool = False,
    ) -> list[StoredIndex]:
        """Delete stored index files: of training corpus `train`, with `key`, those no audit
        can use (`stale`), or all (`everything`); the dropped ones."""
        from warehouse.exposure.index.stored import drop_stored_indexes
        from warehouse.store.corpora import get_corpus

        corpus = get_corpus(self.con, train, "train") if train is not None else None
        return drop_stored_indexes(
            self.con, train=corpus, key=key, stale=stale, everything=everything
        )

    def dashboard(
        self,
        out: str | Path,
        *,
        compare: Sequence[tuple[str, str]] = (),
        notify: Notify | None = None,
        runs: RunFilter | None = None,
    ) -> DashboardResult:
        """Build (or bring up to date) the static dashboard of the whole warehouse in folder
        `out`, with a comparison page for each pair of runs in `compare` (docs/html.md)."""
        from warehouse.html.build_state import dashboard_state, unchanged_dashboard
        from warehouse.store.content_state import content_state

        state = dashboard_state(content_state(self.con), compare, runs.key() if runs else "")
        done = unchanged_dashboard(out, state)
        if done is not None:
            return done
        from warehouse.analysis.pages import site_data
        from warehouse.html.dashboard import build_dashboard, check_site_folder

        check_site_folder(out)  # before the data is read
        data = site_data(self.con, list(compare), runs)
        return build_dashboard(data, out, notify=notify, state=state)

    def report_html(
        self,
        run: str,
        path: str | Path,
        *,
        train: str | None = None,
        testset: str | None = None,
        bin_by: str | None = None,
    ) -> ReportFile:
        """Write one run's report as a self-contained HTML page to `path` (left alone when it
        already holds this page)."""
        from warehouse.analysis.pages import run_page_data
        from warehouse.html.report_file import write_report_html

        page = run_page_data(self.con, run, train=train, testset=testset, bin_by=bin_by)
        return write_report_html(page, path)

    def ingest(
        self,
        *,
        testset: str,
        hyp: str | Path,
        model_slug: str,
        condition: str | None = None,
        run_card: str | Path | None = None,
        replace: bool = False,
    ) -> IngestResult:
        """Score a hypothesis file against a registered test set and store the run (with
        bootstrap intervals at the warehouse's settings)."""
        from warehouse.ingest.prepare import prepare_from_files
        from warehouse.ingest.write import write_runs
        from warehouse.stats.resample import bootstrap_settings

        con = self._writable("ingest")
        run = prepare_from_files(
            con,
            testset=testset,
            hyp_path=hyp,
            model_slug=model_slug,
            condition=condition,
            run_card_path=run_card,
            ci=bootstrap_settings(con, None, None, None),
        )
        [result] = write_runs(con, [run], replace=replace)
        return result

    def rescore(
        self,
        runs: Sequence[str] = (),
        *,
        every: bool = False,
        testset: str | None = None,
        options: Mapping[str, Any] | None = None,
        metrics: Sequence[str] = (),
        intervals: bool = True,
        n_bootstrap: int | None = None,
        alpha: float | None = None,
        seed: int | None = None,
        notify: Notify | None = None,
    ) -> list[RescoreResult]:
        """Score stored runs (named, or `every` run as ingested, of `testset` when given) again
        from their stored hypotheses, each under its own metric options changed by `options`
        (`tokenize`, `lowercase`, `chrf_word_order`, `ter`) and with the metric plugins
        `metrics`; each result is stored beside its run as the run a fresh ingest with those
        options and plugins would store (docs/metrics.md)."""
        from warehouse.ingest.rescore import rescore_runs, rescore_targets
        from warehouse.metrics.plugins import load_plugin, plugin_timeout
        from warehouse.stats.resample import bootstrap_settings
        from warehouse.store.settings import read_settings

        con = self._writable("rescore")
        timeout = plugin_timeout(read_settings(con))
        plugins = [load_plugin(name, timeout) for name in dict.fromkeys(metrics)]
        targets = rescore_targets(con, runs, every=every, testset=testset)
        ci = bootstrap_settings(con, n_bootstrap, alpha, seed) if intervals else None
        return rescore_runs(con, targets, dict(options or {}), plugins=plugins, bootstrap=ci,
                            notify=notify)  # fmt: skip

    # --- Human judgments ---------------------------------------------------------------------

    def add_human(
        self,
        path: str | Path,
        *,
        testset: str,
        format: str = "mqm-tsv",
        name: str | None = None,
        system_map: Mapping[str, str] | None = None,
        skip_systems: Sequence[str] = (),
        replace: bool = False,
        strict: bool = False,
        seg_id_base: int | None = None,
    ) -> HumanSetResult:
        """Store a file of human judgments (MQM, ESA, DA) on the runs of a test set; the same
        file again changes nothing; repeated error lines are stored once (refused when
        `strict`); with `seg_id_base`, the file's id k judges line k - base (docs/human.md)."""
        from warehouse.inputs.human_files import read_human_file
        from warehouse.store.human import add_human_set

        human = read_human_file(path, format, name=name, strict=strict)
        return add_human_set(self._writable("add_human"), human, testset,
                             system_map=system_map, skip=skip_systems, replace=replace,
                             seg_id_base=seg_id_base)  # fmt: skip

    def human_sets(self, testset: str | None = None) -> list[dict[str, Any]]:
        """The stored judgment sets (of one test set when given)."""
        from warehouse.store.human import list_human_sets

        return list_human_sets(self.con, testset)

    def ingest_annotated(
        self,
        path: str | Path,
        *,
        testset: str,
        reference_system: str,
        format: str = "mqm-tsv",
        src_lang: str | None = None,
        tgt_lang: str | None = None,
        options: MetricOptions | None = None,
        intervals: bool = True,
        n_bootstrap: int | None = None,
        alpha: float | None = None,
        seed: int | None = None,
        replace: bool = False,
        strict: bool = False,
    ) -> AnnotatedIngest:
        """A test set, one run per system and their judgments from one annotation file, with
        `reference_system`'s translations as the reference; repeated error lines are stored
        once (refused when `strict`) (docs/human.md)."""
        from warehouse.ingest.human import ingest_annotated, prepare_annotated
        from warehouse.inputs.human_files import read_human_file
        from warehouse.metrics.options import DEFAULT_OPTIONS
        from warehouse.stats.resample import bootstrap_settings

        human = read_human_file(path, format, strict=strict)
        con = self._writable("ingest")
        ci = bootstrap_settings(con, n_bootstrap, alpha, seed) if intervals else None
        data, runs = prepare_annotated(human, testset=testset, reference_system=reference_system,
                                       src_lang=src_lang, tgt_lang=tgt_lang, ci=ci,
                                       options=options or DEFAULT_OPTIONS)  # fmt: skip
        return ingest_annotated(con, human, data, runs, reference_system=reference_system,
                                replace=replace)  # fmt: skip

    def meta(
        self,
        testset: str,
        *,
        human: str | None = None,
        metrics: Sequence[str] = (),
        train: str | None = None,
        bin_name: str | None = None,
        n_bootstrap: int | None = None,
        alpha: float | None = None,
        seed: int | None = None,
    ) -> MetaReport:
        """How each metric agrees with the human judgments of a test set: system level
        (Pearson, Kendall tau-b, pairwise accuracy, with bootstrap intervals) and segment level
        (Kendall tau-b pooled and per system, acc*_eq), overall and per exposure bin."""
        from warehouse.analysis.meta import metric_human_agreement
        from warehouse.stats.resample import bootstrap_settings

        return metric_human_agreement(
            self.con, testset, human=human, metrics=metrics, train=train, only_bin=bin_name,
            settings=bootstrap_settings(self.con, n_bootstrap, alpha, seed),
        )  # fmt: skip

    def export(
        self,
        runs: Sequence[str] = (),
        *,
        testset: str | None = None,
        format: str = "jsonl",
        path: str | Path | None = None,
    ) -> tuple[ExportResult, bytes | None]:
        """Write runs (named, or every run of `testset`) as records other tools read: one per
        run and segment with text, per-segment scores, per-entry metrics and exposure; with no
        `path`, the JSON Lines or TSV bytes are returned; `lm-eval`: a folder of harness sample
        logs, one per run."""
        from warehouse.analysis.export import (
            ExportResult,
            export_run_ids,
            export_table,
            write_export,
            write_lm_eval,
        )

        run_ids = export_run_ids(self.con, runs, testset)
        table = export_table(self.con, run_ids)
        if format == "lm-eval":
            if path is None:
                raise UsageError("--format lm-eval writes a folder per model: give --out DIR")
            files = write_lm_eval(self.con, table, path)
            return ExportResult(str(path), format, run_ids, table.num_rows, files), None
        data = write_export(table, format, path)
        return ExportResult(None if path is None else str(path), format, run_ids,
                            table.num_rows), data  # fmt: skip
