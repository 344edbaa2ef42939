-- 009: the measure of the audit the exposure columns come from (docs/exposure.md, "Measures"):
-- 'jaccard', or 'containment' when the run's test set has only containment audits against the
-- chosen training corpus (documents and monolingual text); NULL without an audit.

ALTER TABLE run_cards
    ADD COLUMN audit_measure text;
