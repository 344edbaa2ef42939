"""Secrets never printed: DSNs and Supabase URLs in every form (URL, key=value, environment),
well-formed and malformed, through the CLI (`migrate`, `sync`, `sync --supabase-url`); neither
stdout nor stderr may hold the password or any piece of it a parser could cut out."""

from __future__ import annotations

import re
import shutil

import psycopg
import pytest
from click.testing import CliRunner

from tests.backends import TEMPLATES, drop_database, new_database
from warehouse.cli.main import main
from warehouse.sync.dsn import check_dsn, dsn_secrets, redact, target_label

KEY = "stub-service-role-key-never-printed"

# (id, DSN with {host} {port} {db} placeholders, secret, expected exit code of `migrate`)
# Exit codes: 0 connected (the test cluster trusts local connections, so any password works),
# 2 refused before connecting (malformed), 4 the server side failed.
DSN_FORMS = [
    ("url", "postgresql://postgres:Plain0Secret9@{host}:{port}/{db}", "Plain0Secret9", 0),
    (
        "url-postgres-scheme",
        "postgres://postgres:Scheme-Secret9@{host}:{port}/{db}",
        "Scheme-Secret9",
        0,
    ),
    (
        "url-encoded-at",
        "postgresql://postgres:p%40ssEnc0ded-Secret@{host}:{port}/{db}",
        "p@ssEnc0ded-Secret",
        0,
    ),
    (
        "url-encoded-all",
        "postgresql://postgres:a%2Fb%3Fc%23d%20Enc-Secret@{host}:{port}/{db}",
        "a/b?c#d Enc-Secret",
        0,
    ),
    (
        "url-query-password",
        "postgresql://{host}:{port}/{db}?user=postgres&password=Query-Secret9",
        "Query-Secret9",
        0,
    ),
    (
        "url-unicode",
        "postgresql://postgres:P%C3%A4ssw%C3%B6rd-S%C3%A9cret@{host}:{port}/{db}",
        "Pässwörd-Sécret",
        0,
    ),
    (
        "url-unencoded-at",
        "postgresql://postgres:p@ss-w0rd-Secret!@{host}:{port}/{db}",
        "p@ss-w0rd-Secret!",
        2,
    ),
    (
        "url-two-at",
        "postgresql://postgres:a@b@Two-At-Secret9@{host}:{port}/{db}",
        "a@b@Two-At-Secret9",
        2,
    ),
    (
        "url-unencoded-space",
        "postgresql://postgres:my Space-Secret9@{host}:{port}/{db}",
        "my Space-Secret9",
        2,
    ),
    (
        "url-unencoded-hash",
        "postgresql://postgres:Hash#Secret99@{host}:{port}/{db}",
        "Hash#Secret99",
        2,
    ),
    (
        "url-unencoded-question",
        "postgresql://postgres:Quest?Secret99@{host}:{port}/{db}",
        "Quest?Secret99",
        2,
    ),
    (
        "url-unencoded-slash",
        "postgresql://postgres:Slash/Secret99@{host}:{port}/{db}",
        "Slash/Secret99",
        2,
    ),
    (
        "url-colon-in-password",
        "postgresql://postgres:a:b:Colon-Secret9@127.0.0.1:1/{db}",
        "a:b:Colon-Secret9",
        4,
    ),
    ("url-port-99999", "postgresql://postgres:Port-Secret99@{host}:99999/{db}", "Port-Secret99", 2),
    (
        "url-port-not-a-number",
        "postgresql://postgres:PortNaN-Secret9@{host}:abc/{db}",
        "PortNaN-Secret9",
        2,
    ),
    (
        "url-port-negative",
        "postgresql://postgres:PortNeg-Secret9@{host}:-5/{db}",
        "PortNeg-Secret9",
        2,
    ),
    (
        "url-refused",
        "postgresql://nobody:Unreach4ble-Secret@127.0.0.1:1/none",
        "Unreach4ble-Secret",
        4,
    ),
    (
        "url-unresolvable",
        "postgresql://u:Resolve-Secret99@no-such-host.invalid/db",
        "Resolve-Secret99",
        4,
    ),
    ("url-ipv6", "postgresql://u:V6-Secret99@[::1]:1/db", "V6-Secret99", 4),
    (
        "url-socket-dir",
        "postgresql://u:Sock-Secret99@/db?host=/nonexistent-dir",
        "Sock-Secret99",
        4,
    ),
    (
        "url-multi-host",
        "postgresql://u:Multi-Secret99@127.0.0.1:1,127.0.0.1:2/db",
        "Multi-Secret99",
        4,
    ),
    (
        "url-quotes-backslash",
        "postgresql://u:Q'uo\"te\\Secret9@127.0.0.1:1/db",
        "Q'uo\"te\\Secret9",
        4,
    ),
    (
        "url-bad-param",
        "postgresql://u:Param-Secret99@127.0.0.1:1/db?no_such_option=1",
        "Param-Secret99",
        2,
    ),
    (
        "url-bad-sslmode",
        "postgresql://u:Sslmode-Secret9@127.0.0.1:1/db?sslmode=bogus",
        "Sslmode-Secret9",
        4,
    ),
    ("url-truncated", "postgresql://u:Trunc-Secret99@", "Trunc-Secret99", 4),
    ("url-other-scheme", "mysql://u:Mysql-Secret99@{host}:{port}/{db}", "Mysql-Secret99", 2),
    (
        "kv",
        "host={host} port={port} dbname={db} user=postgres password=Kv-Secret99",
        "Kv-Secret99",
        0,
    ),
    (
        "kv-quoted-spaces",
        "host={host} port={port} dbname={db} user=postgres password='kv Quoted Secret'",
        "kv Quoted Secret",
        0,
    ),
    (
        "kv-escaped-quote",
        "host={host} port={port} dbname={db} user=postgres password='it\\'s-Esc-Secret'",
        "it's-Esc-Secret",
        0,
    ),
    (
        "kv-spaces-around-equals",
        "host=127.0.0.1 port=1 user=x password = Spaced-Secret99",
        "Spaced-Secret99",
        4,
    ),
    (
        "kv-unquoted-space",
        "host={host} port={port} dbname={db} password=bad Unquoted-Secret9",
        "bad Unquoted-Secret9",
        2,
    ),
    (
        "kv-unterminated-quote",
        "host={host} port={port} password='Unterminated-Secret9",
        "Unterminated-Secret9",
        2,
    ),
    ("kv-port-99999", "host={host} port=99999 password=KvPort-Secret99", "KvPort-Secret99", 2),
    (
        "kv-refused",
        "host=127.0.0.1 port=1 user=x password=KvRefused-Secret9",
        "KvRefused-Secret9",
        4,
    ),
    ("kv-uppercase-key", "host=127.0.0.1 port=1 PASSWORD=Upper-Secret99", "Upper-Secret99", 2),
    ("kv-sslpassword", "host=127.0.0.1 port=1 sslpassword=SslPass-Secret9", "SslPass-Secret9", 4),
    ("kv-password-only", "password=Lonely-Secret99 host=/nonexistent-dir", "Lonely-Secret99", 4),
]

# (id, --supabase-url, secret, expected exit code)
URL_FORMS = [
    ("rest-userinfo", "http://admin:Rest-Secret99@127.0.0.1:1", "Rest-Secret99", 4),
    ("rest-unencoded-at", "http://admin:p@ss-RestAt-Secret@127.0.0.1:1", "p@ss-RestAt-Secret", 4),
    ("rest-space", "https://admin:Rest Space-Secret@127.0.0.1:1", "Rest Space-Secret", 2),
    ("rest-apikey-param", "http://127.0.0.1:1/?apikey=RestKey-Secret99", "RestKey-Secret99", 4),
    ("rest-token-param", "http://127.0.0.1:1/?token=RestToken-Secret9", "RestToken-Secret9", 4),
    ("rest-other-scheme", "ftp://u:Ftp-Secret99@127.0.0.1:1", "Ftp-Secret99", 2),
    ("rest-port-99999", "http://u:RestPort-Secret9@127.0.0.1:99999", "RestPort-Secret9", 4),
]


def _pieces(secret: str) -> list[str]:
    """The secret and every piece of it a parser could cut out (4 characters or more)."""
    return [secret, *(p for p in re.split(r"[@/?#:\s'\"\\]+", secret) if len(p) >= 4)]


def _assert_no_secret(result, secret: str, *more: str) -> None:
    printed = result.output + (result.stderr or "")
    for piece in [*_pieces(secret), *more]:
        assert piece not in printed, (piece, printed)
    assert "internal error" not in printed, printed


@pytest.fixture(scope="module")
def target(tmp_path_factory):
    """Host, port and name of one scratch database, and a demo warehouse with three runs."""
    name, dsn = new_database()
    info = psycopg.conninfo.conninfo_to_dict(dsn)
    demo = tmp_path_factory.mktemp("secrets") / "demo.duckdb"
    TEMPLATES.copy_demo_file(demo)
    yield {"host": info.get("host", "127.0.0.1"), "port": info.get("port", 5432), "db": name}, demo
    drop_database(name)


def test_at_least_thirty_dsn_forms():
    assert len(DSN_FORMS) + len(URL_FORMS) >= 30 and len(DSN_FORMS) >= 30


@pytest.mark.parametrize(
    ("form", "secret", "code"), [f[1:] for f in DSN_FORMS], ids=[f[0] for f in DSN_FORMS]
)
def test_dsn_secret_is_never_printed(target, tmp_path, monkeypatch, form, secret, code):
    place, demo = target
    dsn = form.format(**place)
    monkeypatch.delenv("PGPASSWORD", raising=False)
    db = tmp_path / "wh.duckdb"
    shutil.copyfile(demo, db)
    runner = CliRunner()
    migrated = runner.invoke(main, ["--db", str(db), "migrate", "--dsn", dsn])
    assert migrated.exit_code == code, migrated.output + (migrated.stderr or "")
    _assert_no_secret(migrated, secret)
    synced = runner.invoke(main, ["--db", str(db), "sync", "--dsn", dsn, "--full", "--json"])
    assert synced.exit_code == code, synced.output + (synced.stderr or "")
    _assert_no_secret(synced, secret)
    # The same DSN from the environment, and the plan of a dry run, print no secret either.
    monkeypatch.setenv("TAME_WH_PG_DSN", dsn)
    for args in (["migrate", "--dry-run"], ["sync", "--dry-run"]):
        result = runner.invoke(main, ["--db", str(db), *args])
        _assert_no_secret(result, secret)


@pytest.mark.parametrize("code", [0, 4])
def test_pgpassword_from_the_environment_is_never_printed(target, tmp_path, monkeypatch, code):
    place, demo = target
    secret = "Env-PgPassword-Secret9"
    monkeypatch.setenv("PGPASSWORD", secret)
    port = place["port"] if code == 0 else 1
    dsn = f"host={place['host']} port={port} dbname={place['db']} user=postgres"
    db = tmp_path / "wh.duckdb"
    shutil.copyfile(demo, db)
    for args in (["migrate", "--dsn", dsn], ["sync", "--dsn", dsn, "--full"]):
        result = CliRunner().invoke(main, ["--db", str(db), *args])
        assert result.exit_code == code
        _assert_no_secret(result, secret)


@pytest.mark.parametrize(
    ("url", "secret", "code"), [f[1:] for f in URL_FORMS], ids=[f[0] for f in URL_FORMS]
)
def test_supabase_url_secret_is_never_printed(target, tmp_path, monkeypatch, url, secret, code):
    _place, demo = target
    monkeypatch.setenv("SUPABASE_SERVICE_ROLE_KEY", KEY)
    monkeypatch.setattr("warehouse.sync.rest.MAX_ATTEMPTS", 1)
    db = tmp_path / "wh.duckdb"
    shutil.copyfile(demo, db)
    runner = CliRunner()
    for extra in ([], ["--json"], ["--dry-run"]):
        result = runner.invoke(
            main, ["--db", str(db), "sync", "--supabase-url", url, "--full", *extra]
        )
        expected = 0 if extra == ["--dry-run"] and code == 4 else code
        assert result.exit_code == expected, result.output + (result.stderr or "")
        _assert_no_secret(result, secret, KEY)


@pytest.mark.parametrize(
    ("form", "secret"), [(f[1], f[2]) for f in DSN_FORMS], ids=[f[0] for f in DSN_FORMS]
)
def test_labels_and_redaction_hold_no_secret(form, secret):
    dsn = form.format(host="127.0.0.1", port=5432, db="db")
    label = target_label(dsn)
    assert all(piece not in label for piece in _pieces(secret)), label
    # Whatever a parser printed of the DSN, redaction removes every piece of the secret.
    leaked = f"failed: {dsn} / {secret} / host '{secret.split('@')[-1]}'"
    cleaned = redact(leaked, dsn_secrets(dsn))
    assert all(piece not in cleaned for piece in _pieces(secret)), cleaned


def test_malformed_dsn_errors_name_the_problem():
    with pytest.raises(Exception, match="percent-encode"):
        check_dsn("postgresql://u:p@ss@h/db")
    with pytest.raises(Exception, match="is not a port number"):
        check_dsn("postgresql://u@h:99999/db")
