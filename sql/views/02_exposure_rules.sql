-- tame-wh exposure rules: the bin of a test segment and its translation-memory hypothesis
-- (docs/exposure.md). The audit uses them to fill `exposures`, to pick the TM hypotheses it
-- scores and to validate fast mode; users can call them in their own SQL.
--
-- Each view and macro is defined here once; `tame-wh init` (and every command that upgrades the
-- warehouse) applies the files of sql/views/ in order, CREATE OR REPLACE, whenever the schema
-- version moves.

-- The bin of a test segment by its source exposure (thresholds inclusive): an exact source copy
-- is `source_exact`, else `near` at or above `near`, `medium` at or above `far`, else `far`.
CREATE OR REPLACE MACRO exposure_bin(source_exposure, source_exact, near, far) AS
    CASE WHEN source_exact THEN 'source_exact'
         WHEN source_exposure >= near THEN 'near'
         WHEN source_exposure >= far THEN 'medium'
         ELSE 'far' END;

-- The bin of a test segment in an audit of `side` (docs/exposure.md, "Sides"): by its source
-- exposure, as `exposure_bin`, unless the audit searched the target side alone; then by its
-- references' exposure, and a reference found verbatim is `target_exact`.
CREATE OR REPLACE MACRO side_bin(side, source_exposure, source_exact, target_exposure,
                                 target_exact, near, far) AS
    CASE WHEN side <> 'target' THEN exposure_bin(source_exposure, source_exact, near, far)
         WHEN target_exact THEN 'target_exact'
         WHEN target_exposure >= near THEN 'near'
         WHEN target_exposure >= far THEN 'medium'
         ELSE 'far' END;

-- The exact bin of an audit of `side`: `target_exact` when it searched the target side alone.
CREATE OR REPLACE MACRO exact_bin(side) AS
    CASE WHEN side = 'target' THEN 'target_exact' ELSE 'source_exact' END;

-- The TM hypothesis of a test segment: the training target of its source neighbour; without a
-- neighbour, by the zero policy: the test source itself ('source') or the empty string ('empty').
CREATE OR REPLACE MACRO tm_hypothesis(neighbour_target, test_source, zero_policy) AS
    CASE WHEN neighbour_target IS NOT NULL THEN neighbour_target
         WHEN zero_policy = 'source' THEN test_source
         ELSE '' END;

-- The measure an audit scores rows by, from its configuration: 'jaccard' unless it names another
-- (only containment, substring and MinHash audits name their measure, docs/exposure.md "Measures").
CREATE OR REPLACE MACRO audit_measure(config) AS
    coalesce(json_extract_string(config, '$.measure'), 'jaccard');

-- The side an audit searched, from its configuration: 'both' unless it names one ('source' or
-- 'target'; docs/exposure.md, "Sides").
CREATE OR REPLACE MACRO audit_side(config) AS
    coalesce(json_extract_string(config, '$.side'), 'both');

-- Which audit of a test set bins its runs when several lenses were run: Jaccard first, then
-- containment, the substring lens and the MinHash estimate (lower first).
CREATE OR REPLACE MACRO measure_rank(measure) AS
    CASE measure WHEN 'jaccard' THEN 0 WHEN 'containment' THEN 1 WHEN 'substring' THEN 2 ELSE 3 END;

-- Among audits of one measure, which bins a test set's runs: one of both sides first, then one of
-- the sources, then one of the references alone (lower first).
CREATE OR REPLACE MACRO side_rank(side) AS
    CASE side WHEN 'both' THEN 0 WHEN 'source' THEN 1 ELSE 2 END;
