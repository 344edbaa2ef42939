-- tame-wh warehouse schema, version 13: the two score helpers whose bodies use an argument more
-- than once take it through a one-element list and a lambda, so that the argument is bound once.
--
-- A macro is expanded by substitution: every use of a parameter in its body is a fresh copy of
-- the argument expression, bound and optimised on its own. `_chrf_from_averages(p, r)` used p
-- and r three times each, with averages over eight orders as arguments, and `_floored_log(p)`
-- used a BLEU precision twice; the leaderboard expands them through several views, and spent
-- most of its time planning. The arithmetic is the same operations in the same order, so every
-- score is unchanged to the bit; the leaderboard plans and runs about twice as fast.

CREATE OR REPLACE MACRO _floored_log(p) AS
    list_transform([p], lambda x: CASE WHEN x = 0 THEN -9999999999 ELSE ln(x) END)[1];

CREATE OR REPLACE MACRO _chrf_from_averages(p, r) AS
    list_transform(
        [[p, r]],
        lambda x: CASE WHEN x[1] + x[2] > 0
                       THEN 100 * (((1 + 4) * x[1] * x[2]) / ((4 * x[1]) + x[2]))
                       ELSE 0.0 END
    )[1];
