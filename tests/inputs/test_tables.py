"""Tables other tools write — Parquet, JSON Lines, CSV, TSV — read as named columns; problems
name the file, the line and the column."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from warehouse.errors import InputError, UsageError
from warehouse.inputs.tables import read_table, table_format

DATA = Path(__file__).parent / "data"


def test_each_format_gives_the_same_columns(tmp_path):
    tsv = read_table(DATA / "outputs.tsv")
    columns = zip(tsv.keys("id"), tsv.texts("source"), tsv.texts("hypothesis"), strict=True)
    rows = [{"id": k, "source": s, "hyp": h} for k, s, h in columns]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "t.parquet")
    parquet = read_table(tmp_path / "t.parquet")
    assert parquet.texts("hyp") == tsv.texts("hypothesis")
    assert parquet.keys("id") == ["0", "1", "2", "3", "4", "5"]
    assert tsv.numbers("comet")[:2] == [0.8, 0.81]
    csv = read_table(DATA / "outputs.csv")
    assert csv.texts("hypothesis")[4] == "Could you help me, please?"  # a quoted comma
    assert csv.lines[:2] == [2, 3]


def test_dotted_columns_reach_into_nested_records():
    table = read_table(DATA / "wmt16-de-en.jsonl")
    assert table.texts("translation.de")[0] == "Guten Morgen."
    assert table.texts("translation.en")[-1] == "The train is ten minutes late."


def test_the_format_comes_from_the_name_unless_given():
    assert table_format("a/b.tsv.gz") == "tsv"
    assert table_format("x.pq") == "parquet"
    assert table_format("x.txt", "csv") == "csv"
    with pytest.raises(UsageError, match="give --format"):
        table_format("x.txt")


@pytest.mark.parametrize(
    ("name", "text", "column", "message"),
    [
        ("a.tsv", "src\tref\nx\ty\nz\n", "src", "a.tsv:3: 1 fields where the header has 2"),
        ("b.tsv", "src\tsrc\nx\ty\n", "src", "b.tsv:1: the header has column 'src' twice"),
        ("c.jsonl", '{"src": "x"}\n{"src": 5}\n', "src", "c.jsonl:2: column 'src': expected text"),
        ("d.jsonl", '{"src": "x"}\n{"src": \n', "src", "d.jsonl:2: not JSON"),
        ("e.jsonl", '{"a": "x"}\n', "src", "e.jsonl:1: no column 'src' (columns: 'a')"),
        ("f.csv", 'src\n"x\n', "src", "f.csv"),
        ("g.tsv", "src\n", "src", "g.tsv: no records"),
    ],
)
def test_bad_tables_name_the_file_and_line(tmp_path, name, text, column, message):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_table(path).texts(column)
    assert str(caught.value).startswith(str(tmp_path / message.split(":")[0]))
    assert message.split(":", 1)[-1] in str(caught.value)


def test_repeated_ids_name_both_lines(tmp_path):
    path = tmp_path / "ids.tsv"
    path.write_text("id\tsrc\n1\ta\n2\tb\n1\tc\n", encoding="utf-8")
    with pytest.raises(
        InputError, match=r"ids.tsv:4: column 'id': id '1' repeats the id of line 2"
    ):
        read_table(path).keys("id")
