"""The ingest checks for wrong-but-plausible input on real text: every real system's output must
pass without a warning (no false alarm), and each planted fault must be caught by its check.

    python bench/checks.py --real DIR [--ted DIR]

`--real` is the English→French data (an unpacked `en-fr/` folder's parent, or the folder itself:
test and test-ddtp, two real systems each); `--ted` the WMT21 TED Chinese→English data (12 MT
systems and a human translation against refB). Faults planted in each real output: 15% of the
hypotheses emptied, the references given as hypotheses, the output for another test set, one
line lost at 60% and a blank one added at the end, a whole-file shift, the sources copied.
Prints a table of the warnings each case raised and the time the checks took, and exits 1 when
a real output is warned about or a planted fault is missed.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.ted import ted_systems
from warehouse.ingest import checks

Texts = list[str]


def _all_checks(hyps: Texts, refs: Sequence[Sequence[str]], sources: Texts) -> list[str]:
    """Every text check ingest runs, in its order (the scores-based ones included)."""
    errors: list[str | None] = [None] * len(hyps)
    sample = checks.alignment_sample(hyps, refs, errors)
    shifted = checks.shifted_lines(hyps, refs, errors, sample)
    return [
        *checks.empty_hypotheses(hyps, errors),
        *checks.some_empty(hyps, errors),
        *checks.untranslated(hyps, sources, errors),
        *checks.tokenized_periods(hyps),
        *(shifted or checks.locally_shifted(hyps, refs, errors)),
        *checks.equal_to_references(hyps, refs, errors),
        *checks.unrelated_to_references(hyps, refs, errors, sample),
    ]


def _faults(other: Texts) -> dict[str, tuple[str, Callable[[Texts, Texts, Texts], Texts]]]:
    """Each planted fault: the words its warning must contain, and how it is made from
    (hypotheses, references, sources)."""

    def emptied(h: Texts, _r: Texts, _s: Texts) -> Texts:
        out = list(h)
        for i in random.Random(1).sample(range(len(h)), len(h) * 15 // 100):
            out[i] = ""
        return out

    def lost_line(h: Texts, _r: Texts, _s: Texts) -> Texts:
        cut = len(h) * 6 // 10
        return [*h[:cut], *h[cut + 1 :], ""]

    return {
        "15% empty": ("are empty", emptied),
        "references as hypotheses": ("equal a reference", lambda h, r, s: list(r)),
        "another test set's output": (
            "no better than other segments",
            lambda h, r, s: (other * (len(h) // len(other) + 1))[: len(h)],
        ),
        "a line lost at 60%, one added at the end": ("look shifted", lost_line),
        "whole file shifted by one": ("shifted by", lambda h, r, s: ["", *h[:-1]]),
        "sources copied": ("equal their source", lambda h, r, s: list(s)),
    }


def _case(name: str, hyps: Texts, refs: Texts, sources: Texts, expect: str | None) -> bool:
    """Run the checks on one output; print what they said; whether that was right."""
    started = time.perf_counter()
    said = _all_checks(hyps, [[r] for r in refs], sources)
    seconds = time.perf_counter() - started
    ok = not said if expect is None else any(expect in w for w in said)
    verdict = "ok" if ok else ("FALSE ALARM" if expect is None else "MISSED")
    shown = "; ".join(w[:90] for w in said) or "(no warning)"
    print(f"  {verdict:<11} {seconds * 1000:7.1f} ms  {name:<44} {shown}")
    return ok


def _board(
    title: str, refs: Texts, sources: Texts, systems: dict[str, Texts], other: Texts
) -> bool:
    """Every real system clean, every fault planted in the first system caught."""
    print(f"\n{title}: {len(refs):,} segments, {len(systems)} real outputs")
    ok = all(_case(f"real: {name}", hyps, refs, sources, None) for name, hyps in systems.items())
    first = next(iter(systems.values()))
    for fault, (expect, make) in _faults(other).items():
        if fault == "sources copied" and not any(sources):
            continue
        ok &= _case(f"planted: {fault}", make(first, refs, sources), refs, sources, expect)
    return ok


def _lines(path: Path) -> Texts:
    """A text file's lines."""
    return path.read_text(encoding="utf-8").splitlines()


def main() -> int:
    """Run the boards the arguments name; 1 when a check was wrong."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--real", required=True, help="the en-fr folder (or its parent)")
    parser.add_argument("--ted", help="the wmt21-ted-zhen folder or .tar.gz")
    args = parser.parse_args()
    folder = Path(args.real)
    folder = folder / "en-fr" if (folder / "en-fr").is_dir() else folder
    ok = True
    dev = _lines(folder / "dev.ref")
    for split in ("test", "test-ddtp"):
        systems = {
            path.name.split(".hyp.")[1]: _lines(path)
            for path in sorted(folder.glob(f"{split}.hyp.*"))
        }
        ok &= _board(
            f"en-fr {split}", _lines(folder / f"{split}.ref"), _lines(folder / f"{split}.src"),
            systems, dev,
        )  # fmt: skip
    if args.ted:
        with ted_systems(args.ted) as (reference, systems):
            sources = [""] * len(reference)  # the checks that need sources see none
            ok &= _board("TED zh-en (refB)", reference, sources, systems, dev)
    print("\nall real outputs clean, all faults caught" if ok else "\nSOME CHECK WAS WRONG")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
