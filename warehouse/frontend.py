"""What a front end offers around the `Warehouse` handle: the vocabularies, defaults and parsers
of its options (metric labels, tokenizers, significance methods, exposure bins, limits,
environment variables) and the guards of one command's process (a lake's attach started ahead,
its watchdog, the clean-up after a write that ran out of disk). The CLI imports from here and
from the package's front, and from nowhere else in `warehouse`.

Each name is imported from its home on first use, so a command loads only what it needs."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from warehouse.analysis.clusters import CLUSTER_SORT_KEYS as CLUSTER_SORT_KEYS
    from warehouse.analysis.compare import is_report_file as is_report_file
    from warehouse.analysis.compare import run_letters as run_letters
    from warehouse.analysis.export import EXPORT_FORMATS as EXPORT_FORMATS
    from warehouse.analysis.leaderboard import TRAIN_RULE as TRAIN_RULE
    from warehouse.analysis.meta import STATISTIC_LABELS as STATISTIC_LABELS
    from warehouse.analysis.meta import Agreement as Agreement
    from warehouse.analysis.query import DEFAULT_MEMORY_MB as DEFAULT_MEMORY_MB
    from warehouse.analysis.query import DEFAULT_TIMEOUT as DEFAULT_TIMEOUT
    from warehouse.analysis.query import parse_memory_limit as parse_memory_limit
    from warehouse.analysis.regressions import DEFAULT_AGAINST as DEFAULT_AGAINST
    from warehouse.analysis.regressions import check_against as check_against
    from warehouse.analysis.runs import RunFilter as RunFilter
    from warehouse.analysis.runs import parse_tag_filters as parse_tag_filters
    from warehouse.analysis.runs import parse_tags as parse_tags
    from warehouse.basics import first_line as first_line
    from warehouse.basics import grouped as grouped
    from warehouse.basics import redact as redact
    from warehouse.basics import remember_secrets as remember_secrets
    from warehouse.errors import MissingWarehouseError as MissingWarehouseError
    from warehouse.exposure.config import DEFAULT_ORDERS as DEFAULT_ORDERS
    from warehouse.exposure.config import DEFAULT_RARE_GRAMS as DEFAULT_RARE_GRAMS
    from warehouse.exposure.config import DEFAULT_SHORTLIST as DEFAULT_SHORTLIST
    from warehouse.exposure.config import EXPOSURE_BINS as EXPOSURE_BINS
    from warehouse.exposure.config import MEASURES as MEASURES
    from warehouse.exposure.config import MODES as MODES
    from warehouse.exposure.config import SIDES as SIDES
    from warehouse.exposure.config import TM_ZERO_POLICIES as TM_ZERO_POLICIES
    from warehouse.exposure.config import binned_side as binned_side
    from warehouse.exposure.execution import EXECUTORS as EXECUTORS
    from warehouse.exposure.index.stored import StoredIndex as StoredIndex
    from warehouse.html.markdown import comparison_markdown as comparison_markdown
    from warehouse.html.markdown import leaderboard_markdown as leaderboard_markdown
    from warehouse.html.markdown import regressions_markdown as regressions_markdown
    from warehouse.html.markdown import replicates_markdown as replicates_markdown
    from warehouse.ingest.batch import IngestRequest as IngestRequest
    from warehouse.inputs.corpus_files import TEXT_FORMATS as TEXT_FORMATS
    from warehouse.inputs.corpus_files import CorpusData as CorpusData
    from warehouse.inputs.corpus_files import read_test_set as read_test_set
    from warehouse.inputs.corpus_files import read_test_set_table as read_test_set_table
    from warehouse.inputs.corpus_files import read_text_corpus as read_text_corpus
    from warehouse.inputs.corpus_files import read_training_corpus as read_training_corpus
    from warehouse.inputs.foreign import FOREIGN_FORMATS as FOREIGN_FORMATS
    from warehouse.inputs.foreign import Columns as Columns
    from warehouse.inputs.foreign import parse_metric_columns as parse_metric_columns
    from warehouse.inputs.human_files import HUMAN_FORMATS as HUMAN_FORMATS
    from warehouse.inputs.tables import TABLE_FORMATS as TABLE_FORMATS
    from warehouse.metrics.options import TOKENIZERS as TOKENIZERS
    from warehouse.metrics.options import MetricOptions as MetricOptions
    from warehouse.metrics.registry import HUMAN_METRICS as HUMAN_METRICS
    from warehouse.metrics.registry import SORT_KEYS as SORT_KEYS
    from warehouse.metrics.registry import format_score as format_score
    from warehouse.metrics.registry import label as label
    from warehouse.metrics.registry import on_percent_scale as on_percent_scale
    from warehouse.sizes import parse_size as parse_size
    from warehouse.stats.clusters import CORRECTIONS as CORRECTIONS
    from warehouse.stats.gate import GATE_RULE as GATE_RULE
    from warehouse.stats.limits import GATE_CORRECTIONS as GATE_CORRECTIONS
    from warehouse.stats.limits import MAX_RESAMPLES as MAX_RESAMPLES
    from warehouse.stats.significance import METHODS as METHODS
    from warehouse.stats.significance import PairTest as PairTest
    from warehouse.store.address import DATA_PATH_ENV_VAR as DATA_PATH_ENV_VAR
    from warehouse.store.address import DB_ENV_VAR as DB_ENV_VAR
    from warehouse.store.address import Address as Address
    from warehouse.store.address import LakeAddress as LakeAddress
    from warehouse.store.address import is_lake as is_lake
    from warehouse.store.address import parse_address as parse_address
    from warehouse.store.connection import DEFAULT_LOCK_TIMEOUT as DEFAULT_LOCK_TIMEOUT
    from warehouse.store.connection import file_size as file_size
    from warehouse.store.connection import is_disk_full as is_disk_full
    from warehouse.store.connection import is_interrupt as is_interrupt
    from warehouse.store.connection import reclaim_after_failed_write as reclaim_after_failed_write
    from warehouse.store.connection import warehouse_exists as warehouse_exists
    from warehouse.store.doctor import DOCTOR_LOCK_TIMEOUT as DOCTOR_LOCK_TIMEOUT
    from warehouse.store.doctor import catalog_privileges_text as catalog_privileges_text
    from warehouse.store.doctor import healthy as healthy
    from warehouse.store.human import parse_system_map as parse_system_map
    from warehouse.store.interrupt import interrupt_requested as interrupt_requested
    from warehouse.store.interrupt import interrupted_message as interrupted_message
    from warehouse.store.interrupt import stop_raising_interrupts as stop_raising_interrupts
    from warehouse.store.interrupt import watch_interrupts as watch_interrupts
    from warehouse.store.lake import AsOf as AsOf
    from warehouse.store.lake import attach_ahead as attach_ahead
    from warehouse.store.lake import drop_ahead as drop_ahead
    from warehouse.store.lake import parse_as_of as parse_as_of
    from warehouse.store.maintain import DEFAULT_GRACE_HOURS as DEFAULT_GRACE_HOURS
    from warehouse.store.maintain import DEFAULT_KEEP_DAYS as DEFAULT_KEEP_DAYS
    from warehouse.store.remote import Watchdog as Watchdog
    from warehouse.store.remote import exit_4_on_abort as exit_4_on_abort
    from warehouse.store.remote import lake_timeout as lake_timeout
    from warehouse.store.remote import remote_failure as remote_failure
    from warehouse.sync.dsn import DSN_ENV_VAR as DSN_ENV_VAR
    from warehouse.sync.rest import KEY_ENV_VAR as KEY_ENV_VAR

# Each name's home module.
_HOMES = {
    "Address": "warehouse.store.address",
    "AsOf": "warehouse.store.lake",
    "CLUSTER_SORT_KEYS": "warehouse.analysis.clusters",
    "CORRECTIONS": "warehouse.stats.clusters",
    "GATE_CORRECTIONS": "warehouse.stats.limits",
    "GATE_RULE": "warehouse.stats.gate",
    "CorpusData": "warehouse.inputs.corpus_files",
    "DATA_PATH_ENV_VAR": "warehouse.store.address",
    "DB_ENV_VAR": "warehouse.store.address",
    "DEFAULT_GRACE_HOURS": "warehouse.store.maintain",
    "DEFAULT_KEEP_DAYS": "warehouse.store.maintain",
    "DEFAULT_LOCK_TIMEOUT": "warehouse.store.connection",
    "DEFAULT_AGAINST": "warehouse.analysis.regressions",
    "DEFAULT_MEMORY_MB": "warehouse.analysis.query",
    "comparison_markdown": "warehouse.html.markdown",
    "leaderboard_markdown": "warehouse.html.markdown",
    "regressions_markdown": "warehouse.html.markdown",
    "replicates_markdown": "warehouse.html.markdown",
    "DEFAULT_ORDERS": "warehouse.exposure.config",
    "EXPOSURE_BINS": "warehouse.exposure.config",
    "DEFAULT_RARE_GRAMS": "warehouse.exposure.config",
    "DEFAULT_SHORTLIST": "warehouse.exposure.config",
    "EXECUTORS": "warehouse.exposure.execution",
    "MEASURES": "warehouse.exposure.config",
    "SIDES": "warehouse.exposure.config",
    "binned_side": "warehouse.exposure.config",
    "MODES": "warehouse.exposure.config",
    "TM_ZERO_POLICIES": "warehouse.exposure.config",
    "parse_size": "warehouse.sizes",
    "StoredIndex": "warehouse.exposure.index.stored",
    "DEFAULT_TIMEOUT": "warehouse.analysis.query",
    "DOCTOR_LOCK_TIMEOUT": "warehouse.store.doctor",
    "DSN_ENV_VAR": "warehouse.sync.dsn",
    "IngestRequest": "warehouse.ingest.batch",
    "KEY_ENV_VAR": "warehouse.sync.rest",
    "LakeAddress": "warehouse.store.address",
    "MAX_RESAMPLES": "warehouse.stats.limits",
    "METHODS": "warehouse.stats.significance",
    "MetricOptions": "warehouse.metrics.options",
    "PairTest": "warehouse.stats.significance",
    "SORT_KEYS": "warehouse.metrics.registry",
    "HUMAN_METRICS": "warehouse.metrics.registry",
    "TOKENIZERS": "warehouse.metrics.options",
    "TRAIN_RULE": "warehouse.analysis.leaderboard",
    "Watchdog": "warehouse.store.remote",
    "exit_4_on_abort": "warehouse.store.remote",
    "attach_ahead": "warehouse.store.lake",
    "catalog_privileges_text": "warehouse.store.doctor",
    "drop_ahead": "warehouse.store.lake",
    "file_size": "warehouse.store.connection",
    "first_line": "warehouse.basics",
    "check_against": "warehouse.analysis.regressions",
    "MissingWarehouseError": "warehouse.errors",
    "grouped": "warehouse.basics",
    "redact": "warehouse.basics",
    "remember_secrets": "warehouse.basics",
    "healthy": "warehouse.store.doctor",
    "watch_interrupts": "warehouse.store.interrupt",
    "HUMAN_FORMATS": "warehouse.inputs.human_files",
    "EXPORT_FORMATS": "warehouse.analysis.export",
    "STATISTIC_LABELS": "warehouse.analysis.meta",
    "Agreement": "warehouse.analysis.meta",
    "parse_system_map": "warehouse.store.human",
    "interrupt_requested": "warehouse.store.interrupt",
    "interrupted_message": "warehouse.store.interrupt",
    "stop_raising_interrupts": "warehouse.store.interrupt",
    "is_disk_full": "warehouse.store.connection",
    "is_interrupt": "warehouse.store.connection",
    "is_lake": "warehouse.store.address",
    "is_report_file": "warehouse.analysis.compare",
    "label": "warehouse.metrics.registry",
    "format_score": "warehouse.metrics.registry",
    "lake_timeout": "warehouse.store.remote",
    "on_percent_scale": "warehouse.metrics.registry",
    "parse_address": "warehouse.store.address",
    "parse_as_of": "warehouse.store.lake",
    "parse_memory_limit": "warehouse.analysis.query",
    "parse_tags": "warehouse.analysis.runs",
    "RunFilter": "warehouse.analysis.runs",
    "parse_tag_filters": "warehouse.analysis.runs",
    "read_test_set": "warehouse.inputs.corpus_files",
    "read_test_set_table": "warehouse.inputs.corpus_files",
    "TABLE_FORMATS": "warehouse.inputs.tables",
    "FOREIGN_FORMATS": "warehouse.inputs.foreign",
    "Columns": "warehouse.inputs.foreign",
    "parse_metric_columns": "warehouse.inputs.foreign",
    "read_training_corpus": "warehouse.inputs.corpus_files",
    "read_text_corpus": "warehouse.inputs.corpus_files",
    "TEXT_FORMATS": "warehouse.inputs.corpus_files",
    "reclaim_after_failed_write": "warehouse.store.connection",
    "warehouse_exists": "warehouse.store.connection",
    "remote_failure": "warehouse.store.remote",
    "run_letters": "warehouse.analysis.compare",
}

__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    """A name of `__all__`, imported from its home on first use."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value
