"""Every Postgres test of this folder runs twice: on a plain database, and on one with
Supabase's default privileges (anon and authenticated get ALL on every new table, sequence and
function in `public`), so that the migrations are tested against the grants they meet there."""

from __future__ import annotations

import psycopg
import pytest

CLIENT_ROLES = ("anon", "authenticated")

# What Supabase configures in every project before any user migration runs.
SUPABASE_DEFAULTS = """
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'anon') THEN
        CREATE ROLE anon NOLOGIN NOINHERIT;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'authenticated') THEN
        CREATE ROLE authenticated NOLOGIN NOINHERIT;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'service_role') THEN
        CREATE ROLE service_role NOLOGIN NOINHERIT BYPASSRLS;
    END IF;
END
$$;
GRANT USAGE ON SCHEMA public TO anon, authenticated, service_role;
ALTER DEFAULT PRIVILEGES IN SCHEMA public
    GRANT ALL ON TABLES TO anon, authenticated, service_role;
ALTER DEFAULT PRIVILEGES IN SCHEMA public
    GRANT ALL ON SEQUENCES TO anon, authenticated, service_role;
ALTER DEFAULT PRIVILEGES IN SCHEMA public
    GRANT ALL ON FUNCTIONS TO anon, authenticated, service_role;
"""


def apply_supabase_defaults(dsn: str) -> None:
    """Give a fresh database Supabase's roles and default privileges."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(SUPABASE_DEFAULTS)


@pytest.fixture(params=["plain", "supabase-defaults"])
def pg_dsn(pg_dsn: str, request: pytest.FixtureRequest) -> str:
    """A fresh database, plain or with Supabase's default privileges."""
    if request.param == "supabase-defaults":
        apply_supabase_defaults(pg_dsn)
    return pg_dsn
