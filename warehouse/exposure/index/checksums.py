"""The checksum that names the index behind an audit's numbers in its signature
(`|index:xxh3:<16 hex>`; docs/exposure.md, "Identity and signature")."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from warehouse.exposure.index.retrieval import SearchIndex
from warehouse.native import RetrievalIndex


@runtime_checkable
class Checksummed(Protocol):
    """An index made of shards, each with its checksum."""

    def checksums(self) -> list[int]:
        """Each shard's checksum, in corpus order."""


def checksum_text(checksums: Sequence[int]) -> str:
    """One checksum naming every shard an audit read (sides in order, shards in corpus order)."""
    digest = hashlib.sha256()
    for value in checksums:
        digest.update(value.to_bytes(8, "little"))
    return digest.hexdigest()[:16]


def index_checksum(index: SearchIndex) -> str:
    """The checksum naming a search index: one file, shards, a Ray cluster's shards or MinHash."""
    if isinstance(index, RetrievalIndex):
        return checksum_text([index.checksum()])
    if isinstance(index, Checksummed):
        return checksum_text(index.checksums())
    raise TypeError(f"{type(index).__name__} names no checksum")
