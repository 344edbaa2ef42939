"""libpq connection strings parsed and written without psycopg, checked against psycopg (whose
parser is libpq's own)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from psycopg.conninfo import conninfo_to_dict
from psycopg.conninfo import make_conninfo as psycopg_make_conninfo

from warehouse.store.conninfo import ConninfoError, _scan, make_conninfo, parse_conninfo

STRINGS = [
    "host=127.0.0.1 port=5432 dbname=lake user=tame",
    "  host = db.example.org   dbname=lake  ",
    "dbname='my lake' user=tame",
    r"dbname='it\'s here' application_name=a\ b",
    r"options='-c search_path=x\\y' dbname=d",
    "dbname= user=u",
    "dbname='' user=u",
    "host=a=b dbname=x",
    "dbname=first dbname=second",
    "sslmode=verify-full sslrootcert=/etc/ca.pem connect_timeout=5 dbname=d",
    "",
]


@pytest.mark.parametrize("text", STRINGS)
def test_parsing_equals_libpqs(text):
    assert _scan(text) is not None  # parsed here, not handed on
    expected = {k: v for k, v in conninfo_to_dict(text).items() if v is not None}
    assert parse_conninfo(text) == expected


@pytest.mark.parametrize(
    "text",
    ["postgresql://tame@db.example.org:6543/lake?sslmode=require", "dbname=d nosuchkey=1"],
)
def test_uris_and_unknown_keywords_go_to_libpqs_parser(text):
    assert _scan(text) is None
    if "nosuchkey" in text:
        with pytest.raises(ConninfoError, match="nosuchkey"):
            parse_conninfo(text)
    else:
        assert parse_conninfo(text) == {
            "user": "tame",
            "host": "db.example.org",
            "port": "6543",
            "dbname": "lake",
            "sslmode": "require",
        }


@pytest.mark.parametrize("text", ["dbname", "dbname='open", "host=h dbname"])
def test_malformed_strings_are_refused(text):
    with pytest.raises(ConninfoError):
        parse_conninfo(text)


@pytest.mark.parametrize(
    "params",
    [
        {"host": "127.0.0.1", "port": "5432", "dbname": "lake"},
        {"dbname": "my lake", "user": "o'brien"},
        {"options": "-c a=b\\c", "dbname": ""},
        {"application_name": "tab\there"},
    ],
)
def test_writing_equals_psycopgs_and_round_trips(params):
    text = make_conninfo(params)
    assert text == psycopg_make_conninfo("", **params)
    assert parse_conninfo(text) == params


def test_a_lake_command_does_not_import_psycopg():
    code = (
        "import sys; from warehouse.store.address import parse_address; "
        "a = parse_address('ducklake:postgres:host=h dbname=d user=u'); "
        "print(a.libpq, str(a)); print('psycopg' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split("\n")
    assert out[0] == "dbname=d host=h user=u ducklake:postgres:dbname=d host=h user=u"
    assert out[1] == "False"
