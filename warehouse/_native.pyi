"""Types of the compiled extension `warehouse._native` (the PyO3 bindings in native/src/python/).

Tuning values are required arguments: their defaults live in Python (`warehouse.exposure.config`,
`warehouse.metrics.cyzil`). Every error the native code reports (a value, a shape, a kernel's
error) is a ValueError (a stored index that cannot be used: its subclass IndexFileError); an
argument of the wrong type raises TypeError, as usual.

Searches return their columns as `bytes` in Arrow's memory layout, one row per query: float64 and
int64/int32 values native-endian, booleans and validity as LSB-first bitmaps (bit `i % 8` of
byte `i // 8`; `ceil(n / 8)` bytes). A value whose validity bit is clear (no training row shares
a gram with the query, or no reference reached the target hit) is stored as 0.
"""

from collections.abc import Sequence
from os import PathLike
from typing import Literal, Protocol, TypedDict, final

import numpy as np
import numpy.typing as npt

__version__: str

class SearchLike(Protocol):
    """How a search runs (`warehouse.exposure.config.SearchSettings`): read by attribute."""

    @property
    def mode(self) -> Literal["exact", "fast"]: ...
    @property
    def rare_grams(self) -> int: ...
    @property
    def shortlist(self) -> int: ...
    @property
    def measure(self) -> Literal["jaccard", "containment"]: ...

# cyzil-compatible BLEU and edit distance (float32 results widened to floats).

def bleu_sentence(
    reference: Sequence[str], candidate: Sequence[str], max_ngram: int
) -> list[float]:
    """cyzil sentence BLEU: [precision, brevity penalty, bleu]."""

def bleu_corpus(
    references: Sequence[Sequence[str]], candidates: Sequence[Sequence[str]], max_ngram: int
) -> list[float]:
    """cyzil corpus BLEU: [precision, brevity penalty, bleu]."""

def bleu_points(
    references: Sequence[Sequence[str]], candidates: Sequence[Sequence[str]], max_ngram: int
) -> list[list[float]]:
    """cyzil sentence BLEU of every pair."""

def edit_distance_sentence(a: Sequence[str], b: Sequence[str]) -> int:
    """Token-level Levenshtein distance."""

def edit_distance_corpus(
    references: Sequence[Sequence[str]], candidates: Sequence[Sequence[str]]
) -> list[float]:
    """cyzil corpus edit distance: mean of [distance, distance / len(reference)]."""

def edit_distance_points(
    references: Sequence[Sequence[str]], candidates: Sequence[Sequence[str]]
) -> list[list[float]]:
    """cyzil [distance, distance / len(reference)] of every pair."""

# sacrebleu-identical surface statistics.

def surface_stats(
    hyps: Sequence[str], refs: Sequence[Sequence[str]]
) -> tuple[list[list[int]], list[list[int]], list[float]]:
    """BLEU (13a) statistics, chrF++ statistics and chrF++ sentence score of every segment."""

def ter_stats(hyps: Sequence[str], refs: Sequence[Sequence[str | None]]) -> list[list[float]]:
    """TER statistics [edits, average reference length] of every segment, equal to sacrebleu's
    `TER()._extract_corpus_statistics` (default settings: lowercased by Python's `str.lower`).
    None references are skipped; a segment without any other is a ValueError."""

def side_similarities(
    test: Sequence[str], sources: Sequence[str], targets: Sequence[str]
) -> tuple[float, float]:
    """Cosine similarity of the test texts' character-trigram count profile (each text padded
    with a space on each side; texts lowercased by the caller) to the sources' and the targets'."""

# Bootstrap resampling. The arrays are exact numpy.ndarrays, two-dimensional and C-contiguous,
# read and written in place: `out` (shape (n_resamples, n_cols), writable, sharing no memory with
# the inputs) receives `stats[indices[r]].sum(axis=0)` for each resample r.

def resample_sums_i64(
    stats: npt.NDArray[np.int64], indices: npt.NDArray[np.int64], out: npt.NDArray[np.int64]
) -> None:
    """Per-resample sums of int64 statistic rows."""

def resample_sums_f64(
    stats: npt.NDArray[np.float64], indices: npt.NDArray[np.int64], out: npt.NDArray[np.float64]
) -> None:
    """Per-resample sums of float64 statistic rows, added in index order."""

# Exposure retrieval.

INDEX_FORMAT_VERSION: int
"""Version of the stored-index file layout (part of every stored index's key)."""

class IndexFileError(ValueError):
    """A stored index file that cannot be used (missing, truncated, corrupted, foreign, or stored
    under another key), or that cannot be written."""

class StoredIndexInfo(TypedDict):
    """What a stored index's header says: its key, the metadata stored with it, its format
    version and its length in bytes."""

    key: bytes
    meta: bytes
    format_version: int
    bytes: int

def stored_index_info(path: str | PathLike[str]) -> StoredIndexInfo:
    """The header and metadata of a stored index (both checked by their checksums), without
    reading the rest of the file."""

def exit_on_abort(message: str, code: int) -> None:
    """From now on, an abort of this process (SIGABRT) writes `message` to stderr and exits
    with `code` (the first message given stays)."""

def search_kernel() -> Literal["avx512", "avx2", "portable"]:
    """The kernel the exact search counts with on this CPU (all give the same counts)."""

class SearchStats(TypedDict):
    """Work counters of one batch of searches."""

    postings_visited: int
    postings_total: int
    candidates_verified: int
    searches_counted: int
    pairs_counted: int

class HitBuffers(TypedDict):
    """One side's nearest training rows: `exposure` float64 and the exact ratio behind it, `num`
    over `den` (uint64, not reduced; 0/1 without a hit, 1/1 for an exact match), `nn` int64 with
    its validity bitmap `nn_valid`, `exact` a bitmap."""

    exposure: bytes
    num: bytes
    den: bytes
    nn: bytes
    nn_valid: bytes
    exact: bytes

class TargetHitBuffers(HitBuffers):
    """Target hits with the reference that reached them: `ref_idx` int32 and `ref_idx_valid`."""

    ref_idx: bytes
    ref_idx_valid: bytes

class AuditBuffers(TypedDict):
    """`RetrievalIndex.audit`: the three sides of each segment and the work counters."""

    source: HitBuffers
    target: TargetHitBuffers
    pair: HitBuffers
    stats: SearchStats

class SourceSearch(HitBuffers):
    """`RetrievalIndex.search_source`: source hits and the work counters."""

    stats: SearchStats

class TargetSearch(TargetHitBuffers):
    """`RetrievalIndex.search_target`: target hits and the work counters."""

    stats: SearchStats

@final
class RetrievalIndex:
    """N-gram index over aligned, normalised training sources and targets."""

    def __new__(
        cls,
        sources: Sequence[str],
        targets: Sequence[str],
        orders: Sequence[int],
        threads: int | None = None,
        dense_min_df: int | None = None,
    ) -> RetrievalIndex: ...
    @staticmethod
    def from_joined(
        sources: str | bytes,
        targets: str | bytes,
        rows: int,
        orders: Sequence[int],
        threads: int | None = None,
        dense_min_df: int | None = None,
    ) -> RetrievalIndex:
        """Index of `rows` pairs given as two newline-joined strings (`str`, or UTF-8 `bytes`)
        of normalised texts."""

    def save(self, path: str | PathLike[str], key: bytes, meta: bytes) -> int:
        """Store the index at `path` under `key` with `meta` (a temporary file renamed into
        place); returns the file's length in bytes."""

    @staticmethod
    def load(path: str | PathLike[str], key: bytes) -> RetrievalIndex:
        """The index stored at `path` under `key`, memory-mapped after every checksum is
        checked."""

    @property
    def n_docs(self) -> int:
        """Number of training rows."""

    @property
    def orders(self) -> list[int]:
        """The n-gram orders (ascending, deduplicated)."""

    def checksum(self) -> int:
        """One xxh3-64 checksum of the index's arrays, the same whether built or loaded."""

    @property
    def heap_bytes(self) -> int:
        """Approximate heap size of the index in bytes."""

    def audit(
        self,
        sources: Sequence[str],
        refs: Sequence[Sequence[str]],
        search: SearchLike,
        threads: int | None = None,
    ) -> AuditBuffers:
        """Source, target and pair exposure of each test segment (normalised texts)."""

    def search_source(
        self,
        queries: Sequence[str],
        search: SearchLike,
        threads: int | None = None,
    ) -> SourceSearch:
        """Source exposure of each query."""

    def search_target(
        self,
        refs: Sequence[Sequence[str]],
        search: SearchLike,
        threads: int | None = None,
    ) -> TargetSearch:
        """Target exposure of each query's references."""

SUFFIX_FORMAT_VERSION: int
MAX_SHARD_BYTES: int

class ShardInfo(TypedDict):
    """`SubstringIndex.build_shard`: the stored file's length, its arrays' xxh3-64 checksum, the
    bytes of text indexed (documents and their end bytes) and the documents."""

    bytes: int
    checksum: int
    text_bytes: int
    docs: int

class LensBuffers(TypedDict):
    """`SubstringIndex.lens`: per segment `chars`, `longest` (characters shared contiguously),
    `start` (its place in the segment), `count` (whole-segment occurrences), all uint64; `doc`
    and `offset` of its first occurrence (int64, valid where `doc_valid`); per word order the
    n-grams `found` and in the segment (`total`), uint64."""

    chars: bytes
    longest: bytes
    start: bytes
    count: bytes
    doc: bytes
    offset: bytes
    doc_valid: bytes
    found: list[bytes]
    total: list[bytes]

class LensHitBuffers(LensBuffers):
    """`SubstringIndex.lens(..., hits=True)`: also per word order `hits`, one byte per n-gram of
    every segment, segment after segment (1 where found)."""

    hits: list[bytes]

@final
class SubstringIndex:
    """Suffix-array shards of a corpus's normalised documents, in corpus order."""

    @staticmethod
    def build_shard(
        docs: str | bytes,
        rows: int,
        path: str | PathLike[str],
        key: bytes,
        threads: int | None = None,
    ) -> ShardInfo:
        """Build the shard of `rows` newline-joined documents and store it at `path`."""

    @staticmethod
    def from_joined(docs: str | bytes, rows: int, threads: int | None = None) -> SubstringIndex:
        """One in-memory shard of `rows` newline-joined documents."""

    @staticmethod
    def open(paths: Sequence[str | PathLike[str]], keys: Sequence[bytes]) -> SubstringIndex:
        """The stored shards at `paths` under `keys`, memory-mapped and verified."""

    @property
    def docs(self) -> int:
        """Documents over all shards."""

    @property
    def text_bytes(self) -> int:
        """Bytes of indexed text over all shards."""

    @property
    def checksums(self) -> list[int]:
        """Each shard's checksum, in corpus order."""

    def lens(
        self,
        segments: str | bytes,
        rows: int,
        orders: Sequence[int],
        threads: int | None = None,
        hits: bool = False,
    ) -> LensBuffers:
        """The substring lens of `rows` newline-joined test segments (with `hits`, which of
        their word n-grams occur, one byte each: `LensHitBuffers`)."""

@final
class MinHashIndex:
    """MinHash signatures and LSH bands over aligned, normalised training sources and targets."""

    @staticmethod
    def from_joined(
        sources: str | bytes,
        targets: str | bytes,
        rows: int,
        orders: Sequence[int],
        bins: int,
        bands: int,
        threads: int | None = None,
    ) -> MinHashIndex:
        """Index of `rows` aligned training pairs given as newline-joined texts."""

    def checksum(self) -> int:
        """One xxh3-64 checksum of the index's signatures and exact texts."""

    @property
    def n_docs(self) -> int:
        """Number of training rows."""

    def audit(
        self,
        sources: Sequence[str],
        refs: Sequence[Sequence[str]],
        search: SearchLike,
        threads: int | None = None,
    ) -> AuditBuffers:
        """Source, target and pair estimates of each test segment (normalised texts)."""
