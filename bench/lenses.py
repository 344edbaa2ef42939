"""Exposure measures against documents: containment vs Jaccard on real text joined into documents.

Run: python bench/lenses.py --real /tmp/rd/en-fr [--repeat 3] [--seen 2000]
     python bench/lenses.py --real /tmp/rd/en-fr --scale 1.0 [--segments 2000]
     python bench/lenses.py --real /tmp/rd/en-fr --minhash [--repeat 3]
     python bench/lenses.py --real /tmp/rd/en-fr --sides [--repeat 3]

The real en-fr training corpus (230,986 pairs, the unpacked folder or en-fr.tar.gz) is shuffled
(seed 7) and joined into documents of 50-500 lines each (English and French documents aligned line
by line), registered twice: as a parallel corpus of documents (`corpus add --src --tgt`) and as
English monolingual text (`corpus add --text --lang en`). Two test sets:
- `seen`: --seen training pairs drawn at random (seed 11): every one sits verbatim inside one
  document, a known answer;
- `unseen`: the real in-domain test set, whose sources were held out of training.
Audits (each a child process, medians of --repeat runs, a fresh copy of the loaded warehouse each
time, so no audit or stored index is reused): Jaccard (the reference), containment and the
substring lens against the parallel documents, containment against the monolingual text. Printed:
wall and CPU seconds and peak memory as ratios of the Jaccard audit; then, per test set, the share
of segments whose source (and pair) exposure is 1, the share in the far bin and the median source
exposure. Checked (exit 1 otherwise): by containment every seen segment has source exposure 1
(against the parallel documents, target and pair exposure too) at a document holding it or an
earlier one holding all its grams, except a text shorter than the smallest gram order (one gram,
itself); by Jaccard every seen segment is in the far bin; by the substring lens every seen segment
occurs whole (source exposure 1, exact) in its own document or an earlier one.

--scale GIB instead measures the substring lens on at least GIB GiB of text: the en-fr training
text (English and French) shuffled into documents of 50-500 lines, round after round, each round
after the first perturbed (seed = round: in a third of the lines two neighbouring words swap, in a
fifth one word is replaced by another word of the corpus) until the size is reached, registered as
a text corpus. The test set: --segments training pairs of the first round (seen verbatim). Printed:
the text corpus's registration; the substring audit that builds the suffix arrays (wall, CPU, peak
memory, shards, bytes on disk per text byte) and a second one that memory-maps them (time per
segment); checked (exit 1 otherwise): every segment occurs whole, and on 20 of them the stored
place of the longest match and the whole-segment count equal a scan of the text; then the lens on
a subsample of 300 documents against the brute-force oracle, segment by segment. With --gram-audits
also the containment and the Jaccard audits of the same corpus (within --memory-limit), each on a
fresh copy of the warehouse, so each builds its gram index.

--minhash instead compares the MinHash lens with the exact Jaccard audit on the sentence-level
corpus (the 230,986 training pairs) for the real held-out `test` set and --seen training pairs:
wall and CPU time of each audit (medians of --repeat children on fresh copies, index built), and
on every segment the agreement of the MinHash audit with the exact one: same nearest row, same
bin, near (>= 0.7) and exact segments found, mean |estimate - Jaccard| where the row agrees.

--sides instead audits a monolingual text in the target language: the French side of the
documents above, registered as `corpus add --text --lang fr`, against the seen and unseen test
sets labelled en-fr. Its default audit searches the references alone (`--side target`); the
reference is the same audit of both sides (`--side both`). Printed: wall and CPU time of each
(medians of --repeat children, index built) and the ratio; per test set the share of segments
whose references lie whole in a document (target exposure 1), the far share by target exposure.
Checked (exit 1 otherwise): the target side alone equals the target columns of the audit of both
sides, segment by segment; every seen reference has target exposure 1 (except one shorter than
the smallest gram order); the source and pair columns of the one-sided audit are NULL.
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
import time
from pathlib import Path

from measure import Measurement, compile_package_sources, machine, median_each, run_child

from warehouse import Warehouse
from warehouse.exposure.normalize import normalize

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.exposure.substring_brute import lens as brute_lens

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


EXPOSURE_COLUMNS = "source_exposure, source_nn, target_exposure, pair_exposure, bin"
TARGET_COLUMNS = (
    "target_exposure, target_nn, target_ref_idx, target_exact, source_exposure, pair_exposure, bin"
)


def _exposures(db: Path, audit_id: str, columns: str = EXPOSURE_COLUMNS) -> list[tuple]:
    """An audit's exposure rows in segment order (`columns`: one of the lists above)."""
    with Warehouse.open(str(db), access="read") as wh:
        return wh.con.execute(
            f"SELECT {columns} FROM exposures WHERE audit_id = ? ORDER BY seg_idx", [audit_id]
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


def _perturbed(line: str, rng: random.Random, vocab: list[str]) -> str:
    """The line with, in a third of cases, two neighbouring words swapped and, in a fifth, one
    word replaced by another word of the corpus."""
    words = line.split(" ")
    if len(words) > 1 and rng.random() < 1 / 3:
        i = rng.randrange(len(words) - 1)
        words[i], words[i + 1] = words[i + 1], words[i]
    if words and rng.random() < 0.2:
        words[rng.randrange(len(words))] = rng.choice(vocab)
    return " ".join(words)


def _big_corpus(src: list[str], tgt: list[str], path: Path, size: int) -> tuple[int, int, int]:
    """Documents of 50-500 lines of English or French, round after round until `size` bytes;
    returns documents, bytes and rounds."""
    vocab = random.Random(0).sample(" ".join(src[:20000] + tgt[:20000]).split(" "), 5000)
    total = docs = rounds = 0
    with path.open("w", encoding="utf-8") as out:
        while total < size:
            rng = random.Random(rounds)
            order = list(range(len(src)))
            rng.shuffle(order)
            at = 0
            while at < len(order):
                rows = order[at : at + rng.randint(50, 500)]
                for lines in (src, tgt):
                    picked = (lines[r] for r in rows)
                    if rounds:
                        picked = (_perturbed(line, rng, vocab) for line in picked)
                    text = " ".join(picked) + "\n"
                    out.write(text)
                    total += len(text.encode())
                    docs += 1
                at += len(rows)
            rounds += 1
    return docs, total, rounds


def _lens_rows(db: Path, audit_id: str) -> list[tuple]:
    with Warehouse.open(str(db), access="read") as wh:
        return wh.con.execute(
            "SELECT seg_idx, side, chars, longest_chars, longest_start, train_seg_idx, "
            "train_offset, whole_count, words8_found, words8_total, words13_found, "
            "words13_total FROM substring_lens WHERE audit_id = ? ORDER BY seg_idx, side",
            [audit_id],
        ).fetchall()


def _collapsed(text: str) -> str:
    return " ".join(normalize(text).split())


def _overlapping(text: str, piece: str) -> int:
    count, at = 0, text.find(piece)
    while at >= 0:
        count += 1
        at = text.find(piece, at + 1)
    return count


def _timed_audit(db: Path, work: Path, label: str, *args: str) -> tuple[Measurement, dict]:
    out = work / "audit.json"
    with out.open("w") as stdout:
        m = run_child(label, _tame(db, "audit", *args, "--json"), stdout=stdout)
    return m, json.loads(out.read_text())


def _scale(args: argparse.Namespace, work: Path, src: list[str], tgt: list[str]) -> None:
    """The substring lens on at least `args.scale` GiB of real text (see the module's text)."""
    size = int(args.scale * 2**30)
    docs_path = work / "big.txt"
    started = time.perf_counter()
    n_docs, text_bytes, rounds = _big_corpus(src, tgt, docs_path, size)
    print(
        f"\nScale: {text_bytes / 2**30:.2f} GiB of en-fr text in {n_docs:,} documents of 50-500 "
        f"lines ({rounds} rounds, the first unperturbed), written in "
        f"{time.perf_counter() - started:.0f} s"
    )
    print(machine())
    seen = random.Random(SEED_SEEN).sample(range(len(src)), args.segments)
    db = work / "big.duckdb"
    added = run_child("corpus add", _tame(db, "corpus", "add", "big", "--text", str(docs_path),
                                          "--lang", "en"))  # fmt: skip
    print(f"corpus add --text: {added.seconds:.1f} s wall, peak {added.peak_mib:,.0f} MiB")
    seen_en = _write(work / "s.en", [src[i] for i in seen])
    seen_fr = _write(work / "s.fr", [tgt[i] for i in seen])
    run_child("testset add", _tame(db, "testset", "add", "seen", "--src", str(seen_en),
                                   "--ref", str(seen_fr)))  # fmt: skip
    limit = ["--memory-limit", args.memory_limit] if args.memory_limit else []
    base = ["--train", "big", "--testset", "seen", "--measure", "substring", *limit]
    built, first = _timed_audit(db, work, "substring audit, building", *base)
    loaded, second = _timed_audit(db, work, "substring audit, stored", *base, "--force")
    t1, t2 = first["timings"], second["timings"]
    index_bytes = t1["index_bytes"]
    print(
        f"build (audit 1): {built.seconds:.1f} s wall ({t1['index_seconds']:.1f} s reading, "
        f"normalising and building {t1['index_shards']:.0f} shard(s)), {built.cpu_seconds:.1f} s "
        f"CPU, peak {built.peak_mib:,.0f} MiB; on disk {index_bytes / 2**30:.2f} GiB = "
        f"{index_bytes / text_bytes:.2f} bytes per text byte"
    )
    per_segment = t2["search_seconds"] / args.segments * 1000
    print(
        f"stored (audit 2): {loaded.seconds:.1f} s wall, opening and verifying "
        f"{t2['index_seconds']:.1f} s, lens of {args.segments:,} segments (source and reference) "
        f"{t2['search_seconds']:.2f} s = {per_segment:.2f} ms per segment, peak "
        f"{loaded.peak_mib:,.0f} MiB"
    )
    _projection(t1, t2, text_bytes, args.segments)
    failures = []
    if index_bytes / text_bytes > 8:
        failures.append(f"{index_bytes / text_bytes:.2f} bytes per text byte (target <= 8)")
    if t1["index_seconds"] > 15 * 60:
        failures.append(f"build took {t1['index_seconds']:.0f} s (target < 15 min)")
    if per_segment > 20:
        failures.append(f"{per_segment:.1f} ms per segment (target < 20)")
    rows = _lens_rows(db, second["audit_id"])
    if rows != _lens_rows(db, first["audit_id"]):
        failures.append("the stored shards answered differently from the fresh ones")
    whole = sum(r[7] > 0 for r in rows if r[1] == "source")
    print(f"seen segments occurring whole: {whole:,} of {args.segments:,} sources")
    if whole != args.segments:
        failures.append(f"only {whole} of {args.segments} seen sources occur whole")
    # The stored place and count of 20 segments against a scan of the text.
    checked = rows[: 2 * 20 : 2]
    segs = [_collapsed(src[seen[r[0]]]) for r in checked]
    counts = [0] * len(segs)
    places: dict[int, str] = {}
    wanted = {r[5]: None for r in checked}
    with docs_path.open(encoding="utf-8") as lines:
        for d, line in enumerate(lines):
            doc = _collapsed(line)
            for k, seg in enumerate(segs):
                counts[k] += _overlapping(doc, seg)
            if d in wanted:
                places[d] = doc
    for r, seg, count in zip(checked, segs, counts, strict=True):
        at, start, longest = r[6], r[4], r[3]
        if places[r[5]][at : at + longest] != seg[start : start + longest] or r[7] != count:
            failures.append(f"segment {r[0]}: stored {r} but the text scan disagrees")
    print(f"scan of the text: place and whole count of {len(checked)} segments agree")
    _subsample(work, docs_path, src, failures)
    if args.gram_audits:
        for measure in ("containment", "jaccard"):
            # Each on a fresh copy without stored indexes: both build their gram index.
            fresh = work / f"gram-{measure}.duckdb"
            shutil.copyfile(db, fresh)
            m, doc = _timed_audit(fresh, work, measure, "--train", "big", "--testset", "seen",
                                  "--measure", measure, *limit)  # fmt: skip
            ratio = m.seconds / built.seconds
            print(f"{measure} audit: {m.seconds:.1f} s wall, peak {m.peak_mib:,.0f} MiB "
                  f"({ratio:.2f}x the substring audit that built its index)")  # fmt: skip
    if failures:
        raise SystemExit("FAIL: " + "; ".join(failures))
    print("PASS: within every target, every seen segment found whole, equal to the scans")


SUBSAMPLE_DOCS, PROBES = 60, 40
TERABYTE = 2**40
CORES_PER_NODE = 2  # as this machine; a node builds or searches one shard per core


def _projection(built: dict, stored: dict, text_bytes: int, segments: int) -> None:
    """A projection (not a measurement) to 1 TiB of text on N nodes from this run's figures per
    default-sized shard (time scaled by text bytes, which overstates the lens: a suffix array's
    search grows with the logarithm of its size): build, disk, and lens time per segment with
    the shards spread over the nodes."""
    from warehouse.exposure.index.substring import DEFAULT_SHARD_BYTES

    share = DEFAULT_SHARD_BYTES / text_bytes  # of this run's text in one default shard
    build_per_shard = built["index_seconds"] * share
    lens_per_shard = stored["search_seconds"] / segments * share  # seconds per segment
    disk_per_byte = built["index_bytes"] / text_bytes
    needed = TERABYTE / DEFAULT_SHARD_BYTES
    print(
        f"PROJECTION to 1 TiB of text from this run, per {DEFAULT_SHARD_BYTES / 2**20:,.0f} MiB "
        f"shard (build {build_per_shard:.1f} s, lens {lens_per_shard * 1000:.3f} ms per segment, "
        f"{disk_per_byte:.2f} disk bytes per text byte): {needed:,.0f} shards, "
        f"{TERABYTE * disk_per_byte / 2**40:.1f} TiB on disk"
    )
    for nodes in (1, 8, 64):
        waves = needed / (nodes * CORES_PER_NODE)
        hours, ms = waves * build_per_shard / 3600, waves * lens_per_shard * 1000
        print(
            f"  {nodes:>3} node(s) x {CORES_PER_NODE} cores: build {hours:,.1f} h, lens "
            f"{ms:,.1f} ms per segment (shards searched in parallel)"
        )


def _subsample(work: Path, docs_path: Path, src: list[str], failures: list[str]) -> None:
    """The lens of probes on the first documents of the corpus against the brute-force oracle:
    spans of those documents (seen) and unseen training lines."""
    with docs_path.open(encoding="utf-8") as lines:
        docs = [next(lines).rstrip("\n") for _ in range(SUBSAMPLE_DOCS)]
    rng = random.Random(SEED_SEEN)
    probes = []
    for _ in range(PROBES // 2):
        words = rng.choice(docs).split(" ")
        at = rng.randrange(max(len(words) - 20, 1))
        probes.append(" ".join(words[at : at + rng.randint(8, 20)]))
    probes += rng.sample(src, PROBES - len(probes))
    db = work / "sub.duckdb"
    run_child("sub corpus", _tame(db, "corpus", "add", "sub", "--text",
                                  str(_write(work / "sub.txt", docs)), "--lang", "en"))  # fmt: skip
    run_child("sub testset", _tame(db, "testset", "add", "probe",
                                   "--src", str(_write(work / "p.src", probes)),
                                   "--ref", str(_write(work / "p.ref", probes))))  # fmt: skip
    _, doc = _timed_audit(db, work, "sub audit", "--train", "sub", "--testset", "probe",
                          "--measure", "substring")  # fmt: skip
    normal = [normalize(d) for d in docs]
    wrong = 0
    for r in _lens_rows(db, doc["audit_id"]):
        if r[1] != "source":
            continue
        want = brute_lens(normal, normalize(probes[r[0]]))
        got = (r[2], r[3], r[4], (r[5], r[6]) if r[5] is not None else None, r[7],
               ((r[8], r[9]), (r[10], r[11])))  # fmt: skip
        if got != (want.chars, want.longest, want.start, want.place, want.count, want.grams):
            wrong += 1
    print(f"subsample ({SUBSAMPLE_DOCS} documents, {PROBES} probes): {PROBES - wrong} of "
          f"{PROBES} equal to the brute-force oracle")  # fmt: skip
    if wrong:
        failures.append(f"{wrong} probes differ from brute force on the subsample")


def _minhash(
    args: argparse.Namespace, work: Path, real: Path, src: list[str], tgt: list[str]
) -> None:
    """The MinHash lens against the exact Jaccard audit on the sentence-level corpus."""
    seen = random.Random(SEED_SEEN).sample(range(len(src)), args.seen)
    loaded = work / "loaded.duckdb"
    seen_en = str(_write(work / "seen.en", [src[i] for i in seen]))
    seen_fr = str(_write(work / "seen.fr", [tgt[i] for i in seen]))
    setup = [
        ["corpus", "add", "enfr", "--src", str(real / "train.src"),
         "--tgt", str(real / "train.tgt")],
        ["testset", "add", "seen", "--src", seen_en, "--ref", seen_fr],
        ["testset", "add", "test", "--src", str(real / "test.src"),
         "--ref", str(real / "test.ref")],
    ]  # fmt: skip
    for step in setup:
        run_child("set-up", _tame(loaded, *step))
    print(f"\nMinHash vs exact Jaccard: {len(src):,} training pairs; {machine()}; medians of "
          f"{args.repeat} runs, each on a fresh copy (index built)")  # fmt: skip
    failures = 0
    for testset in ("test", "seen"):
        exact, exact_id = _audit(loaded, work, f"jaccard {testset}", args.repeat,
                                 "--train", "enfr", "--testset", testset)  # fmt: skip
        approx, approx_id = _audit(loaded, work, f"minhash {testset}", args.repeat,
                                   "--train", "enfr", "--testset", testset,
                                   "--measure", "minhash")  # fmt: skip
        dbs = sorted(work.glob("run-*.duckdb"))
        want = _exposures(next(d for d in dbs if f"jaccard-{testset}" in d.name), exact_id)
        got = _exposures(next(d for d in dbs if f"minhash-{testset}" in d.name), approx_id)
        n = len(want)
        same_row = sum(w[1] == g[1] for w, g in zip(want, got, strict=True))
        same_bin = sum(w[4] == g[4] for w, g in zip(want, got, strict=True))
        near = [(w, g) for w, g in zip(want, got, strict=True) if w[0] >= 0.7]
        near_found = sum(g[1] == w[1] or g[0] >= 0.7 for w, g in near)
        matched = [abs(w[0] - g[0]) for w, g in zip(want, got, strict=True) if w[1] == g[1]]
        print(
            f"{testset:<5} exact {exact.seconds:6.2f} s ({exact.cpu_seconds:6.2f} CPU, "
            f"{exact.peak_mib:,.0f} MiB)  minhash {approx.seconds:6.2f} s "
            f"({approx.seconds / exact.seconds:.2f}x wall, {approx.cpu_seconds:6.2f} CPU, "
            f"{approx.peak_mib:,.0f} MiB)"
        )
        print(
            f"      same nearest row {same_row / n:6.1%}  same bin {same_bin / n:6.1%}  near "
            f"(Jaccard >= 0.7) found {near_found:,} of {len(near):,}  mean |estimate - Jaccard| "
            f"{statistics.fmean(matched) if matched else 0:.3f} where the row agrees"
        )
        for path in dbs:
            path.unlink()
            shutil.rmtree(f"{path}.indexes", ignore_errors=True)
        if near and near_found < 0.95 * len(near):
            failures += 1
    if failures:
        raise SystemExit("FAIL: MinHash missed more than 5% of the near segments")
    print("PASS: MinHash found at least 95% of the near segments of each test set")


def _sides(
    args: argparse.Namespace, work: Path, real: Path, src: list[str], tgt: list[str]
) -> None:
    """A monolingual French text searched on the references alone, against both sides."""
    _, docs_fr, _ = _documents(src, tgt)
    seen = random.Random(SEED_SEEN).sample(range(len(src)), args.seen)
    loaded = work / "loaded.duckdb"
    seen_en = str(_write(work / "seen.en", [src[i] for i in seen]))
    seen_fr = str(_write(work / "seen.fr", [tgt[i] for i in seen]))
    labels = ["--src-lang", "en", "--tgt-lang", "fr"]
    setup = [
        ["corpus", "add", "web-fr", "--text", str(_write(work / "docs.fr", docs_fr)),
         "--lang", "fr"],
        ["testset", "add", "seen", "--src", seen_en, "--ref", seen_fr, *labels],
        ["testset", "add", "unseen", "--src", str(real / "test.src"),
         "--ref", str(real / "test.ref"), *labels],
    ]  # fmt: skip
    for step in setup:
        run_child("set-up", _tame(loaded, *step))
    text_bytes = sum(len(d.encode()) for d in docs_fr)
    print(
        f"\nSides: {len(docs_fr):,} French documents ({text_bytes / 2**20:.1f} MiB) as a text "
        f"corpus in the test sets' target language; {machine()}; medians of {args.repeat} "
        "runs, each on a fresh copy (index built)"
    )
    failures: list[str] = []
    for testset in ("seen", "unseen"):
        both, both_id = _audit(
            loaded, work, f"both {testset}", args.repeat,
            "--train", "web-fr", "--testset", testset, "--side", "both",
        )  # fmt: skip
        alone, alone_id = _audit(loaded, work, f"target {testset}", args.repeat,
                                 "--train", "web-fr", "--testset", testset)  # fmt: skip
        dbs = sorted(work.glob("run-*.duckdb"))
        whole = _exposures(
            next(d for d in dbs if f"both-{testset}" in d.name), both_id, TARGET_COLUMNS
        )
        one = _exposures(
            next(d for d in dbs if f"target-{testset}" in d.name), alone_id, TARGET_COLUMNS
        )
        if [r[:4] for r in one] != [r[:4] for r in whole]:
            failures.append(f"{testset}: the target side alone differs from that of both sides")
        if any(r[4] is not None or r[5] is not None for r in one):
            failures.append(f"{testset}: a side not searched is not NULL")
        if testset == "seen":
            missed = sum(
                1 for k, r in enumerate(one)
                if len(normalize(tgt[seen[k]])) >= SMALLEST_ORDER and r[0] != 1.0
            )  # fmt: skip
            if missed:
                failures.append(f"seen: {missed} references not found whole by containment")
        n = len(one)
        print(
            f"{testset:<7} both sides {both.seconds:6.2f} s ({both.cpu_seconds:6.2f} CPU)  "
            f"references alone {alone.seconds:6.2f} s ({alone.cpu_seconds:6.2f} CPU, "
            f"{alone.seconds / both.seconds:.2f}x wall)"
        )
        print(
            f"        target exposure 1: {sum(r[0] == 1.0 for r in one) / n:6.1%}  far by target "
            f"exposure: {sum(r[6] == 'far' for r in one) / n:6.1%}  target_exact: "
            f"{sum(r[6] == 'target_exact' for r in one) / n:6.1%}"
        )
        for path in dbs:
            path.unlink()
            shutil.rmtree(f"{path}.indexes", ignore_errors=True)
    if failures:
        raise SystemExit("FAIL: " + "; ".join(failures))
    print("PASS: the references alone equal the target side of both; every seen reference found")


def main() -> None:
    """Parse arguments and run the comparison."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--real", required=True, help="real en-fr data: folder or .tar.gz")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each audit (median)")
    parser.add_argument("--seen", type=int, default=2000, help="training pairs as a test set")
    parser.add_argument("--scale", type=float, help="measure the substring lens on GIB GiB")
    parser.add_argument("--segments", type=int, default=2000, help="--scale: test segments")
    parser.add_argument("--memory-limit", help="--scale: the audits' --memory-limit")
    parser.add_argument("--gram-audits", action="store_true", help="--scale: gram audits too")
    parser.add_argument("--minhash", action="store_true", help="MinHash vs exact Jaccard")
    parser.add_argument("--sides", action="store_true", help="the references alone vs both")
    args = parser.parse_args()
    compile_package_sources()
    with tempfile.TemporaryDirectory(prefix="tame-bench-lenses-") as tmp:
        work = Path(tmp)
        real = _real_folder(Path(args.real), work)
        src, tgt = _lines(real / "train.src"), _lines(real / "train.tgt")
        if args.scale:
            _scale(args, work, src, tgt)
            return
        if args.minhash:
            _minhash(args, work, real, src, tgt)
            return
        if args.sides:
            _sides(args, work, real, src, tgt)
            return
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
            ("substring, parallel documents", "docs", ["--measure", "substring"]),
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
                if testset == "seen" and "substring" in label:
                    missed = sum(
                        1
                        for k, row in enumerate(rows)
                        if normalize(src[seen[k]]).strip()
                        and not (row[0] == 1.0 and row[1] is not None and row[1] <= doc_of[seen[k]])
                    )
                    failures += missed
                    print(
                        f"  known answer: {len(rows) - missed:,} of {len(rows):,} seen segments "
                        "occur whole in their document or an earlier one (source exposure 1)"
                    )
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
        print("\nPASS: every seen segment is contained and occurs whole, and is far by Jaccard")


if __name__ == "__main__":
    main()
