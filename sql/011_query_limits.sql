-- tame-wh warehouse schema, version 11: the limits of `tame-wh query` as settings rows, so that a
-- runaway statement (an unbounded recursive CTE, range(1e12), repeat('x', 2147483647)) ends with
-- a clear error instead of holding the file and the machine. The --timeout and --memory-limit
-- options of `query` override them for one call.

INSERT INTO settings VALUES
    ('query.timeout_seconds',  60,   'tame-wh query: a statement running longer is interrupted'),
    ('query.memory_limit_mb',  1024, 'tame-wh query: memory a statement may use (MiB), no spilling to disk');
