"""Exposure measures against documents: containment vs Jaccard on real text joined into documents.

Run: python bench/lenses.py --real /tmp/rd/en-fr [--repeat 3] [--seen 2000]

The real en-fr training corpus (230,986 pairs, the unpacked folder or en-fr.tar.gz) is shuffled
(seed 7) and joined into documents of 50-500 lines each (English and French documents aligned line
by line), registered twice: as a parallel corpus of documents (`corpus add --src --tgt`) and as
English monolingual text (`corpus add --text --lang en`). Two test sets:
- `seen`: --seen training pairs drawn at random (seed 11): every one sits verbatim inside one
  document, a known answer;
- `unseen`: the real in-domain test set, whose sources were held out of training.
Audits (each a child process, medians of --repeat runs, a fresh copy of the loaded warehouse each
time, so no audit or stored index is reused): Jaccard (the reference) and containment against the
parallel documents, containment against the monolingual text. Printed: wall and CPU seconds and
peak memory as ratios of the Jaccard audit; then, per test set, the share of segments whose source
(and pair) exposure is 1, the share in the far bin and the median source exposure. Checked (exit
1 otherwise): by containment every seen segment has source exposure 1 (against the parallel
documents, target and pair exposure too) at a document holding it or an earlier one holding all
its grams, except a text shorter than the smallest gram order (one gram, itself); by Jaccard
every seen segment is in the far bin.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import sys
import tarfile
import tempfile
from pathlib import Path

from measure import Measurement, compile_package_sources, machine, median_each, run_child

from warehouse import Warehouse
from warehouse.exposure.normalize import normalize

SEED_DOCS, SEED_SEEN = 7, 11
SMALLEST_ORDER = 3  # of the default gram orders 3, 4, 5 (docs/exposure.md)


def _real_folder(path: Path, work: Path) -> Path:
    """The en-fr folder (unpacked from the archive when given one)."""
    if path.is_dir():
        return path
    with tarfile.open(path) as archive:
        archive.extractall(work / "real", filter="data")
    return next(p.parent for p in (work / "real").rglob("train.src"))


def _lines(path: Path) -> list[str]:
    """The lines of a text file (a final newline or none)."""
    text = path.read_text(encoding="utf-8")
    return text.removesuffix("\n").split("\n") if text else []


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _tame(db: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "warehouse.cli", "--db", str(db), "--quiet", *args]


def _documents(src: list[str], tgt: list[str]) -> tuple[list[str], list[str], list[int]]:
    """Training pairs shuffled and joined into aligned documents of 50-500 lines; each pair's
    document."""
    rng = random.Random(SEED_DOCS)
    order = list(range(len(src)))
    rng.shuffle(order)
    docs_en, docs_fr, doc_of = [], [], [0] * len(src)
    at = 0
    while at < len(order):
        rows = order[at : at + rng.randint(50, 500)]
        for row in rows:
            doc_of[row] = len(docs_en)
        docs_en.append(" ".join(src[r] for r in rows))
        docs_fr.append(" ".join(tgt[r] for r in rows))
        at += len(rows)
    return docs_en, docs_fr, doc_of


def _exposures(db: Path, audit_id: str) -> list[tuple]:
    with Warehouse.open(str(db), access="read") as wh:
        return wh.con.execute(
            "SELECT source_exposure, source_nn, target_exposure, pair_exposure, bin "
            "FROM exposures WHERE audit_id = ? ORDER BY seg_idx",
            [audit_id],
        ).fetchall()


def _audit(
    loaded: Path, work: Path, label: str, repeat: int, *args: str
) -> tuple[Measurement, str]:
    """The audit as a child on fresh copies of the loaded warehouse; medians, and its id."""
    runs = []
    audit_id = ""
    for i in range(repeat):
        db = work / f"run-{label.replace(' ', '-')}-{i}.duckdb"
        shutil.copyfile(loaded, db)
        out = work / "audit.json"
        with out.open("w") as stdout:
            runs.append(run_child(label, _tame(db, "audit", *args, "--json"), stdout=stdout))
        audit_id = json.loads(out.read_text())["audit_id"]
        if i < repeat - 1:
            db.unlink()
            shutil.rmtree(f"{db}.indexes", ignore_errors=True)
    return median_each(label, runs), audit_id


def _summary(rows: list[tuple]) -> str:
    n = len(rows)
    whole = sum(r[0] == 1.0 for r in rows) / n
    pair = sum(r[3] == 1.0 for r in rows) / n
    far = sum(r[4] == "far" for r in rows) / n
    median = statistics.median(r[0] for r in rows)
    return (
        f"source exposure 1: {whole:6.1%}  pair exposure 1: {pair:6.1%}  far bin: {far:6.1%}  "
        f"median source exposure {median:.3f}"
    )


def main() -> None:
    """Parse arguments and run the comparison."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--real", required=True, help="real en-fr data: folder or .tar.gz")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each audit (median)")
    parser.add_argument("--seen", type=int, default=2000, help="training pairs as a test set")
    args = parser.parse_args()
    compile_package_sources()
    with tempfile.TemporaryDirectory(prefix="tame-bench-lenses-") as tmp:
        work = Path(tmp)
        real = _real_folder(Path(args.real), work)
        src, tgt = _lines(real / "train.src"), _lines(real / "train.tgt")
        docs_en, docs_fr, doc_of = _documents(src, tgt)
        seen = random.Random(SEED_SEEN).sample(range(len(src)), args.seen)
        loaded = work / "loaded.duckdb"
        seen_en = _write(work / "seen.en", [src[i] for i in seen])
        seen_fr = _write(work / "seen.fr", [tgt[i] for i in seen])
        setup = [
            ["corpus", "add", "docs", "--src", str(_write(work / "docs.en", docs_en)),
             "--tgt", str(_write(work / "docs.fr", docs_fr))],
            ["corpus", "add", "web", "--text", str(work / "docs.en"), "--lang", "en"],
            ["testset", "add", "seen", "--src", str(seen_en), "--ref", str(seen_fr)],
            ["testset", "add", "unseen", "--src", str(real / "test.src"),
             "--ref", str(real / "test.ref")],
        ]  # fmt: skip
        for step in setup:
            run_child("set-up", _tame(loaded, *step))
        text_bytes = sum(len(d.encode()) for d in docs_en)
        lengths = [d.count(" ") + 1 for d in docs_en]
        print(
            f"\nReal text (en-fr): {len(src):,} training pairs joined into {len(docs_en):,} "
            f"documents of 50-500 lines ({text_bytes / 2**20:.1f} MiB of English, median "
            f"{statistics.median(lengths):,.0f} words per document); test sets: seen = "
            f"{len(seen):,} training pairs, unseen = the real held-out test set"
        )
        print(f"{machine()}; medians of {args.repeat} runs, each on a fresh copy (index built)")
        results: dict[str, tuple[Measurement, dict[str, str]]] = {}
        for label, train, extra in (
            ("jaccard, parallel documents", "docs", ["--measure", "jaccard"]),
            ("containment, parallel documents", "docs", ["--measure", "containment"]),
            ("containment (default), English text", "web", []),
        ):
            ids = {}
            measured = None
            for testset in ("seen", "unseen"):
                m, ids[testset] = _audit(
                    loaded, work, f"{label} {testset}", args.repeat,
                    "--train", train, "--testset", testset, *extra,
                )  # fmt: skip
                if testset == "seen":
                    measured = m
            assert measured is not None
            results[label] = (measured, ids)
        reference = results["jaccard, parallel documents"][0]
        print(f"\n{'audit of the seen set':<40} {'wall s':>8} {'x ref':>6} {'CPU s':>8} "
              f"{'x ref':>6} {'peak MiB':>9}")  # fmt: skip
        for label, (m, _) in results.items():
            print(
                f"{label:<40} {m.seconds:>8.2f} {m.seconds / reference.seconds:>6.2f} "
                f"{m.cpu_seconds:>8.2f} {m.cpu_seconds / reference.cpu_seconds:>6.2f} "
                f"{m.peak_mib:>9.0f}"
            )
        dbs = sorted(work.glob("run-*.duckdb"))
        jaccard_seen = _exposures(
            next(d for d in dbs if "jaccard" in d.name and "-seen-" in d.name),
            results["jaccard, parallel documents"][1]["seen"],
        )
        far_by_jaccard = sum(r[4] == "far" for r in jaccard_seen)
        failures = 0
        for label, (_, ids) in results.items():
            print(f"\n{label}")
            for testset, audit_id in ids.items():
                db = next(d for d in dbs if f"{label.replace(' ', '-')}-{testset}" in d.name)
                rows = _exposures(db, audit_id)
                print(f"  {testset:<7} {_summary(rows)}")
                if testset != "seen" or "containment" not in label:
                    continue
                # English text holds the sources only; parallel documents hold whole pairs.
                parallel = "parallel" in label
                missed = short = 0
                for k, row in enumerate(rows):
                    texts = (src[seen[k]], tgt[seen[k]]) if parallel else (src[seen[k]],)
                    if min(len(normalize(t)) for t in texts) < SMALLEST_ORDER:
                        short += 1  # one gram, the text itself: no document holds it as a gram
                        continue
                    contained = row[0] == 1.0 and (row[3] == 1.0 or not parallel)
                    if not (contained and row[1] is not None and row[1] <= doc_of[seen[k]]):
                        missed += 1
                        print(f"  not contained: {src[seen[k]]!r} / {tgt[seen[k]]!r}: {row}")
                failures += missed
                what = "source and pair exposure 1" if parallel else "source exposure 1"
                print(
                    f"  known answer: {len(rows) - missed - short:,} of {len(rows) - short:,} seen "
                    f"segments contained ({what}) at their document or an earlier one ({short} "
                    f"with a text shorter than {SMALLEST_ORDER} characters left out: such a text "
                    f"is one gram, itself); by Jaccard {far_by_jaccard:,} of all "
                    f"{len(rows):,} are in the far bin"
                )
        if failures:
            raise SystemExit(f"{failures} seen segments were not found contained")
        if far_by_jaccard != len(jaccard_seen):
            raise SystemExit(
                f"by Jaccard only {far_by_jaccard} of {len(jaccard_seen)} seen segments are far"
            )
        print("\nPASS: every seen segment is contained, and far by Jaccard")


if __name__ == "__main__":
    main()
