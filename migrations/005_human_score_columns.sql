-- 005: human judgment scores on run_cards (docs/human.md): each run's mean MQM (lower is better),
-- ESA score and DA z-score, from its newest judgment set of each scheme; NULL when it has none.

ALTER TABLE run_cards
    ADD COLUMN human_mqm real,
    ADD COLUMN human_esa real,
    ADD COLUMN human_da_z real;
