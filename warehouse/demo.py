"""The bundled example: a toy English-Spanish corpus and test set loaded into a warehouse."""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from warehouse.connection import DEFAULT_LOCK_TIMEOUT, connect
from warehouse.corpora import AddResult, Notify, add_corpus, read_test_set, read_training_corpus
from warehouse.resources import example_dir
from warehouse.schema import SchemaStatus, ensure_schema

DEMO_TRAIN = "demo-train"
DEMO_TEST = "demo-test"


@dataclass
class DemoResult:
    """What the demo did, step by step."""

    db: str
    schema: SchemaStatus
    steps: list[AddResult] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "db": self.db,
            "schema_version": self.schema.after,
            "created": self.schema.created,
            "steps": [step.to_dict() for step in self.steps],
        }


def run_demo(
    db: str | Path, *, lock_timeout: float = DEFAULT_LOCK_TIMEOUT, notify: Notify | None = None
) -> DemoResult:
    """Load the bundled example into the warehouse at `db` (created, or reused)."""
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
    con = connect(db, lock_timeout=lock_timeout)
    try:
        result = DemoResult(str(db), ensure_schema(con, str(db)))
        for data in (train, test):
            step = add_corpus(con, data, replace=True, notify=notify or (lambda _m: None))
            result.steps.append(step)
    finally:
        con.close()
    return result
