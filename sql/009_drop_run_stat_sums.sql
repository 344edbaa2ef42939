-- tame-wh warehouse schema, version 9: `run_surface` reads the stored sums directly and the
-- alias view `run_stat_sums` (a copy of `run_sums` under another name) is gone.
--
-- Its views and macros have their one current definition in sql/views/ (re-applied whenever the
-- schema version moves).


DROP VIEW IF EXISTS run_stat_sums;
