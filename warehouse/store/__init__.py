"""The warehouse store: connection, schema, settings, packaged SQL, corpora, stored sums, purge."""
