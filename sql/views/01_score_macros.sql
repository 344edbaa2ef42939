-- tame-wh score macros: corpus BLEU, chrF++ and TER from summed per-segment statistics
-- (docs/metrics.md).
--
-- Surface metrics are macros over summed sufficient statistics, so any GROUP BY yields corpus
-- scores in plain SQL:
--     SELECT provenance, corpus_bleu(bleu_stats), corpus_chrf(chrf_stats)
--     FROM segment_stats JOIN runs USING (run_id) JOIN segments ... GROUP BY provenance;
-- The `*_stats_sum` macros sum element by element ([sum(s[1]), ..., sum(s[k])]), which DuckDB
-- runs far faster than list lambdas. The formulas repeat sacrebleu's operations in sacrebleu's
-- order, so the results equal `corpus_score` (to the last bit in practice; tested to 1e-9).
--
-- Each view and macro is defined here once; `tame-wh init` (and every command that upgrades the
-- warehouse) applies the files of sql/views/ in order, CREATE OR REPLACE, whenever the schema
-- version moves.

-- Element-wise sums (aggregate macros).

CREATE OR REPLACE MACRO bleu_stats_sum(s) AS [
        sum(s[1]), sum(s[2]), sum(s[3]), sum(s[4]), sum(s[5]), sum(s[6]), sum(s[7]), sum(s[8]),
        sum(s[9]), sum(s[10])
];

CREATE OR REPLACE MACRO chrf_stats_sum(s) AS [
        sum(s[1]), sum(s[2]), sum(s[3]), sum(s[4]), sum(s[5]), sum(s[6]), sum(s[7]), sum(s[8]),
        sum(s[9]), sum(s[10]), sum(s[11]), sum(s[12]), sum(s[13]), sum(s[14]), sum(s[15]),
        sum(s[16]), sum(s[17]), sum(s[18]), sum(s[19]), sum(s[20]), sum(s[21]), sum(s[22]),
        sum(s[23]), sum(s[24])
];

CREATE OR REPLACE MACRO ter_stats_sum(s) AS [
        sum(s[1]), sum(s[2])
];

-- BLEU (sacrebleu: 13a tokens already counted, exp smoothing, 4-gram, no effective order) from
-- summed [hyp_len, ref_len, correct_1..4, total_1..4]. Precisions: 100*c/t; an order with no
-- match but some n-grams gets 100/(2^k * t), k counting such orders so far; no n-grams -> 0,
-- whose log is floored at -9999999999 as in sacrebleu.
CREATE OR REPLACE MACRO _bleu_precision(c, t, k) AS
    CASE WHEN t = 0 THEN 0.0
         WHEN c = 0 THEN 100.0 / (pow(2, k) * t::DOUBLE)
         ELSE (100.0 * c::DOUBLE) / t::DOUBLE END;

-- A helper whose body uses an argument more than once takes it through a one-element list and a
-- lambda, so that the argument is bound once: a macro is expanded by substitution, and every use
-- of a parameter would otherwise be a fresh copy of the argument expression, bound and optimised
-- on its own (the leaderboard expands these through several views).

CREATE OR REPLACE MACRO _floored_log(p) AS
    list_transform([p], lambda x: CASE WHEN x = 0 THEN -9999999999 ELSE ln(x) END)[1];

CREATE OR REPLACE MACRO _bleu_missing(c, t) AS (t > 0 AND c = 0)::INTEGER;

CREATE OR REPLACE MACRO bleu_score(s) AS
    CASE
        WHEN s IS NULL THEN NULL
        WHEN s[3] = 0 AND s[4] = 0 AND s[5] = 0 AND s[6] = 0 THEN 0.0
        ELSE
            (CASE WHEN s[1] < s[2] THEN
                  (CASE WHEN s[1] > 0 THEN exp(1 - s[2]::DOUBLE / s[1]::DOUBLE) ELSE 0.0 END)
             ELSE 1.0 END)
            * exp((
                _floored_log(_bleu_precision(s[3], s[7], _bleu_missing(s[3], s[7])))
                + _floored_log(_bleu_precision(s[4], s[8],
                      _bleu_missing(s[3], s[7]) + _bleu_missing(s[4], s[8])))
                + _floored_log(_bleu_precision(s[5], s[9],
                      _bleu_missing(s[3], s[7]) + _bleu_missing(s[4], s[8])
                      + _bleu_missing(s[5], s[9])))
                + _floored_log(_bleu_precision(s[6], s[10],
                      _bleu_missing(s[3], s[7]) + _bleu_missing(s[4], s[8])
                      + _bleu_missing(s[5], s[9]) + _bleu_missing(s[6], s[10])))
              ) / 4)
    END;

CREATE OR REPLACE MACRO _chrf_from_averages(p, r) AS
    list_transform(
        [[p, r]],
        lambda x: CASE WHEN x[1] + x[2] > 0
                       THEN 100 * (((1 + 4) * x[1] * x[2]) / ((4 * x[1]) + x[2]))
                       ELSE 0.0 END
    )[1];

CREATE OR REPLACE MACRO _chrf_effective_order(s) AS
        (s[1] > 0 AND s[2] > 0)::INTEGER
        + (s[4] > 0 AND s[5] > 0)::INTEGER
        + (s[7] > 0 AND s[8] > 0)::INTEGER
        + (s[10] > 0 AND s[11] > 0)::INTEGER
        + (s[13] > 0 AND s[14] > 0)::INTEGER
        + (s[16] > 0 AND s[17] > 0)::INTEGER
        + (s[19] > 0 AND s[20] > 0)::INTEGER
        + (s[22] > 0 AND s[23] > 0)::INTEGER;

CREATE OR REPLACE MACRO chrf_score(s) AS
    CASE
        WHEN s IS NULL THEN NULL
        WHEN _chrf_effective_order(s) = 0 THEN 0.0
        ELSE _chrf_from_averages(
            (
            CASE WHEN s[1] > 0 AND s[2] > 0 THEN s[3]::DOUBLE / s[1]::DOUBLE ELSE 0.0 END
        + CASE WHEN s[4] > 0 AND s[5] > 0 THEN s[6]::DOUBLE / s[4]::DOUBLE ELSE 0.0 END
        + CASE WHEN s[7] > 0 AND s[8] > 0 THEN s[9]::DOUBLE / s[7]::DOUBLE ELSE 0.0 END
        + CASE WHEN s[10] > 0 AND s[11] > 0 THEN s[12]::DOUBLE / s[10]::DOUBLE ELSE 0.0 END
        + CASE WHEN s[13] > 0 AND s[14] > 0 THEN s[15]::DOUBLE / s[13]::DOUBLE ELSE 0.0 END
        + CASE WHEN s[16] > 0 AND s[17] > 0 THEN s[18]::DOUBLE / s[16]::DOUBLE ELSE 0.0 END
        + CASE WHEN s[19] > 0 AND s[20] > 0 THEN s[21]::DOUBLE / s[19]::DOUBLE ELSE 0.0 END
        + CASE WHEN s[22] > 0 AND s[23] > 0 THEN s[24]::DOUBLE / s[22]::DOUBLE ELSE 0.0 END
            ) / _chrf_effective_order(s),
            (
            CASE WHEN s[1] > 0 AND s[2] > 0 THEN s[3]::DOUBLE / s[2]::DOUBLE ELSE 0.0 END
        + CASE WHEN s[4] > 0 AND s[5] > 0 THEN s[6]::DOUBLE / s[5]::DOUBLE ELSE 0.0 END
        + CASE WHEN s[7] > 0 AND s[8] > 0 THEN s[9]::DOUBLE / s[8]::DOUBLE ELSE 0.0 END
        + CASE WHEN s[10] > 0 AND s[11] > 0 THEN s[12]::DOUBLE / s[11]::DOUBLE ELSE 0.0 END
        + CASE WHEN s[13] > 0 AND s[14] > 0 THEN s[15]::DOUBLE / s[14]::DOUBLE ELSE 0.0 END
        + CASE WHEN s[16] > 0 AND s[17] > 0 THEN s[18]::DOUBLE / s[17]::DOUBLE ELSE 0.0 END
        + CASE WHEN s[19] > 0 AND s[20] > 0 THEN s[21]::DOUBLE / s[20]::DOUBLE ELSE 0.0 END
        + CASE WHEN s[22] > 0 AND s[23] > 0 THEN s[24]::DOUBLE / s[23]::DOUBLE ELSE 0.0 END
            ) / _chrf_effective_order(s))
    END;

-- TER is NULL for runs ingested without it: their statistics are NULL and sum to [NULL, NULL].
CREATE OR REPLACE MACRO ter_score(s) AS
    CASE
        WHEN s IS NULL OR s[1] IS NULL OR s[2] IS NULL THEN NULL
        WHEN s[2] > 0 THEN 100 * (s[1] / s[2])
        WHEN s[1] > 0 THEN 100.0
        ELSE 0.0
    END;

-- Corpus scores straight from per-segment statistics (aggregate macros).
CREATE OR REPLACE MACRO corpus_bleu(s) AS bleu_score(bleu_stats_sum(s));

CREATE OR REPLACE MACRO corpus_chrf(s) AS chrf_score(chrf_stats_sum(s));

CREATE OR REPLACE MACRO corpus_ter(s) AS ter_score(ter_stats_sum(s));
