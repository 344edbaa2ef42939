"""Human judgments on real data: Google's expert MQM annotations of WMT21 TED zh-en (`--ted`, the
`wmt21-ted-zhen/` folder or its archive).

Run: python bench/human.py --ted wmt21-ted-zhen.tar.gz [--repeat 3]

Checks first (exit 1 on any mismatch): after `tame-wh ingest --mqm … --reference-system refB`,
every per-segment MQM score of the 14 other systems equals the published
`mqm_ted_zhen.avg_seg_scores.tsv` (negated), every system score equals the published table to 3
decimals, and the system-level Pearson and Kendall tau-b that `tame-wh meta --json` prints equal
scipy's on the systems' scores it prints.

Then times, as child processes (medians of --repeat; wall, CPU, peak memory):
- `ingest --mqm` of the whole file (test set, 14 scored runs with bootstrap intervals, 7,406
  judgments) into a new warehouse;
- `human add` of the whole file as a second set on those runs (parse, attach, check every target
  against the stored hypothesis, write); target (issue 35) under 2 s;
- `meta` over all runs (BLEU, chrF++, chrF, TER; system level with 1,000 bootstrap resamples,
  segment level);
  target under 2 s.
References, measured in the same run: for `human add`, a Python script that reads the same TSV
with the csv module and computes every segment's MQM score (no checks, nothing stored); for
`meta`, a script scoring the 14 systems' corpus BLEU, chrF++ and TER with sacrebleu against refB
and correlating them with the published system scores with scipy (system level only, no
intervals).
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from measure import (
    load_average,
    machine,
    median_each,
    print_ratio_table,
    run_child,
)
from ted import ted_folder

TSV = "mqm_ted_zhen.tsv"
SEGMENT_SCORES = "mqm_ted_zhen.avg_seg_scores.tsv"
# The repository's published system-level MQM table (its README), by the names the TSV uses.
PUBLISHED = {
    "refB": 0.415,
    "DIDI-NLP": 1.651,
    "metricsystem2": 1.760,
    "metricsystem1": 1.902,
    "MiSS": 1.971,
    "IIE-MT": 1.981,
    "metricsystem4": 2.049,
    "metricsystem5": 2.151,
    "SMU": 2.202,
    "Borderline": 2.405,
    "NiuTrans": 2.487,
    "Facebook-AI": 2.636,
    "Online-W": 2.925,
    "metricsystem3": 2.989,
    "ref": 5.515,
}
TAME_WH = [sys.executable, "-m", "warehouse.cli"]

REFERENCE_ADD = """
import csv, re, sys
weights = {("major", ""): 5, ("major", "non-translation"): 25, ("minor", ""): 1,
           ("minor", "fluency/punctuation"): 0.1}
scores = {}
with open(sys.argv[1], encoding="utf-8", newline="") as f:
    for row in csv.DictReader(f, delimiter="\\t", quoting=csv.QUOTE_NONE):
        target = re.sub("</?v>", "", row["target"])
        key = (row["system"], row["seg_id"], row["rater"])
        severity, category = row["severity"].lower(), row["category"].lower().rstrip("!")
        weight = weights.get((severity, category), weights.get((severity, ""), 0))
        scores[key] = scores.get(key, 0) + weight
print(len(scores))
"""

REFERENCE_META = """
import csv, re, sys
import sacrebleu
from scipy.stats import kendalltau, pearsonr
published = {published!r}
texts = {{}}
with open(sys.argv[1], encoding="utf-8", newline="") as f:
    for row in csv.DictReader(f, delimiter="\\t", quoting=csv.QUOTE_NONE):
        texts.setdefault(row["system"], {{}}).setdefault(int(row["seg_id"]),
                                                         re.sub("</?v>", "", row["target"]))
segments = sorted(texts["refB"])
reference = [texts["refB"][s] for s in segments]
systems = sorted(s for s in texts if s != "refB")
human = [-published[s] for s in systems]
metrics = ((sacrebleu.BLEU(), 1), (sacrebleu.CHRF(word_order=2), 1), (sacrebleu.TER(), -1))
for metric, sign in metrics:
    scores = [sign * metric.corpus_score([texts[s][k] for k in segments], [reference]).score
              for s in systems]
    print(pearsonr(scores, human)[0], kendalltau(scores, human, variant="b")[0])
"""


def _check(db: Path, folder: Path) -> int:
    """Mismatches of the stored scores and of `meta`'s correlations against the known answers."""
    import duckdb
    from scipy.stats import kendalltau, pearsonr

    con = duckdb.connect(str(db), read_only=True)
    stored = {
        (m, k): v
        for m, k, v in con.execute(
            "SELECT r.model_slug, s.seg_key, g.score FROM human_segment_scores g "
            "JOIN runs r USING (run_id) JOIN segments s ON s.corpus_id = r.test_corpus_id "
            "AND s.seg_idx = g.seg_idx"
        ).fetchall()
    }
    systems = dict(con.execute("SELECT model_slug, score FROM human_run_scores").fetchall())
    con.close()
    bad = checked = 0
    names = {"ref-A": "ref", "ref-B": "refB"}
    for line in (folder / SEGMENT_SCORES).read_text(encoding="utf-8").splitlines()[1:]:
        system, rest = line.split("\t")
        value, seg = rest.split(" ")
        system = names.get(system, system)
        if value == "None" or system == "refB":
            continue
        checked += 1
        got = stored.get((system, seg))
        if got is None or abs(got + float(value)) > 1e-9:
            bad += 1
    print(f"per-segment MQM: {checked:,} published scores, {bad} mismatches")
    wrong = [s for s, v in systems.items() if round(v, 3) != PUBLISHED[s]]
    print(
        f"system MQM: {len(systems)} systems, {len(wrong)} differ from the published table "
        f"{wrong or ''}"
    )
    done = subprocess.run(
        [*TAME_WH, "--db", str(db), "meta", "--testset", "ted", "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    report = json.loads(done.stdout)
    off = 0
    for metric, sign in (("bleu", 1), ("chrf_plus_plus", 1), ("ter", -1)):
        scores = [sign * s[metric] for s in report["systems"]]
        human = [-s["human"] for s in report["systems"]]
        ours = {
            r["statistic"]: r["value"]
            for r in report["rows"]
            if r["metric"] == metric and r["level"] == "system" and r["bin"] == "all"
        }
        expected = {
            "pearson": pearsonr(scores, human)[0],
            "kendall": kendalltau(scores, human, variant="b")[0],
        }
        for statistic, value in expected.items():
            if not math.isclose(ours[statistic], value, rel_tol=1e-12, abs_tol=1e-12):
                off += 1
        print(
            f"meta {metric}: Pearson {ours['pearson']:.4f} (scipy {expected['pearson']:.4f}), "
            f"Kendall {ours['kendall']:.4f} (scipy {expected['kendall']:.4f})"
        )
    return bad + len(wrong) + off


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ted", required=True, help="wmt21-ted-zhen/ folder or .tar.gz")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"machine: {machine()}; load average {load_average()}")
    with ted_folder(args.ted) as folder:
        tsv = folder / TSV
        scratch = Path(tempfile.mkdtemp(prefix="tame-bench-human-"))
        try:
            base = scratch / "base.duckdb"
            build = [
                *TAME_WH,
                "--db",
                str(base),
                "ingest",
                "--mqm",
                str(tsv),
                "--reference-system",
                "refB",
                "--testset",
                "ted",
            ]
            subprocess.run(build, check=True, stdout=subprocess.DEVNULL)
            problems = _check(base, folder)
            if problems:
                raise SystemExit(f"{problems} mismatches against the known answers")
            ingest, add, meta, ref_add, ref_meta = [], [], [], [], []
            for i in range(args.repeat):
                fresh = scratch / f"fresh{i}.duckdb"
                ingest.append(
                    run_child(
                        "tame-wh ingest --mqm (14 runs + judgments)",
                        [*build[:4], str(fresh), *build[5:]],
                    )
                )
                copy = scratch / f"copy{i}.duckdb"
                shutil.copy(base, copy)
                add.append(
                    run_child(
                        "tame-wh human add (7,406 judgments, checked)",
                        [
                            *TAME_WH,
                            "--db",
                            str(copy),
                            "human",
                            "add",
                            str(tsv),
                            "--testset",
                            "ted",
                            "--skip-system",
                            "refB",
                            "--name",
                            "again",
                        ],
                    )
                )
                meta.append(
                    run_child(
                        "tame-wh meta (4 metrics, 1,000 resamples)",
                        [*TAME_WH, "--db", str(base), "meta", "--testset", "ted"],
                    )
                )
                ref_add.append(
                    run_child(
                        "reference: csv + MQM weights in Python",
                        [sys.executable, "-c", REFERENCE_ADD, str(tsv)],
                    )
                )
                script = REFERENCE_META.format(published=PUBLISHED)
                ref_meta.append(
                    run_child(
                        "reference: sacrebleu corpus scores + scipy",
                        [sys.executable, "-c", script, str(tsv)],
                    )
                )
            print_ratio_table(
                "adding the judgments",
                median_each(ref_add[0].label, ref_add),
                [median_each(add[0].label, add), median_each(ingest[0].label, ingest)],
            )
            print_ratio_table(
                "metric-human agreement",
                median_each(ref_meta[0].label, ref_meta),
                [median_each(meta[0].label, meta)],
            )
            for label, runs in (("human add", add), ("meta", meta)):
                seconds = median_each(label, runs).seconds
                verdict = "met" if seconds < 2 else "MISSED"
                print(f"target {label} < 2 s: {seconds:.2f} s, {verdict}")
        finally:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
