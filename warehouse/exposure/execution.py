"""Where and how an audit's search runs: threads, memory, shards, executor, the stored index.
None of it changes an audit's numbers, id or signature (docs/exposure.md)."""

from __future__ import annotations

from dataclasses import dataclass

from warehouse.errors import UsageError

EXECUTORS = ("local", "ray")


@dataclass(frozen=True)
class Execution:
    """How an audit runs: `threads` (default all cores), `memory_limit` in bytes (the index
    searched in shards that fit), `shard_rows` (shards of that many rows), `executor` ("local"
    or "ray", one task per shard on the cluster at `ray_address`, default `$RAY_ADDRESS`), and
    `store_index` (store an index the audit builds; None follows the `index.store` setting)."""

    threads: int | None = None
    memory_limit: int | None = None
    shard_rows: int | None = None
    executor: str = "local"
    ray_address: str | None = None
    store_index: bool | None = None

    def __post_init__(self) -> None:
        if self.executor not in EXECUTORS:
            raise UsageError(
                f"--executor: expected one of {', '.join(EXECUTORS)}, got {self.executor!r}"
            )
        if self.executor == "ray" and self.memory_limit is not None:
            raise UsageError("--memory-limit applies to the local executor only")
        if self.memory_limit is not None and self.shard_rows is not None:
            raise UsageError("--memory-limit chooses the shard size itself: leave out --shard-rows")

    @property
    def on_cluster(self) -> bool:
        """Whether the search runs as tasks on a Ray cluster."""
        return self.executor == "ray"


LOCAL = Execution()
