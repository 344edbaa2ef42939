"""A small MQM annotation file in Google's TSV layout, with its known scores worked out by hand
(Major 5, Minor 1, Minor Fluency/Punctuation 0.1, Major Non-translation! 25)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

HEADER = "system\tdoc\tdoc_id\tseg_id\trater\tsource\ttarget\tcategory\tseverity"
SOURCES = {
    "10": "Der Hund schläft im Garten.",
    "11": "Heute regnet es in Berlin.",
    "12": "Wir trinken Tee am Abend.",
    "13": "Das Buch liegt auf dem Tisch.",
}
TARGETS = {
    "ref": ["The dog sleeps in the garden.", "It is raining in Berlin today.",
            "We drink tea in the evening.", "The book lies on the table."],
    "A": ["The dog sleeps in the garden.", "Today it rains in Berlin.",
          "We drink tea at evening.", "The book is on the table."],
    "B": ["The dog sleeps in garden.", "It rains today in Berlin", "We drink tea in the evening.",
          "Das Buch liegt auf dem Tisch."],
    "C": ["A dog is sleeping in the garden.", "Today rain in Berlin.", "We are drinking tea.",
          "The book on table."],
}  # fmt: skip
# (system, seg_id, rater, span in the target or None, category, severity)
ERRORS = [
    ("ref", "10", "r1", None, "No-error", "No-error"),
    ("ref", "11", "r1", None, "No-error", "No-error"),
    ("ref", "12", "r1", None, "No-error", "No-error"),
    ("ref", "13", "r1", None, "No-error", "No-error"),
    ("A", "10", "r1", None, "No-error", "No-error"),
    ("A", "11", "r1", (0, 5), "Style/Awkward", "Minor"),
    ("A", "12", "r1", (13, 15), "Fluency/Grammar", "Major"),
    ("A", "12", "r2", (13, 15), "Fluency/Grammar", "Minor"),
    ("A", "13", "r1", None, "No-error", "No-error"),
    ("B", "10", "r1", (15, 17), "Fluency/Grammar", "Minor"),
    ("B", "11", "r1", None, "Fluency/Punctuation", "Minor"),
    ("B", "12", "r1", None, "No-error", "No-error"),
    ("B", "13", "r1", (0, 29), "Non-translation!", "Major"),
    ("C", "10", "r1", (0, 1), "Accuracy/Mistranslation", "Minor"),
    ("C", "11", "r1", (6, 10), "Fluency/Grammar", "Major"),
    ("C", "11", "r1", (0, 5), "Style/Awkward", "Minor"),
    ("C", "12", "r1", (0, 20), "Accuracy/Omission", "Major"),
    ("C", "13", "r1", (9, 11), "Accuracy/Omission", "Major"),
]
# Mean over raters of the summed weights, per system and segment.
SEGMENT_SCORES = {
    ("A", "10"): 0.0, ("A", "11"): 1.0, ("A", "12"): 3.0, ("A", "13"): 0.0,
    ("B", "10"): 1.0, ("B", "11"): 0.1, ("B", "12"): 0.0, ("B", "13"): 25.0,
    ("C", "10"): 1.0, ("C", "11"): 6.0, ("C", "12"): 5.0, ("C", "13"): 5.0,
    ("ref", "10"): 0.0, ("ref", "11"): 0.0, ("ref", "12"): 0.0, ("ref", "13"): 0.0,
}  # fmt: skip
SYSTEM_SCORES = {"A": 1.0, "B": 26.1 / 4, "C": 17.0 / 4, "ref": 0.0}


def marked(text: str, span: tuple[int, int] | None) -> str:
    """The text with `<v>…</v>` around the span."""
    if span is None:
        return text
    start, end = span
    return f"{text[:start]}<v>{text[start:end]}</v>{text[end:]}"


def mqm_lines(
    errors: list[tuple[str, str, str, tuple[int, int] | None, str, str]] = ERRORS,
) -> list[str]:
    """The file's lines: the header, then one line per error."""
    keys = list(SOURCES)
    lines = [HEADER]
    for system, seg, rater, span, category, severity in errors:
        target = TARGETS[system][keys.index(seg)]
        lines.append("\t".join([system, "doc1", "1", seg, rater, SOURCES[seg],
                                marked(target, span), category, severity]))  # fmt: skip
    return lines


def write_mqm(path: Path, lines: list[str] | None = None) -> Path:
    """Write the file (or other lines) to `path`."""
    path.write_text("\n".join(lines if lines is not None else mqm_lines()) + "\n", encoding="utf-8")
    return path


def copy_judged(run_cli: Callable[..., Any], tmp_path: Path, db_path: Path) -> None:
    """Put at `db_path` a warehouse made by `ingest --mqm` from the small MQM file (systems A, B,
    C; ref as the reference; test set `t`), a copy made once per test run; the file is written
    to tmp_path as `mqm.tsv`."""
    from tests.backends import TEMPLATES

    mqm = write_mqm(tmp_path / "mqm.tsv")

    def make(path: Path) -> None:
        done = run_cli("ingest", "--mqm", mqm, "--reference-system", "ref", "--testset", "t",
                       db=path)  # fmt: skip
        assert done.exit_code == 0, done.output

    TEMPLATES.copy_built("mqm-judged", make, db_path)
