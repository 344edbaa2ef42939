-- tame-wh warehouse schema, version 22: the score macros and the leaderboard's views are planned
-- in a fraction of the time; every answer is unchanged to the bit.
--
-- DuckDB binds and optimises a macro's expansion, and every view a query names, for each query.
-- BLEU and chrF++ are now written over their n-gram orders with lambdas (sql/views/
-- 01_score_macros.sql): 3 ms of planning each instead of 9 and 17. The leaderboard joins the
-- composite once (it reached it through four views) and a run's exposure reads the audit summary
-- once (three times before); `run_cost_figures` holds the cost figures that need no composite.
-- The helpers of the earlier BLEU and chrF++ macros go.
--
-- Its views and macros have their one current definition in sql/views/ (re-applied whenever the
-- schema version moves).

DROP MACRO IF EXISTS _bleu_missing;

DROP MACRO IF EXISTS _chrf_effective_order;
