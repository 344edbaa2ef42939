-- tame-wh warehouse schema, version 19: the substring lens (docs/exposure.md, "Substring lens").
--
-- An audit by `--measure substring` looks each test segment's source and references up in a
-- suffix array over the training corpus's normalised texts. Its `exposures` rows hold, per side,
-- the share of the segment's characters in the longest substring it shares with one training
-- row, that row, and whether the whole segment occurs; this table keeps the rest of the answer.

CREATE TABLE substring_lens (
    audit_id       VARCHAR NOT NULL,
    seg_idx        BIGINT NOT NULL,
    side           VARCHAR NOT NULL CHECK (side IN ('source', 'target')),
    ref_idx        INTEGER,                 -- target: the reference with the largest share
    chars          BIGINT NOT NULL,         -- characters of the normalised segment
    longest_chars  BIGINT NOT NULL,         -- longest substring shared with one training row
    longest_share  DOUBLE NOT NULL,         -- longest_chars / chars (0 for an empty segment)
    longest_start  BIGINT NOT NULL,         -- where it starts in the segment (characters)
    train_seg_idx  BIGINT,                  -- the training row of its first occurrence
    train_offset   BIGINT,                  -- where it starts in that row (characters)
    whole_count    BIGINT NOT NULL,         -- occurrences of the whole segment
    words8_found   BIGINT NOT NULL,         -- word 8-grams of the segment found in training
    words8_total   BIGINT NOT NULL,
    words13_found  BIGINT NOT NULL,         -- word 13-grams found
    words13_total  BIGINT NOT NULL,
    PRIMARY KEY (audit_id, seg_idx, side)
);
