"""Exposure audits (SPEC §4): configuration, signature, and filling `exposures` through the UDF."""

from __future__ import annotations

import hashlib
import json
import math
import random
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from typing import Any

import duckdb
import pyarrow as pa

from warehouse import __version__
from warehouse.aggregates import forget_audit, refresh_audit
from warehouse.connection import duckdb_threads, transaction
from warehouse.corpora import corpus_texts, get_corpus, training_texts
from warehouse.errors import UsageError
from warehouse.exposure_udf import EXPOSURE_FUNCTION, register_exposure_functions
from warehouse.normalize import NormalizationConfig
from warehouse.retrieval import audit as retrieval_audit
from warehouse.retrieval import build_index
from warehouse.settings import read_settings
from warehouse.surface import bleu_from_stats, compute_segment_stats, metric_settings

Progress = Callable[[int, int], None]  # (done, total)
MODES = ("exact", "fast", "auto")
TM_ZERO_POLICIES = ("empty", "source")
_ID_LENGTH = 16


@dataclass(frozen=True)
class AuditConfig:
    """Everything that defines an audit's numbers; part of its id and signature."""

    orders: tuple[int, ...] = (3, 4, 5)
    normalization: NormalizationConfig = field(default_factory=NormalizationConfig)
    mode: str = "exact"
    rare_grams: int = 8
    shortlist: int = 64
    validate_sample: int = 0
    near: float = 0.70
    far: float = 0.30
    leak: tuple[float, float, float] = (0.70, 0.85, 0.95)
    tm_zero_policy: str = "empty"

    def __post_init__(self) -> None:
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
        if self.rare_grams < 1 or self.shortlist < 1:
            raise UsageError("--rare-grams and --shortlist must be at least 1")
        if self.validate_sample < 0:
            raise UsageError("--validate-sample must not be negative")
        if self.validate_sample and self.mode != "fast":
            raise UsageError("--validate-sample only applies to --mode fast")

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
        if self.mode == "fast":
            out.update(
                rare_grams=self.rare_grams,
                shortlist=self.shortlist,
                validate_sample=self.validate_sample,
            )
        return out

    def signature(self) -> str:
        """sacrebleu-style signature naming every setting behind the numbers."""
        orders = sorted(self.orders)
        grams = (
            f"{orders[0]}-{orders[-1]}"
            if orders == list(range(orders[0], orders[-1] + 1))
            else ",".join(map(str, orders))
        )
        mode = self.mode
        if mode == "fast":
            mode += f"(rare:{self.rare_grams},short:{self.shortlist})"
        settings = metric_settings(1)["signatures"]
        bleu_tok = settings["bleu"].split("|")[3]
        parts = [
            f"tame-wh:{__version__}",
            f"norm:{self.normalization.signature_part()}",
            f"grams:char{grams}",
            f"mode:{mode}",
            f"pair:{'exact' if self.mode == 'exact' else 'rerank'}",
            f"bins:far{self.far:g},near{self.near:g}",
            f"leak:{','.join(f'{t:g}' for t in self.leak)}",
            f"tm0:{self.tm_zero_policy}",
            f"sacrebleu:{metric_settings(1)['sacrebleu']}({bleu_tok},chrf:nc6nw2,ter:default)",
        ]
        return "|".join(parts)


def _check_unit(name: str, value: float) -> None:
    """A threshold: finite and within [0, 1]."""
    if not isinstance(value, (int, float)) or not math.isfinite(value) or not 0 <= value <= 1:
        raise UsageError(f"{name}: thresholds must be finite numbers in [0, 1], got {value!r}")


def audit_id_for(test_corpus_id: str, train_corpus_id: str, config: AuditConfig) -> str:
    """Content id of an audit: test set, training corpus and configuration."""
    payload = {"test": test_corpus_id, "train": train_corpus_id, "config": config.identity()}
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:_ID_LENGTH]


@dataclass
class AuditResult:
    """What `run_audit` did and the audit's summary."""

    action: str  # computed | unchanged | recomputed
    audit_id: str
    train_corpus: str
    test_set: str
    signature: str
    mode: str
    n_segments: int
    n_train: int
    timings: dict[str, float]
    sides: list[dict[str, Any]]
    bins: list[dict[str, Any]]
    pair_leak: dict[str, float]
    warnings: list[str]
    validation: dict[str, Any] | None
    postings: dict[str, int] | None

    def to_dict(self) -> dict[str, Any]:
        """Stable JSON document (`format` versions its shape)."""
        return {"format": 1, **asdict(self)}


def _utcnow() -> datetime:
    """Naive UTC timestamp."""
    return datetime.now(timezone.utc).replace(tzinfo=None)


def existing_audit(
    con: duckdb.DuckDBPyConnection, train_name: str, test_name: str, config: AuditConfig
) -> str | None:
    """The id of an identical audit already stored, if any."""
    train = get_corpus(con, train_name, "train")
    test = get_corpus(con, test_name, "test")
    audit_id = audit_id_for(test.corpus_id, train.corpus_id, config)
    row = con.execute("SELECT 1 FROM audits WHERE audit_id = ?", [audit_id]).fetchone()
    return audit_id if row else None


def _delete_audit(con: duckdb.DuckDBPyConnection, audit_id: str) -> None:
    """Remove an audit and its rows."""
    for table in ("exposures", "tm_segment_stats", "audits"):
        con.execute(f"DELETE FROM {table} WHERE audit_id = ?", [audit_id])
    forget_audit(con, audit_id)


def _training_targets(
    con: duckdb.DuckDBPyConnection, corpus_id: str, rows: list[int | None]
) -> dict[int, str]:
    """The training targets of the given rows (fetched, not kept in memory for the whole audit)."""
    wanted = sorted({j for j in rows if j is not None})
    if not wanted:
        return {}
    found = con.execute(
        "SELECT seg_idx, refs[1] FROM segments WHERE corpus_id = ? AND list_contains(?, seg_idx)",
        [corpus_id, wanted],
    ).fetchall()
    return {int(j): str(t) for j, t in found}


def _tm_hypotheses(
    nn: list[int | None], targets: dict[int, str], test_src: list[str], policy: str
) -> list[str]:
    """TM hypothesis per test segment: the target of its source neighbour, else by policy."""
    return [
        targets[j] if j is not None else (src if policy == "source" else "")
        for j, src in zip(nn, test_src, strict=True)
    ]


def _store_tm_stats(
    con: duckdb.DuckDBPyConnection, audit_id: str, hyps: list[str], refs: list[list[str]]
) -> None:
    """Score the TM hypotheses against the references and store their statistics."""
    # TM scores in the views are BLEU and chrF++; TER, the slowest to extract, is not stored.
    stats = compute_segment_stats(hyps, refs, [False] * len(hyps), with_ter=False)
    n = len(hyps)
    table = pa.table(
        {
            "audit_id": pa.array([audit_id] * n, pa.string()),
            "seg_idx": pa.array(range(n), pa.int64()),
            "bleu_stats": pa.array(stats.bleu, pa.list_(pa.int64())),
            "chrf_stats": pa.array(stats.chrf, pa.list_(pa.int64())),
            "ter_stats": pa.array([None] * n, pa.list_(pa.float64())),
            "exact_match": pa.array(stats.exact_match, pa.bool_()),
            "length_ratio": pa.array(stats.length_ratio, pa.float64()),
            "chrf_sentence": pa.array(stats.chrf_sentence, pa.float64()),
        }
    )
    con.register("_tame_tm_stats", table)
    try:
        con.execute("INSERT INTO tm_segment_stats BY NAME SELECT * FROM _tame_tm_stats")
    finally:
        con.unregister("_tame_tm_stats")


def _bin(exposure: float, exact: bool, config: AuditConfig) -> str:
    """The exposure bin of one segment (thresholds inclusive)."""
    if exact:
        return "source_exact"
    if exposure >= config.near:
        return "near"
    return "medium" if exposure >= config.far else "far"


def _validate_fast(
    index: Any,
    test_src: list[str],
    test_refs: list[list[str]],
    targets: Callable[[list[int | None]], dict[int, str]],
    fast: dict[str, list[Any]],
    config: AuditConfig,
    threads: int | None,
) -> dict[str, Any]:
    """Rerun a seeded sample in exact mode; top-1 agreement, bin agreement and |ΔTM-BLEU|."""
    seed = 12345
    sample = sorted(
        random.Random(seed).sample(range(len(test_src)), min(config.validate_sample, len(test_src)))
    )
    exact = retrieval_audit(
        index,
        [test_src[i] for i in sample],
        [test_refs[i] for i in sample],
        config.normalization,
        mode="exact",
        threads=threads,
    )
    agree_nn = sum(exact["source_nn"][k] == fast["source_nn"][i] for k, i in enumerate(sample))
    agree_bin = sum(
        _bin(exact["source_exposure"][k], exact["source_exact"][k], config)
        == _bin(fast["source_exposure"][i], fast["source_exact"][i], config)
        for k, i in enumerate(sample)
    )
    src = [test_src[i] for i in sample]
    refs = [test_refs[i] for i in sample]

    def tm_bleu(nn: list[int | None]) -> float:
        hyps = _tm_hypotheses(nn, targets(nn), src, config.tm_zero_policy)
        stats = compute_segment_stats(hyps, refs, [False] * len(hyps), with_ter=False)
        return bleu_from_stats([sum(col) for col in zip(*stats.bleu, strict=True)])

    exact_bleu = tm_bleu(exact["source_nn"])
    fast_bleu = tm_bleu([fast["source_nn"][i] for i in sample])
    n = len(sample)
    return {
        "sample_size": n,
        "seed": seed,
        "top1_agreement": agree_nn / n if n else None,
        "bin_agreement": agree_bin / n if n else None,
        "tm_bleu_exact": exact_bleu,
        "tm_bleu_fast": fast_bleu,
        "abs_delta_tm_bleu": abs(exact_bleu - fast_bleu),
    }


def run_audit(
    con: duckdb.DuckDBPyConnection,
    train_name: str,
    test_name: str,
    config: AuditConfig | None = None,
    *,
    threads: int | None = None,
    force: bool = False,
    progress: Progress | None = None,
) -> AuditResult:
    """Audit a test set against a training corpus; an identical stored audit is reused."""
    config = config or AuditConfig()
    train = get_corpus(con, train_name, "train")
    test = get_corpus(con, test_name, "test")
    audit_id = audit_id_for(test.corpus_id, train.corpus_id, config)
    exists = con.execute("SELECT 1 FROM audits WHERE audit_id = ?", [audit_id]).fetchone()
    if exists and not force:
        return load_audit(con, audit_id, action="unchanged")
    timings: dict[str, float] = {}
    started = time.perf_counter()
    train_src, train_tgt = training_texts(con, train.corpus_id)
    test_src, test_refs = corpus_texts(con, test.corpus_id)
    timings["read_seconds"] = time.perf_counter() - started
    mark = time.perf_counter()
    index = build_index(train_src, train_tgt, config.orders, config.normalization, threads)
    del train_src, train_tgt  # the index holds what the search needs
    timings["index_seconds"] = time.perf_counter() - mark
    collected = register_exposure_functions(
        con, index, config, threads=threads, progress=progress, total=len(test_src)
    )
    mark = time.perf_counter()
    # DuckDB's own workers stay idle while the native engine searches (restored afterwards,
    # also after a rollback).
    with duckdb_threads(con, 1), transaction(con):
        if exists:
            _delete_audit(con, audit_id)
        con.execute(
            "INSERT INTO audits (audit_id, test_corpus_id, train_corpus_id, mode, near_threshold, "
            "far_threshold, leak_thresholds, n_segments, config, signature, backend, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                audit_id,
                test.corpus_id,
                train.corpus_id,
                config.mode,
                config.near,
                config.far,
                list(config.leak),
                test.n_segments,
                json.dumps(config.identity()),
                config.signature(),
                f"tame-wh-native {__version__}",
                _utcnow(),
            ],
        )
        con.execute(
            f"""
            INSERT INTO exposures
            SELECT ? AS audit_id, seg_idx,
                   x.source_exposure, x.source_nn, x.source_exact,
                   x.target_exposure, x.target_nn, x.target_ref_idx, x.target_exact,
                   x.pair_exposure, x.pair_nn, x.pair_exact,
                   x.source_nn AS tm_hyp_idx,
                   CASE WHEN x.source_exact THEN 'source_exact'
                        WHEN x.source_exposure >= ? THEN 'near'
                        WHEN x.source_exposure >= ? THEN 'medium'
                        ELSE 'far' END AS bin
            FROM (SELECT seg_idx, {EXPOSURE_FUNCTION}(src, refs) AS x
                  FROM segments WHERE corpus_id = ?)
            """,
            [audit_id, config.near, config.far, test.corpus_id],
        )
        timings["search_seconds"] = time.perf_counter() - mark
        mark = time.perf_counter()
        # Each segment's nearest neighbour with its training target (a join, not a lookup list).
        rows = con.execute(
            "SELECT e.source_nn, e.source_exposure, e.source_exact, t.refs[1] "
            "FROM exposures e LEFT JOIN (SELECT seg_idx, refs FROM segments WHERE corpus_id = ?) t "
            "ON t.seg_idx = e.source_nn WHERE e.audit_id = ? ORDER BY e.seg_idx",
            [train.corpus_id, audit_id],
        ).fetchall()
        nn = [r[0] for r in rows]
        targets = {int(r[0]): str(r[3]) for r in rows if r[0] is not None}
        tm_hyps = _tm_hypotheses(nn, targets, test_src, config.tm_zero_policy)
        _store_tm_stats(con, audit_id, tm_hyps, test_refs)
        refresh_audit(con, audit_id)
        timings["tm_seconds"] = time.perf_counter() - mark
        validation = None
        if config.mode == "fast" and config.validate_sample:
            fast = {
                "source_nn": nn,
                "source_exposure": [r[1] for r in rows],
                "source_exact": [r[2] for r in rows],
            }
            validation = _validate_fast(
                index,
                test_src,
                test_refs,
                lambda rows: _training_targets(con, train.corpus_id, rows),
                fast,
                config,
                threads,
            )
        timings["total_seconds"] = time.perf_counter() - started
        con.execute(
            "UPDATE audits SET timings = ?, validation = ? WHERE audit_id = ?",
            [
                json.dumps({**timings, "postings": collected.postings()}),
                json.dumps(validation) if validation else None,
                audit_id,
            ],
        )
    return load_audit(con, audit_id, action="recomputed" if exists else "computed")


def load_audit(con: duckdb.DuckDBPyConnection, audit_id: str, *, action: str) -> AuditResult:
    """An audit's summary as stored: sides, bins, PairLeak, warnings, validation."""
    row = con.execute(
        "SELECT a.signature, a.mode, a.n_segments, a.timings, a.validation, tr.name, te.name, "
        "tr.n_segments, a.far_threshold, a.leak_thresholds FROM audits a "
        "JOIN corpora tr ON tr.corpus_id = a.train_corpus_id "
        "JOIN corpora te ON te.corpus_id = a.test_corpus_id WHERE a.audit_id = ?",
        [audit_id],
    ).fetchone()
    if row is None:
        raise UsageError(f"unknown audit {audit_id!r}")
    signature, mode, n, timings_json, validation_json, train, test, n_train, _far, leak = row
    side_rows = con.execute(
        "SELECT side, n_segments, mean, median, p05, p25, p75, p95, max, exact_share, "
        "thresholds, shares_at_or_above FROM audit_exposure_summary WHERE audit_id = ? "
        "ORDER BY side_order",
        [audit_id],
    ).fetchall()
    sides = []
    for side, count, mean, median, p05, p25, p75, p95, top, exact, thresholds, shares in side_rows:
        sides.append(
            {
                "side": side,
                "n_segments": count,
                "mean": mean,
                "median": median,
                "p05": p05,
                "p25": p25,
                "p75": p75,
                "p95": p95,
                "max": top,
                "exact_share": exact,
                "at_or_above": {f"{t:.2f}": s for t, s in zip(thresholds, shares, strict=True)},
            }
        )
    bins = [
        {"bin": b, "n_segments": c, "share": s, "mean_source_exposure": m}
        for b, c, s, m in con.execute(
            "SELECT bin, n_segments, share, mean_source_exposure FROM audit_bins "
            "WHERE audit_id = ? ORDER BY bin_order",
            [audit_id],
        ).fetchall()
    ]
    pair = next(s for s in sides if s["side"] == "pair")
    timings = json.loads(timings_json) if timings_json else {}
    postings = timings.pop("postings", None)
    validation = json.loads(validation_json) if validation_json else None
    result = AuditResult(
        action=action,
        audit_id=audit_id,
        train_corpus=train,
        test_set=test,
        signature=signature,
        mode=mode,
        n_segments=n,
        n_train=n_train,
        timings=timings,
        sides=sides,
        bins=bins,
        pair_leak=dict(pair["at_or_above"]),
        warnings=[],
        validation=validation,
        postings=postings,
    )
    result.warnings = audit_warnings(con, result, list(leak))
    return result


def audit_warnings(
    con: duckdb.DuckDBPyConnection, result: AuditResult, leak: list[float]
) -> list[str]:
    """The audit-level warnings of SPEC §4 (thresholds from the `settings` table)."""
    settings = read_settings(con)
    warnings: list[str] = []
    far = next(b for b in result.bins if b["bin"] == "far")
    min_count = int(settings.get("warn.far_min_count", 30))
    min_share = settings.get("warn.far_min_share", 0.10)
    if far["n_segments"] < min_count or far["share"] < min_share:
        warnings.append(
            f"far bin has {far['n_segments']} segments ({far['share']:.1%} of the test set); "
            f"below {min_count} segments or {min_share:.0%} its scores are unreliable"
        )
    pair = next(s for s in result.sides if s["side"] == "pair")
    mid_key = f"{leak[1]:.2f}"
    limit = settings.get("warn.pairleak_share", 0.05)
    if pair["at_or_above"][mid_key] >= limit:
        warnings.append(
            f"PairLeak@{mid_key} is {pair['at_or_above'][mid_key]:.1%} "
            f"(>= {limit:.0%}): many test pairs are near-copies of training pairs"
        )
    if pair["exact_share"] > 0:
        count = round(pair["exact_share"] * result.n_segments)
        warnings.append(f"{count} test pair(s) occur verbatim in the training corpus")
    if result.mode == "fast":
        warnings.append("approximate retrieval (--mode fast) was used; exposures may be too low")
    return warnings


def tm_hypotheses(con: duckdb.DuckDBPyConnection, audit_id: str) -> list[str]:
    """The TM hypotheses of an audit, in test-segment order."""
    row = con.execute(
        "SELECT train_corpus_id, test_corpus_id, config->>'tm_zero_policy' FROM audits "
        "WHERE audit_id = ?",
        [audit_id],
    ).fetchone()
    if row is None:
        raise UsageError(f"unknown audit {audit_id!r}")
    train_id, test_id, policy = row
    hyps = con.execute(
        "SELECT CASE WHEN e.tm_hyp_idx IS NOT NULL THEN tr.refs[1] "
        "WHEN ? = 'source' THEN te.src ELSE '' END "
        "FROM exposures e JOIN segments te ON te.corpus_id = ? AND te.seg_idx = e.seg_idx "
        "LEFT JOIN segments tr ON tr.corpus_id = ? AND tr.seg_idx = e.tm_hyp_idx "
        "WHERE e.audit_id = ? ORDER BY e.seg_idx",
        [policy, test_id, train_id, audit_id],
    ).fetchall()
    return [h for (h,) in hyps]
