"""Exposure audits: normalisation, the native retrieval index, the DuckDB UDF, audit runs."""
