"""Ingesting evaluated runs: parse and score, then write in one transaction."""
