"""What defines an exposure audit: its configuration, defaults, id and signature.

The definitions are in docs/exposure.md. Defaults live here once; the warehouse's `settings` rows
(`bin.near`, `bin.far`, `leak.low`, `leak.mid`, `leak.high`) override the bin and leak defaults
through `resolve_audit_config`, for the CLI and the Python API alike.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import duckdb

from warehouse import __version__
from warehouse.basics import short_id
from warehouse.errors import UsageError
from warehouse.exposure.normalize import NormalizationConfig
from warehouse.inputs.languages import base_language
from warehouse.metrics.surface import metric_settings
from warehouse.store.corpora import get_corpus
from warehouse.store.settings import read_settings

MODES = ("exact", "fast", "auto")
# How a test text is compared with the training texts (docs/exposure.md, "Measures"): by their
# character grams (Jaccard, containment), or by the longest substring they share.
MEASURES = ("jaccard", "containment", "substring", "minhash")
GRAM_MEASURES = ("jaccard", "containment")
# The substring lens counts which word n-grams of a segment occur in training, for these orders
# (GPT-3's 13-gram overlap, and 8-grams for shorter segments); `substring_lens` has a column pair
# for each.
WORD_ORDERS: tuple[int, ...] = (8, 13)
# The MinHash lens (docs/exposure.md, "MinHash lens"): signatures of this many bins, cut into
# this many bands for locality-sensitive hashing (4 bins each: a pair of Jaccard 0.7 shares a
# band with probability 1 - (1 - 0.7^4)^32, above 0.999; one of 0.5, 0.87; one of 0.3, 0.23).
MINHASH_BINS = 128
MINHASH_BANDS = 32
TM_ZERO_POLICIES = ("empty", "source")
# Which side of the test set an audit searches (docs/exposure.md, "Sides"): the sources, the
# references, or both (then also the pair side).
SIDES = ("both", "source", "target")
# The exposure bins in order (docs/exposure.md, "Bins and thresholds"): an audit uses one of the
# two exact bins, that of the side its bins follow (`target_exact` when it searched the
# references alone).
EXPOSURE_BINS = ("source_exact", "target_exact", "near", "medium", "far")
DEFAULT_ORDERS: tuple[int, ...] = (3, 4, 5)
DEFAULT_RARE_GRAMS = 8  # fast mode: rarest query grams used for candidates
DEFAULT_SHORTLIST = 64  # fast mode: candidates reranked exactly
DEFAULT_NEAR = 0.70
DEFAULT_FAR = 0.30
DEFAULT_LEAK: tuple[float, float, float] = (0.70, 0.85, 0.95)

Mode = Literal["exact", "fast"]
Measure = Literal["jaccard", "containment"]


@dataclass(frozen=True)
class SearchSettings:
    """How nearest neighbours are searched: `mode` "exact", or "fast" (candidates from each
    query's `rare_grams` rarest grams, a `shortlist` of them reranked exactly), scoring rows by
    `measure` (Jaccard, or the share of the query's grams the row holds; docs/exposure.md)."""

    mode: Mode = "exact"
    rare_grams: int = DEFAULT_RARE_GRAMS
    shortlist: int = DEFAULT_SHORTLIST
    measure: Measure = "jaccard"


EXACT_SEARCH = SearchSettings()


@dataclass(frozen=True)
class AuditConfig:
    """Everything that defines an audit's numbers; part of its id and signature."""

    orders: tuple[int, ...] = DEFAULT_ORDERS
    normalization: NormalizationConfig = field(default_factory=NormalizationConfig)
    mode: str = "exact"
    rare_grams: int = DEFAULT_RARE_GRAMS
    shortlist: int = DEFAULT_SHORTLIST
    validate_sample: int = 0
    measure: str = "jaccard"
    near: float = DEFAULT_NEAR
    far: float = DEFAULT_FAR
    leak: tuple[float, float, float] = DEFAULT_LEAK
    tm_zero_policy: str = "empty"
    side: str = "both"

    def __post_init__(self) -> None:
        if self.measure == "minhash":  # an estimate: approximate, like fast mode
            object.__setattr__(self, "mode", "fast")
        self._validate()
        if self.mode == "auto":
            object.__setattr__(self, "mode", "exact")

    def _validate(self) -> None:
        """Reject values that make no sense, with the option name in the message."""
        if not self.orders or any(not isinstance(o, int) or o < 1 for o in self.orders):
            raise UsageError(f"--orders: gram orders must be whole numbers >= 1, got {self.orders}")
        if len(set(self.orders)) != len(self.orders):
            raise UsageError(f"--orders: repeated gram order in {self.orders}")
        if self.mode not in MODES:
            raise UsageError(f"--mode: expected one of {', '.join(MODES)}, got {self.mode!r}")
        if self.measure not in MEASURES:
            raise UsageError(
                f"--measure: expected one of {', '.join(MEASURES)}, got {self.measure!r}"
            )
        for name, value in (("--near", self.near), ("--far", self.far)):
            _check_unit(name, value)
        if self.far > self.near:
            raise UsageError(f"--far ({self.far:g}) must not exceed --near ({self.near:g})")
        if len(self.leak) != 3:
            raise UsageError("--leak: give exactly three thresholds")
        for value in self.leak:
            _check_unit("--leak", value)
        if list(self.leak) != sorted(self.leak):
            raise UsageError(f"--leak: thresholds must be ascending, got {self.leak}")
        if self.tm_zero_policy not in TM_ZERO_POLICIES:
            raise UsageError(
                f"--tm-zero-policy: expected one of {', '.join(TM_ZERO_POLICIES)}, "
                f"got {self.tm_zero_policy!r}"
            )
        if self.side not in SIDES:
            raise UsageError(f"--side: expected one of {', '.join(SIDES)}, got {self.side!r}")
        if self.rare_grams < 1 or self.shortlist < 1:
            raise UsageError("--rare-grams and --shortlist must be at least 1")
        if self.validate_sample < 0:
            raise UsageError("--validate-sample must not be negative")
        if self.validate_sample and self.mode != "fast":
            raise UsageError("--validate-sample only applies to --mode fast")
        if self.measure == "substring" and self.mode == "fast":
            raise UsageError("--mode fast applies to the gram measures only: substrings are exact")

    @property
    def search(self) -> SearchSettings:
        """The search these settings ask for (the fast-mode knobs count in fast mode only; a
        MinHash audit's exact reference is the Jaccard search)."""
        measure: Measure = "containment" if self.measure == "containment" else "jaccard"
        if self.measure == "minhash":
            return SearchSettings("exact", measure="jaccard")
        if self.mode == "fast":
            return SearchSettings("fast", self.rare_grams, self.shortlist, measure)
        return SearchSettings("exact", measure=measure)

    def identity(self) -> dict[str, Any]:
        """The settings that define the audit's numbers (fast-mode knobs only in fast mode)."""
        out: dict[str, Any] = {
            "orders": list(self.orders),
            "normalization": self.normalization.signature_part(),
            "mode": self.mode,
            "pair": "exact" if self.mode == "exact" else "rerank",
            "near": self.near,
            "far": self.far,
            "leak": list(self.leak),
            "tm_zero_policy": self.tm_zero_policy,
        }
        if self.measure == "minhash":
            out.update(
                pair="minhash",
                bins=MINHASH_BINS,
                bands=MINHASH_BANDS,
                validate_sample=self.validate_sample,
            )
        elif self.mode == "fast":
            out.update(
                rare_grams=self.rare_grams,
                shortlist=self.shortlist,
                validate_sample=self.validate_sample,
            )
        if self.measure != "jaccard":  # Jaccard audits keep the ids they had before measures
            out["measure"] = self.measure
        if self.measure == "substring":
            out["word_orders"] = list(WORD_ORDERS)
        if self.side != "both":  # audits of both sides keep the ids they had before sides
            out["side"] = self.side
        return out

    @property
    def searches_source(self) -> bool:
        """Whether the test sources are searched."""
        return self.side != "target"

    @property
    def searches_target(self) -> bool:
        """Whether the references are searched."""
        return self.side != "source"

    @property
    def has_tm(self) -> bool:
        """Whether the audit has a TM baseline (the target of each source's neighbour)."""
        return self.searches_source

    def signature(self) -> str:
        """sacrebleu-style signature naming every setting behind the numbers."""
        orders = sorted(self.orders)
        grams = (
            f"{orders[0]}-{orders[-1]}"
            if orders == list(range(orders[0], orders[-1] + 1))
            else ",".join(map(str, orders))
        )
        mode = self.mode
        if self.measure == "minhash":
            mode = f"minhash(bins:{MINHASH_BINS},bands:{MINHASH_BANDS})"
        elif mode == "fast":
            mode += f"(rare:{self.rare_grams},short:{self.shortlist})"
        settings = metric_settings(1)
        bleu_tok = settings["signatures"]["bleu"].split("|")[3]
        parts = [
            f"tame-wh:{__version__}",
            f"norm:{self.normalization.signature_part()}",
            f"grams:char{grams}",
            f"mode:{mode}",
            *([f"measure:{self.measure}"] if self.measure == "containment" else []),
            *(
                [f"measure:substring(words:{','.join(map(str, WORD_ORDERS))})"]
                if self.measure == "substring"
                else []
            ),
            *([f"side:{self.side}"] if self.side != "both" else []),
            *([self._pair_part()] if self.side == "both" else []),
            f"bins:far{self.far:g},near{self.near:g}",
            f"leak:{','.join(f'{t:g}' for t in self.leak)}",
            f"tm0:{self.tm_zero_policy}",
            f"sacrebleu:{settings['sacrebleu']}({bleu_tok},chrf:nc6nw2,ter:default)",
        ]
        return "|".join(parts)

    def _pair_part(self) -> str:
        """How the pair side is searched (an audit of both sides only)."""
        if self.measure == "minhash":
            return "pair:minhash"
        return f"pair:{'exact' if self.mode == 'exact' else 'rerank'}"


def _check_unit(name: str, value: float) -> None:
    """A threshold: finite and within [0, 1]."""
    if not isinstance(value, (int, float)) or not math.isfinite(value) or not 0 <= value <= 1:
        raise UsageError(f"{name}: thresholds must be finite numbers in [0, 1], got {value!r}")


def audit_id_for(test_corpus_id: str, train_corpus_id: str, config: AuditConfig) -> str:
    """Content id of an audit: test set, training corpus and configuration."""
    payload = {"test": test_corpus_id, "train": train_corpus_id, "config": config.identity()}
    return short_id(hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest())


def resolve_audit_config(
    con: duckdb.DuckDBPyConnection | None,
    *,
    near: float | None = None,
    far: float | None = None,
    leak: tuple[float, float, float] | None = None,
    **options: Any,
) -> AuditConfig:
    """An AuditConfig from explicit values, else the warehouse's settings rows, else defaults."""
    stored = read_settings(con) if con is not None else {}
    base = AuditConfig(**options) if options else AuditConfig()
    stored_leak = tuple(stored.get(k) for k in ("leak.low", "leak.mid", "leak.high"))
    return replace(
        base,
        near=near if near is not None else stored.get("bin.near", DEFAULT_NEAR),
        far=far if far is not None else stored.get("bin.far", DEFAULT_FAR),
        leak=leak
        if leak is not None
        else (stored_leak if None not in stored_leak else DEFAULT_LEAK),  # type: ignore[arg-type]
    )


@dataclass(frozen=True)
class AuditOptions:
    """What a caller chose of an audit's configuration; what is left unset comes from the
    warehouse's settings rows, else the defaults (`resolve`)."""

    orders: tuple[int, ...] | None = None
    normalization: NormalizationConfig | None = None
    mode: str | None = None
    rare_grams: int | None = None
    shortlist: int | None = None
    validate_sample: int | None = None
    measure: str | None = None
    near: float | None = None
    far: float | None = None
    leak: tuple[float, float, float] | None = None
    tm_zero_policy: str | None = None
    side: str | None = None

    def resolve(
        self,
        con: duckdb.DuckDBPyConnection | None,
        *,
        train_name: str | None = None,
        test_name: str | None = None,
    ) -> AuditConfig:
        """The audit configuration these choices give in the warehouse of `con` (against the
        training corpus `train_name`: documents and monolingual text score by containment
        unless a measure is chosen, and search the side of test set `test_name` in their
        language unless a side is chosen)."""
        chosen = {
            name: value
            for name, value in vars(self).items()
            if value is not None and name not in ("near", "far", "leak")
        }
        if con is not None and train_name is not None:
            train = get_corpus(con, train_name, "train")
            if train.kind == "text" and self.measure is None:
                chosen["measure"] = "containment"
            if train.kind == "text" and self.side is None and test_name is not None:
                test = get_corpus(con, test_name, "test")
                chosen["side"] = text_side(train.src_lang, (test.src_lang, test.tgt_lang))
        return resolve_audit_config(con, near=self.near, far=self.far, leak=self.leak, **chosen)


def binned_side(side: str | None) -> str:
    """The side an audit's bins follow: the references in an audit of them alone, else the
    sources (docs/exposure.md, "Sides")."""
    return "target" if side == "target" else "source"


def text_side(text_lang: str | None, test_langs: tuple[str | None, str | None]) -> str:
    """The side of a test set a text corpus in `text_lang` is compared with: the references when
    it is in the test set's target language, the sources in its source language, else both."""
    text, (source, target) = base_language(text_lang), map(base_language, test_langs)
    if text is None or source == target:
        return "both"
    if text == target:
        return "target"
    return "source" if text == source else "both"
