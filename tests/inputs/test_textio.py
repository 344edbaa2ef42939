"""Reading aligned text: line splitting, gzip, UTF-8 errors with line numbers, unreadable files."""

from __future__ import annotations

import pytest

from warehouse.errors import InputError
from warehouse.inputs.textio import check_aligned, read_jsonl, read_lines, split_lines


def test_split_lines_keeps_empty_lines_and_drops_one_trailing_newline():
    assert split_lines("a\n\nb\n") == ["a", "", "b"]
    assert split_lines("a\nb") == ["a", "b"]
    assert split_lines("\n") == [""]
    assert split_lines("a\n\n") == ["a", ""]


def test_split_lines_removes_crlf_but_not_inner_carriage_returns():
    assert split_lines("a\r\nb\r\n") == ["a", "b"]
    assert split_lines("a\rb\n") == ["a\rb"]


def test_split_lines_ignores_unicode_line_separators():
    assert split_lines("a\u2028b\x1cc\x85d\n") == ["a\u2028b\x1cc\x85d"]


def test_read_lines_reads_gzip_transparently(write_lines):
    plain = write_lines("x.txt", ["héllo", "", "wörld"])
    packed = write_lines("x.txt.gz", ["héllo", "", "wörld"])
    assert read_lines(plain) == read_lines(packed) == ["héllo", "", "wörld"]


def test_read_lines_strips_a_leading_byte_order_mark(write_lines):
    path = write_lines("bom.txt", "\ufeffone\ntwo\n".encode())
    assert read_lines(path) == ["one", "two"]


def test_invalid_utf8_names_file_line_and_column(write_lines):
    path = write_lines("bad.txt", b"ok\nstill ok\nab\xffcd\n")
    with pytest.raises(InputError) as info:
        read_lines(path)
    assert info.value.line == 3
    assert str(info.value) == f"{path}:3: invalid UTF-8 (byte 0xff at column 3)"


def test_invalid_utf8_inside_gzip_is_reported_with_line(write_lines):
    path = write_lines("bad.txt.gz", b"a\n\xc3\x28\n")
    with pytest.raises(InputError, match=r":2: invalid UTF-8"):
        read_lines(path)


def test_empty_file_is_an_error(write_lines):
    with pytest.raises(InputError, match="empty file"):
        read_lines(write_lines("empty.txt", b""))


def test_missing_directory_and_unreadable_files_are_errors(tmp_path, write_lines):
    with pytest.raises(InputError, match="no such file"):
        read_lines(tmp_path / "nope.txt")
    with pytest.raises(InputError, match="is a directory"):
        read_lines(tmp_path)


def test_unreadable_file_is_an_error(write_lines, monkeypatch):
    locked = write_lines("locked.txt", ["x"])

    def refuse(*_args, **_kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr("os.open", refuse)  # CI runs as root, which chmod cannot lock out
    with pytest.raises(InputError, match=r"locked.txt: permission denied"):
        read_lines(locked)


def test_corrupt_gzip_is_an_error(write_lines):
    path = write_lines("broken.bin", b"\x1f\x8b\x08\x00garbage")
    with pytest.raises(InputError, match="corrupt gzip"):
        read_lines(path)


def test_check_aligned_names_the_file_and_first_missing_line():
    with pytest.raises(InputError) as info:
        check_aligned({"src.txt": ["a", "b", "c"], "ref.txt": ["a", "b"]})
    assert str(info.value) == (
        "ref.txt:3: has 2 lines but src.txt has 3 "
        "(aligned files must have the same number of lines)"
    )
    assert check_aligned({"a": ["x"], "b": ["y"]}) == 1


def test_read_jsonl_rejects_nan_non_objects_and_bad_json(write_lines):
    assert read_jsonl(write_lines("ok.jsonl", ['{"a": 1}', '{"b": "x"}'])) == [{"a": 1}, {"b": "x"}]
    with pytest.raises(InputError, match=r"nan.jsonl:2: \$\.a: NaN is not allowed"):
        read_jsonl(write_lines("nan.jsonl", ['{"a": 1}', '{"a": NaN}']))
    with pytest.raises(InputError, match=r"list.jsonl:1: expected a JSON object, got list"):
        read_jsonl(write_lines("list.jsonl", ["[1, 2]"]))
    with pytest.raises(InputError, match=r"bad.jsonl:1: invalid JSON at column 7"):
        read_jsonl(write_lines("bad.jsonl", ['{"a": }']))
    with pytest.raises(InputError, match=r"blank.jsonl:2: blank line"):
        read_jsonl(write_lines("blank.jsonl", ['{"a": 1}', ""]))


def test_multi_member_gzip_reads_as_the_concatenation(tmp_path):
    import gzip

    from warehouse.inputs.textio import read_bytes

    first, second = b"un\ndeux\n" * 40000, b"trois\n" * 30000
    path = tmp_path / "two.gz"
    path.write_bytes(gzip.compress(first) + gzip.compress(second) + b"\0\0\0")
    assert read_bytes(path) == first + second
