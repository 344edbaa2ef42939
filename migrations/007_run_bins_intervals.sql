-- 007: per-bin intervals on run_bins (docs/statistics.md, "Intervals per bin"): percentile
-- bootstrap intervals of the system's chrF++ and BLEU and of system - TM chrF++ on the bin's
-- segments (resampled within the bin), at the warehouse's bootstrap settings; NULL on the `all`
-- row, whose run-level intervals are on run_cards.

ALTER TABLE run_bins
    ADD COLUMN chrf_ci_lower real,
    ADD COLUMN chrf_ci_upper real,
    ADD COLUMN bleu_ci_lower real,
    ADD COLUMN bleu_ci_upper real,
    ADD COLUMN delta_chrf_ci_lower real,
    ADD COLUMN delta_chrf_ci_upper real;
