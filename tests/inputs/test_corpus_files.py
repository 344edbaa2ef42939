"""Reading corpora from files: documents and monolingual text (`read_text_corpus`)."""

from __future__ import annotations

import gzip
import json

import pytest

from warehouse.errors import InputError, UsageError
from warehouse.inputs.corpus_files import read_text_corpus, read_training_corpus


def test_one_document_per_line_is_one_row_on_both_sides(tmp_path):
    path = tmp_path / "docs.txt"
    path.write_text("first document, long\nsecond one\n\nfourth\n", encoding="utf-8")
    data = read_text_corpus("docs", path, "fr")
    assert data.src == ["first document, long", "second one", "", "fourth"]
    assert data.refs == [data.src] and data.kind == "text" and data.role == "train"
    assert (data.src_lang, data.tgt_lang) == ("fr", "fr")
    assert data.files["text"]["format"] == "lines"


def test_json_lines_give_the_text_field_newlines_and_all(tmp_path):
    path = tmp_path / "docs.jsonl.gz"
    records = [{"text": "a page\nwith two lines", "url": "x"}, {"id": 2, "text": "short"}]
    path.write_bytes(gzip.compress("\n".join(json.dumps(r) for r in records).encode()))
    data = read_text_corpus("docs", path)
    assert data.src == ["a page\nwith two lines", "short"]
    assert data.files["text"]["format"] == "jsonl"
    # The format can be named whatever the file is called.
    plain = tmp_path / "docs.data"
    plain.write_text(json.dumps({"text": "x"}) + "\n", encoding="utf-8")
    assert read_text_corpus("d", plain, fmt="jsonl").src == ["x"]
    assert read_text_corpus("d", plain).src == ['{"text": "x"}']


@pytest.mark.parametrize(
    ("lines", "message", "line"),
    [
        (['{"text": "ok"}', '{"body": "no text"}'], 'expected a string field "text"', 2),
        (['{"text": 3}'], 'expected a string field "text"', 1),
        (['{"text": "ok"}', "", '{"text": "ok"}'], "blank line", 2),
        (['["not", "an object"]'], "expected a JSON object", 1),
    ],
)
def test_bad_json_lines_name_the_file_and_line(tmp_path, lines, message, line):
    path = tmp_path / "docs.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=message) as caught:
        read_text_corpus("docs", path)
    assert str(caught.value).startswith(f"{path}:{line}: ")


def test_a_document_over_the_line_limit_and_binary_files_are_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("TAME_WH_MAX_LINE_CHARS", "50")
    long = tmp_path / "long.txt"
    long.write_text("short\n" + "x" * 51 + "\n", encoding="utf-8")
    with pytest.raises(InputError, match="the limit is 50"):
        read_text_corpus("docs", long)
    binary = tmp_path / "blob.bin"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff\xfe")
    with pytest.raises(InputError, match="UTF-8"):
        read_text_corpus("docs", binary)


def test_bad_options_are_usage_errors(tmp_path):
    path = tmp_path / "docs.txt"
    path.write_text("a\n", encoding="utf-8")
    with pytest.raises(UsageError, match="--format"):
        read_text_corpus("docs", path, fmt="csv")
    with pytest.raises(UsageError, match="--lang"):
        read_text_corpus("docs", path, lang="not a code")


def test_text_and_parallel_corpora_of_the_same_lines_have_different_ids(tmp_path):
    path = tmp_path / "docs.txt"
    path.write_text("a\nb\n", encoding="utf-8")
    text = read_text_corpus("docs", path)
    parallel = read_training_corpus("docs", path, path)
    assert text.src == parallel.src and text.refs == parallel.refs
    assert text.corpus_id != parallel.corpus_id
