"""Mirroring scores to Postgres/Supabase: DSNs, migrations, payloads, direct and REST transports."""
