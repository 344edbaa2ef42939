"""tame-wh: the training-aware MT evaluation warehouse (Python core).

`Warehouse.open(address)` is the one handle a script or notebook needs (docs/python.md); its
methods return the result types below. The subpackages hold the pipeline's stages.
"""

from __future__ import annotations

import importlib
from importlib import metadata
from typing import TYPE_CHECKING, Any

try:
    __version__: str = metadata.version("tame-wh")
except metadata.PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"

if TYPE_CHECKING:
    from warehouse.analysis.clusters import ClusterRequest as ClusterRequest
    from warehouse.analysis.compare import Comparison as Comparison
    from warehouse.analysis.query import QueryResult as QueryResult
    from warehouse.analysis.regressions import RegressionReport as RegressionReport
    from warehouse.analysis.replicates import ReplicateGroup as ReplicateGroup
    from warehouse.analysis.runs import Deletion as Deletion
    from warehouse.analysis.runs import RunSummary as RunSummary
    from warehouse.errors import AfterCommitError as AfterCommitError
    from warehouse.errors import RemoteError as RemoteError
    from warehouse.errors import SchemaError as SchemaError
    from warehouse.errors import UsageError as UsageError
    from warehouse.errors import WarehouseError as WarehouseError
    from warehouse.exposure.config import AuditOptions as AuditOptions
    from warehouse.exposure.execution import Execution as Execution
    from warehouse.exposure.normalize import NormalizationConfig as NormalizationConfig
    from warehouse.exposure.summary import AuditResult as AuditResult
    from warehouse.handle import Access as Access
    from warehouse.handle import Rows as Rows
    from warehouse.handle import Warehouse as Warehouse
    from warehouse.ingest.runs import IngestResult as IngestResult
    from warehouse.stats.clusters import Board as Board
    from warehouse.store.corpora import AddResult as AddResult
    from warehouse.store.corpora import CorpusDeletion as CorpusDeletion
    from warehouse.store.corpora import CorpusInfo as CorpusInfo
    from warehouse.sync.postgres import SyncReport as SyncReport

# The public names and their home modules: each is imported on first use (every command imports
# this package first, and most need few of them).
_HOMES = {
    "Warehouse": "warehouse.handle",
    "Rows": "warehouse.handle",
    "Access": "warehouse.handle",
    "WarehouseError": "warehouse.errors",
    "UsageError": "warehouse.errors",
    "SchemaError": "warehouse.errors",
    "RemoteError": "warehouse.errors",
    "AfterCommitError": "warehouse.errors",
    "AddResult": "warehouse.store.corpora",
    "CorpusInfo": "warehouse.store.corpora",
    "CorpusDeletion": "warehouse.store.corpora",
    "AuditOptions": "warehouse.exposure.config",
    "Execution": "warehouse.exposure.execution",
    "NormalizationConfig": "warehouse.exposure.normalize",
    "AuditResult": "warehouse.exposure.summary",
    "IngestResult": "warehouse.ingest.runs",
    "RunSummary": "warehouse.analysis.runs",
    "Deletion": "warehouse.analysis.runs",
    "Comparison": "warehouse.analysis.compare",
    "ClusterRequest": "warehouse.analysis.clusters",
    "Board": "warehouse.stats.clusters",
    "RegressionReport": "warehouse.analysis.regressions",
    "ReplicateGroup": "warehouse.analysis.replicates",
    "QueryResult": "warehouse.analysis.query",
    "SyncReport": "warehouse.sync.postgres",
}

__all__ = ["__version__", *_HOMES]


def __getattr__(name: str) -> Any:
    """A public name, imported from its home on first use."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'warehouse' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value
