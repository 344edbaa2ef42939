"""A stored audit read back: exposure per side, bins, PairLeak, warnings, TM hypotheses."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

import duckdb

from warehouse.errors import UsageError
from warehouse.exposure.config import binned_side
from warehouse.store.corpora import get_corpus
from warehouse.store.settings import read_settings


@dataclass
class AuditResult:
    """What `run_audit` did and the audit's summary."""

    action: str  # computed | unchanged | recomputed
    audit_id: str
    train_corpus: str
    test_set: str
    signature: str
    mode: str
    side: str  # the side searched: both, source or target (docs/exposure.md, "Sides")
    n_segments: int
    n_train: int
    timings: dict[str, float]
    sides: list[dict[str, Any]]
    bins: list[dict[str, Any]]
    pair_leak: dict[str, float]  # empty unless both sides were searched
    warnings: list[str]
    validation: dict[str, Any] | None
    postings: dict[str, int] | None
    lenses: dict[str, Any] | None = None  # beside the audits by other measures (lens_comparison)
    measure: str = "jaccard"

    def to_dict(self) -> dict[str, Any]:
        """Stable JSON document (`format` versions its shape)."""
        return {"format": 1, **asdict(self)}


def load_audit(con: duckdb.DuckDBPyConnection, audit_id: str, *, action: str) -> AuditResult:
    """An audit's summary as stored: sides, bins, PairLeak, warnings, validation."""
    row = con.execute(
        "SELECT a.signature, a.mode, a.n_segments, a.timings, a.validation, tr.name, te.name, "
        "tr.n_segments, a.far_threshold, a.leak_thresholds, a.input_warnings, "
        "audit_side(a.config), audit_measure(a.config) FROM audits a "
        "JOIN corpora tr ON tr.corpus_id = a.train_corpus_id "
        "JOIN corpora te ON te.corpus_id = a.test_corpus_id WHERE a.audit_id = ?",
        [audit_id],
    ).fetchone()
    if row is None:
        raise UsageError(f"unknown audit {audit_id!r}")
    (signature, mode, n, timings_json, validation_json, train, test, n_train, _far, leak, early,
     searched, measure) = row  # fmt: skip
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
        {"bin": b, "n_segments": c, "share": s, "mean_source_exposure": m,
         "mean_target_exposure": t}
        for b, c, s, m, t in con.execute(
            "SELECT bin, n_segments, share, mean_source_exposure, mean_target_exposure "
            "FROM audit_bins WHERE audit_id = ? ORDER BY bin_order",
            [audit_id],
        ).fetchall()
    ]  # fmt: skip
    pair = next((s for s in sides if s["side"] == "pair"), None)
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
        side=searched,
        n_segments=n,
        n_train=n_train,
        timings=timings,
        sides=sides,
        bins=bins,
        pair_leak=dict(pair["at_or_above"]) if pair is not None else {},
        warnings=[],
        validation=validation,
        postings=postings,
        lenses=lens_comparison(con, audit_id),
        measure=measure,
    )
    result.warnings = [*(early or []), *audit_warnings(con, result, list(leak))]
    return result


def audit_warnings(
    con: duckdb.DuckDBPyConnection, result: AuditResult, leak: list[float]
) -> list[str]:
    """The audit-level warnings of docs/exposure.md (thresholds from the `settings` table)."""
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
    pair = next((s for s in result.sides if s["side"] == "pair"), None)
    mid_key = f"{leak[1]:.2f}"
    limit = settings.get("warn.pairleak_share", 0.05)
    if pair is not None and pair["at_or_above"][mid_key] >= limit:
        warnings.append(
            f"PairLeak@{mid_key} is {pair['at_or_above'][mid_key]:.1%} "
            f"(>= {limit:.0%}): many test pairs are near-copies of training pairs"
        )
    if pair is not None and pair["exact_share"] > 0:
        count = round(pair["exact_share"] * result.n_segments)
        warnings.append(f"{count} test pair(s) occur verbatim in the training corpus")
    if result.measure == "minhash":
        warnings.append(
            "MinHash estimates each exposure from signatures and finds neighbours by banding: "
            "exposures are approximate (too low where a neighbour was missed)"
        )
    elif result.mode == "fast":
        warnings.append("approximate retrieval (--mode fast) was used; exposures may be too low")
    return warnings


def tm_hypotheses(con: duckdb.DuckDBPyConnection, audit_id: str) -> list[str]:
    """The TM hypotheses of an audit, in test-segment order."""
    row = con.execute(
        "SELECT train_corpus_id, test_corpus_id, config->>'tm_zero_policy', audit_side(config) "
        "FROM audits WHERE audit_id = ?",
        [audit_id],
    ).fetchone()
    if row is None:
        raise UsageError(f"unknown audit {audit_id!r}")
    train_id, test_id, policy, side = row
    if side == "target":
        raise UsageError(
            f"audit {audit_id} searched the references alone (--side target): it has no "
            "source neighbours, so no TM hypotheses"
        )
    hyps = con.execute(
        "SELECT tm_hypothesis(tr.refs[1], te.src, ?) "
        "FROM exposures e JOIN segments te ON te.corpus_id = ? AND te.seg_idx = e.seg_idx "
        "LEFT JOIN segments tr ON tr.corpus_id = ? AND tr.seg_idx = e.tm_hyp_idx "
        "WHERE e.audit_id = ? ORDER BY e.seg_idx",
        [policy, test_id, train_id, audit_id],
    ).fetchall()
    return [h for (h,) in hyps]


def choose_audit(
    con: duckdb.DuckDBPyConnection,
    test_corpus_id: str,
    train: str | None,
    measure: str | None = None,
) -> str | None:
    """The audit that exposure figures of a test set use, by the leaderboard's rule: against
    `train` if given, else the largest training corpus audited for the test set; an exact
    audit before a fast one, a Jaccard one before another measure's (only `measure`'s when
    given), one of both sides before one of the sources before one of the references, then
    the newest."""
    train_id = get_corpus(con, train, "train").corpus_id if train is not None else None
    row = con.execute(
        "SELECT a.audit_id FROM audits a JOIN corpora tr ON tr.corpus_id = a.train_corpus_id "
        "WHERE a.test_corpus_id = ? AND (? IS NULL OR a.train_corpus_id = ?) "
        "AND (? IS NULL OR audit_measure(a.config) = ?) "
        "ORDER BY a.mode = 'exact' DESC, "
        "measure_rank(audit_measure(a.config)), side_rank(audit_side(a.config)), "
        "tr.n_segments DESC, a.created_at DESC, a.audit_id "
        "LIMIT 1",
        [test_corpus_id, train_id, train_id, measure, measure],
    ).fetchone()
    if row is None and measure is not None:
        against = f" against {train!r}" if train is not None else ""
        raise UsageError(
            f"the run's test set has no {measure} audit{against}; run `tame-wh audit "
            f"--measure {measure} --testset …` first"
        )
    if row is None and train is not None:
        raise UsageError(
            f"the run's test set was never audited against {train!r}; "
            f"run `tame-wh audit --train {train} --testset …` first"
        )
    return str(row[0]) if row else None


LENS_EXAMPLES = 5  # segments shown where the lenses disagree most


def lens_comparison(con: duckdb.DuckDBPyConnection, audit_id: str) -> dict[str, Any] | None:
    """How the audits by each measure (Jaccard, containment, substring, MinHash) of the audit's
    test set and training corpus bin its segments (view `exposure_lenses`), and the segments
    where they disagree most, on the side the audit's bins follow (its `side`: the references
    in an audit of the target side alone, else the sources); None unless two lenses exist."""
    # Most test sets have one lens against a corpus: the audits table alone says so.
    lenses = con.execute(
        "SELECT count(DISTINCT audit_measure(b.config)), any_value(audit_side(a.config)) "
        "FROM audits a JOIN audits b "
        "ON b.test_corpus_id = a.test_corpus_id AND b.train_corpus_id = a.train_corpus_id "
        "WHERE a.audit_id = ?",
        [audit_id],
    ).fetchone()
    if lenses is None or lenses[0] < 2:
        return None
    # Column names of the view, chosen from two fixed prefixes (no user value is pasted).
    side = binned_side(lenses[1])
    found = con.execute(
        "SELECT any_value(jaccard_audit_id), any_value(containment_audit_id), "
        "any_value(substring_audit_id), any_value(minhash_audit_id), count(*), "
        "count(*) FILTER (bins_agree), "
        f"count(*) FILTER ({side}_containment = 1 AND jaccard_bin = 'far'), "
        f"count(*) FILTER ({side}_whole_count > 0 AND jaccard_bin = 'far') "
        "FROM exposure_lenses "
        "WHERE ? IN (jaccard_audit_id, containment_audit_id, substring_audit_id, "
        "minhash_audit_id) GROUP BY test_corpus_id, train_corpus_id",
        [audit_id],
    ).fetchone()
    if found is None:
        return None
    jaccard, containment, substring, minhash, n, agree, contained_far, verbatim_far = found
    examples = con.execute(
        f"SELECT seg_idx, {side}_jaccard, {side}_containment, {side}_substring, "
        f"{side}_longest_chars, {side}_chars, {side}_minhash, jaccard_bin, containment_bin, "
        "substring_bin, minhash_bin "
        "FROM exposure_lenses WHERE ? IN (jaccard_audit_id, containment_audit_id, "
        "substring_audit_id, minhash_audit_id) AND NOT bins_agree "
        f"ORDER BY greatest(coalesce({side}_containment, 0), coalesce({side}_substring, 0)) "
        f"- coalesce({side}_jaccard, 0) DESC, seg_idx LIMIT ?",
        [audit_id, LENS_EXAMPLES],
    ).fetchall()
    keys = (
        "seg_idx",
        "jaccard",
        "containment",
        "substring",
        "longest_chars",
        "chars",
        "minhash",
        "jaccard_bin",
        "containment_bin",
        "substring_bin",
        "minhash_bin",
    )
    return {
        "side": side,
        "jaccard_audit_id": jaccard,
        "containment_audit_id": containment,
        "substring_audit_id": substring,
        "minhash_audit_id": minhash,
        "segments": n,
        "bins_agree": agree,
        "contained_yet_far": contained_far,
        "verbatim_yet_far": verbatim_far,
        "examples": [dict(zip(keys, row, strict=True)) for row in examples],
    }
