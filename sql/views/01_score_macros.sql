-- tame-wh score macros: corpus BLEU, chrF++ and TER from summed per-segment statistics
-- (docs/metrics.md).
--
-- Surface metrics are macros over summed sufficient statistics, so any GROUP BY yields corpus
-- scores in plain SQL:
--     SELECT provenance, corpus_bleu(bleu_stats), corpus_chrf(chrf_stats)
--     FROM segment_stats JOIN runs USING (run_id) JOIN segments ... GROUP BY provenance;
-- The `*_stats_sum` macros sum element by element ([sum(s[1]), ..., sum(s[k])]), which DuckDB
-- runs far faster than list lambdas. The formulas repeat sacrebleu's operations in sacrebleu's
-- order, so the results equal `corpus_score` (to the bit on random statistics; tests/analysis).
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

-- The number of orders up to `i` (1-4) with n-grams but no match: the k of exp smoothing.
CREATE OR REPLACE MACRO _bleu_missing_before(s, i) AS
    len(list_filter(range(1, i + 1), lambda j: s[6 + j] > 0 AND s[2 + j] = 0));

-- The four orders' floored log precisions are added in order 1 to 4 (a left fold, as sacrebleu
-- adds them). Written over the orders' positions with lambdas rather than spelled out order by
-- order: DuckDB binds and optimises the expanded expression for every query that names it, and
-- the spelled-out form cost about 9 ms per query (3 ms this way).
CREATE OR REPLACE MACRO bleu_score(s) AS
    CASE
        WHEN s IS NULL THEN NULL
        WHEN s[3] = 0 AND s[4] = 0 AND s[5] = 0 AND s[6] = 0 THEN 0.0
        ELSE
            (CASE WHEN s[1] < s[2] THEN
                  (CASE WHEN s[1] > 0 THEN exp(1 - s[2]::DOUBLE / s[1]::DOUBLE) ELSE 0.0 END)
             ELSE 1.0 END)
            * exp(list_reduce(
                list_transform(range(1, 5), lambda i:
                    _floored_log(_bleu_precision(s[2 + i], s[6 + i], _bleu_missing_before(s, i)))),
                lambda a, b: a + b) / 4)
    END;

CREATE OR REPLACE MACRO _chrf_from_averages(p, r) AS
    list_transform(
        [[p, r]],
        lambda x: CASE WHEN x[1] + x[2] > 0
                       THEN 100 * (((1 + 4) * x[1] * x[2]) / ((4 * x[1]) + x[2]))
                       ELSE 0.0 END
    )[1];

-- chrF++ from summed [hyp, ref, match] of 6 character and 2 word orders: the precisions and
-- recalls of the orders with hypothesis and reference n-grams (sacrebleu's effective order) are
-- averaged, each sum added in order, then combined with beta 2. Like BLEU, written over the
-- orders with lambdas (17 ms of binding per query spelled out, 3 ms this way).
CREATE OR REPLACE MACRO _chrf_order(s, i) AS
    CASE WHEN s[3 * i + 1] > 0 AND s[3 * i + 2] > 0
         THEN [s[3 * i + 3]::DOUBLE / s[3 * i + 1]::DOUBLE,
               s[3 * i + 3]::DOUBLE / s[3 * i + 2]::DOUBLE,
               1.0]
         ELSE [0.0, 0.0, 0.0] END;

CREATE OR REPLACE MACRO chrf_score(s) AS
    CASE
        WHEN s IS NULL THEN NULL
        ELSE list_transform(
            [list_reduce(list_transform(range(8), lambda i: _chrf_order(s, i)),
                         lambda a, b: [a[1] + b[1], a[2] + b[2], a[3] + b[3]])],
            lambda t: CASE WHEN t[3] = 0 THEN 0.0
                           ELSE _chrf_from_averages(t[1] / t[3], t[2] / t[3]) END)[1]
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
