"""The bundled example: a toy English-Spanish corpus, test set, three systems and an audit."""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from warehouse.exposure.audit import run_audit
from warehouse.exposure.summary import AuditResult
from warehouse.ingest.prepare import prepare_from_document, prepare_from_files
from warehouse.ingest.runs import IngestResult
from warehouse.ingest.write import write_runs
from warehouse.inputs.corpus_files import read_test_set, read_training_corpus
from warehouse.stats.resample import BootstrapSettings
from warehouse.store.address import LakeAddress
from warehouse.store.connection import DEFAULT_LOCK_TIMEOUT, close_connection, connect
from warehouse.store.corpora import AddResult, Notify, add_corpus
from warehouse.store.resources import example_dir
from warehouse.store.schema import SchemaStatus, ensure_schema

DEMO_TRAIN = "demo-train"
DEMO_TEST = "demo-test"
# Systems given as plain hypothesis files with run cards; the third comes as a test report.
DEMO_PLAIN_SYSTEMS = ("demo-large.zero-shot", "demo-small.zero-shot")
DEMO_REPORTS = ("demo-small.few-shot.report.json",)


@dataclass
class DemoResult:
    """What the demo did, step by step."""

    db: str
    schema: SchemaStatus
    corpora: list[AddResult] = field(default_factory=list)
    runs: list[IngestResult] = field(default_factory=list)
    audit: AuditResult | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "db": self.db,
            "schema_version": self.schema.after,
            "created": self.schema.created,
            "corpora": [step.to_dict() for step in self.corpora],
            "runs": [run.to_dict() for run in self.runs],
            "audit": self.audit.to_dict() if self.audit else None,
        }


def run_demo(
    db: str | Path | LakeAddress,
    *,
    lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
    notify: Notify | None = None,
) -> DemoResult:
    """Load the bundled example into the warehouse at `db` (created, or reused)."""
    say = notify or (lambda _m: None)
    with resources.as_file(example_dir()) as folder:
        train = read_training_corpus(
            DEMO_TRAIN, folder / "train.en", folder / "train.es", "en", "es"
        )
        test = read_test_set(
            DEMO_TEST,
            folder / "test.en",
            [folder / "test.es"],
            folder / "test.meta.jsonl",
            "en",
            "es",
        )
        # One connection throughout (on a lake: one attach, the writers' lock held until the
        # end; the demo is loaded in well under a minute).
        con = connect(db, lock_timeout=lock_timeout)
        try:
            result = DemoResult(str(db), ensure_schema(con, str(db)))
            for data in (train, test):
                result.corpora.append(add_corpus(con, data, replace=True, notify=say))
            prepared = [
                prepare_from_files(
                    con,
                    testset=DEMO_TEST,
                    hyp_path=folder / f"{system}.hyp",
                    model_slug=None,
                    run_card_path=folder / f"{system}.run_card.json",
                    lock_timeout=lock_timeout,
                    ci=BootstrapSettings(),
                )
                for system in DEMO_PLAIN_SYSTEMS
            ]
            prepared += [
                prepare_from_document(folder / name, ci=BootstrapSettings())
                for name in DEMO_REPORTS
            ]
            result.runs = write_runs(con, prepared, notify=say)
            result.audit = run_audit(con, DEMO_TRAIN, DEMO_TEST)
        finally:
            close_connection(con)
    return result
