"""Reading judgment files: MQM TSV spans and no-error lines, JSON Lines for MQM, ESA and DA, and
one-line errors naming the file and line."""

from __future__ import annotations

import json

import pytest

from tests.mqm import ERRORS, HEADER, TARGETS, mqm_lines, write_mqm
from warehouse.errors import InputError, UsageError
from warehouse.inputs.human_files import NO_ERROR, read_human_file, strip_marks


def test_an_mqm_tsv_gives_one_annotation_per_line_with_spans_into_the_stripped_target(tmp_path):
    human = read_human_file(write_mqm(tmp_path / "a.tsv"), "mqm-tsv")
    assert human.scheme == "mqm" and len(human.annotations) == len(ERRORS)
    assert human.systems == ["A", "B", "C", "ref"]
    c11 = [a for a in human.annotations if (a.system, a.seg_key) == ("C", "11")]
    assert [(a.category, a.severity, a.span) for a in c11] == [
        ("Fluency/Grammar", "Major", (6, 10)),
        ("Style/Awkward", "Minor", (0, 5)),
    ]
    assert c11[0].target == TARGETS["C"][1] and c11[0].line == 16
    assert [a.severity for a in human.annotations if a.system == "ref"] == [NO_ERROR] * 4


def test_spans_of_several_marks_a_mark_left_open_and_unbalanced_marks():
    where = ("f.tsv", 3)
    assert strip_marks("a <v>b</v> c <v>d</v> e", where, "target") == ("a b c d e", (2, 7))
    assert strip_marks("one <v>two three", where, "target") == ("one two three", (4, 13))
    with pytest.raises(InputError, match=r"^f.tsv:3: unbalanced"):
        strip_marks("a </v>b<v> c", where, "target")


def test_the_same_file_gives_the_same_hash_and_another_name_keeps_it(tmp_path):
    first = read_human_file(write_mqm(tmp_path / "a.tsv"), "mqm-tsv")
    again = read_human_file(write_mqm(tmp_path / "b.tsv"), "mqm-tsv", name="other")
    assert first.sha256 == again.sha256 and (first.name, again.name) == ("a.tsv", "other")


@pytest.mark.parametrize(
    ("lines", "problem"),
    [
        (["system\tseg_id\ttarget"], r"a.tsv:1: not an MQM TSV: the header lacks doc, doc_id"),
        ([HEADER, "A\tdoc1\t1\t10"], r"a.tsv:2: 4 tab-separated fields where the header has 9"),
        ([HEADER, "A\tdoc1\t1\t\tr1\ts\tt\tc\tMajor"], r"a.tsv:2: empty seg_id"),
        ([HEADER, "A\tdoc1\t1\t10\tr1\ts\t<v>t\tc\t</v>Major"], None),
        ([HEADER], r"a.tsv: no judgments after the header"),
    ],
)
def test_a_broken_mqm_tsv_is_refused_naming_the_line(tmp_path, lines, problem):
    path = write_mqm(tmp_path / "a.tsv", lines)
    if problem is None:  # marks in the severity column are only text: a severity, checked later
        assert read_human_file(path, "mqm-tsv").annotations[0].severity == "</v>Major"
        return
    with pytest.raises(InputError, match=problem):
        read_human_file(path, "mqm-tsv")


def _jsonl(tmp_path, records):
    path = tmp_path / "j.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_jsonl_judgments_of_each_scheme(tmp_path):
    mqm = read_human_file(_jsonl(tmp_path, [
        {"scheme": "mqm", "system": "A", "seg_id": 10, "rater": "r", "target": "abc",
         "errors": [{"category": "Accuracy", "severity": "Major", "start": 0, "end": 2}]},
    ]), "jsonl")  # fmt: skip
    assert mqm.scheme == "mqm" and [a.severity for a in mqm.annotations] == [NO_ERROR, "Major"]
    assert mqm.annotations[1].span == (0, 2) and mqm.annotations[1].seg_key == "10"
    esa = read_human_file(_jsonl(tmp_path, [
        {"scheme": "esa", "system": "A", "seg_id": "1", "rater": "r", "score": 71,
         "errors": [{"severity": "minor", "start": 1, "end": 2}]},
    ]), "jsonl")  # fmt: skip
    assert esa.scheme == "esa" and esa.annotations[0].score == 71.0
    assert esa.annotations[1].category == "(none)" and esa.annotations[1].score is None
    da = read_human_file(_jsonl(tmp_path, [
        {"scheme": "da", "system": "A", "seg_id": "1", "rater": "r", "score": 64.5},
    ]), "jsonl")  # fmt: skip
    assert da.scheme == "da" and [a.score for a in da.annotations] == [64.5]


@pytest.mark.parametrize(
    ("record", "problem"),
    [
        ({"scheme": "x", "system": "A", "seg_id": 1, "rater": "r"}, r'"scheme" must be one of'),
        ({"scheme": "da", "system": "A", "seg_id": 1, "rater": "r"}, r"finite numeric \"score\""),
        ({"scheme": "da", "system": "A", "seg_id": 1, "rater": "r", "score": "NaN"}, "score"),
        ({"scheme": "mqm", "seg_id": 1, "rater": "r"}, r'missing "system"'),
        ({"scheme": "mqm", "system": "A", "seg_id": 1, "rater": "r", "score": 3}, "not a"),
        ({"scheme": "mqm", "system": "A", "seg_id": 1, "rater": "r", "target": "ab",
          "errors": [{"category": "c", "severity": "Major", "start": 1, "end": 5}]},
         "span 1-5 lies outside the target"),
    ],
)  # fmt: skip
def test_a_broken_jsonl_judgment_is_refused_naming_the_line(tmp_path, record, problem):
    ok = {"scheme": record.get("scheme") if record.get("scheme") in ("mqm", "esa", "da") else "mqm",
          "system": "A", "seg_id": 0, "rater": "r"}  # fmt: skip
    if ok["scheme"] != "mqm":
        ok["score"] = 1
    path = _jsonl(tmp_path, [ok, record])
    with pytest.raises(InputError, match=rf"j.jsonl:2: .*{problem}"):
        read_human_file(path, "jsonl")


def test_one_scheme_per_jsonl_file_and_a_known_format(tmp_path):
    path = _jsonl(tmp_path, [
        {"scheme": "da", "system": "A", "seg_id": 1, "rater": "r", "score": 1},
        {"scheme": "esa", "system": "A", "seg_id": 1, "rater": "r", "score": 1},
    ])  # fmt: skip
    with pytest.raises(InputError, match=r"j\.jsonl:2: scheme esa in a file of da judgments"):
        read_human_file(path, "jsonl")
    with pytest.raises(UsageError, match="--format"):
        read_human_file(path, "csv")


def test_an_empty_file_is_refused(tmp_path):
    path = tmp_path / "e.tsv"
    path.write_bytes(b"")
    with pytest.raises(InputError, match=r"e\.tsv: empty file"):
        read_human_file(path, "mqm-tsv")


def test_the_example_lines_round_trip(tmp_path):
    lines = mqm_lines()
    assert lines[0] == HEADER and len(lines) == len(ERRORS) + 1


def test_esa_and_da_tsv_give_one_scored_judgment_per_line(tmp_path):
    path = tmp_path / "da.tsv"
    path.write_text("system\tseg_id\trater\tscore\ttarget\nA\t0\tr1\t71.5\tabc\nB\t0\tr1\t12\tx\n",
                    encoding="utf-8")  # fmt: skip
    da = read_human_file(path, "da")
    assert da.scheme == "da" and [(a.system, a.score, a.target) for a in da.annotations] == [
        ("A", 71.5, "abc"),
        ("B", 12.0, "x"),
    ]
    assert read_human_file(path, "esa").scheme == "esa"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("system\tseg_id\tscore\n", r"da\.tsv:1: not a DA TSV: the header lacks rater"),
        (
            "system\tseg_id\trater\tscore\nA\t0\tr\tgood\n",
            r"da\.tsv:2: score 'good' is not a finite",
        ),
        ("system\tseg_id\trater\tscore\nA\t0\tr\tnan\n", r"da\.tsv:2: score 'nan' is not a finite"),
        ("system\tseg_id\trater\tscore\nA\t0\tr\n", r"da\.tsv:2: 3 tab-separated fields"),
    ],
)
def test_a_broken_score_tsv_is_refused_naming_the_line(tmp_path, text, problem):
    path = tmp_path / "da.tsv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=problem):
        read_human_file(path, "da")


def test_a_repeated_error_line_is_kept_once_with_a_warning_or_refused_when_strict(tmp_path):
    lines = mqm_lines()
    repeated = [*lines, lines[14], lines[14], lines[6]]  # C/10's Minor twice more, A/11 once
    path = write_mqm(tmp_path / "a.tsv", repeated)
    human = read_human_file(path, "mqm-tsv")
    assert len(human.annotations) == len(ERRORS)
    [warning] = human.warnings
    assert "3 judgment line(s) repeat an earlier one" in warning
    assert "lines 20 (= 15), 21 (= 15), 22 (= 7)" in warning
    with pytest.raises(InputError, match=r"a.tsv:20: repeats line 15 .*--strict"):
        read_human_file(path, "mqm-tsv", strict=True)
    # Another rater, span or severity is another judgment, not a repeat.
    other = [*lines, lines[14].replace("\tr1\t", "\tr2\t"), lines[14].replace("\tMinor", "\tMajor")]
    assert read_human_file(write_mqm(tmp_path / "b.tsv", other), "mqm-tsv").warnings == []


@pytest.mark.parametrize(
    ("field", "char"),
    [(4, "\x00"), (4, "\x1b"), (6, "\x07"), (7, "\x1b[31m"), (8, "\x7f"), (3, "\x85")],
)
def test_a_control_character_in_a_text_field_is_refused_naming_the_line(tmp_path, field, char):
    lines = mqm_lines()
    fields = lines[3].split("\t")
    fields[field] = fields[field][:2] + char + fields[field][2:]
    lines[3] = "\t".join(fields)
    path = write_mqm(tmp_path / "a.tsv", lines)
    with pytest.raises(InputError, match=r"^.*a.tsv:4: the \w+ holds the control character U\+00"):
        read_human_file(path, "mqm-tsv")


def test_a_control_character_in_a_json_lines_comment_is_refused(tmp_path):
    error = {"category": "Style", "severity": "Minor", "comment": "bad\u001b[2J"}
    record = {"system": "A", "seg_id": "10", "rater": "r1", "scheme": "mqm", "errors": [error]}
    path = tmp_path / "a.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    with pytest.raises(
        InputError, match=r"a.jsonl:1: the comment holds the control character U\+001B"
    ):
        read_human_file(path, "jsonl")
