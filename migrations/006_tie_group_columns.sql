-- 006: each run's stored tie group on run_cards (docs/statistics.md, "Tie groups"): the metric,
-- method and correction of the board, the run's cluster (1 = best) and rank range, and the
-- board's size; NULL when its test set has no stored board that still holds exactly its runs.

ALTER TABLE run_cards
    ADD COLUMN tie_metric text,
    ADD COLUMN tie_method text,
    ADD COLUMN tie_correction text,
    ADD COLUMN tie_cluster integer,
    ADD COLUMN tie_best_rank integer,
    ADD COLUMN tie_worst_rank integer,
    ADD COLUMN tie_n_runs integer;
