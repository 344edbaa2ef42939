//! The row layout shared by the index, the dense bitmaps and the counting kernels: postings
//! blocks of 65,536 rows, tiles of 512 rows (one 64-byte line of bits), and bit planes of counts.

use super::buf::Plain;

/// Rows per postings block: a row is stored as its offset in the block, in 16 bits.
pub const BLOCK_ROWS: usize = 1 << 16;

/// 64-bit words per tile.
pub const TILE_WORDS: usize = 8;
/// Rows per tile.
pub const TILE_ROWS: usize = TILE_WORDS * 64;

/// One tile's worth of bits: bit `b` of word `w` is row `64·w + b` of the tile.
pub type Lanes = [u64; TILE_WORDS];

/// No bits set.
pub const ZERO: Lanes = [0; TILE_WORDS];

/// One tile of one gram's bitmap, aligned to a cache line so a tile is read in one line.
#[derive(Debug, Clone, Copy, Default)]
#[repr(C, align(64))]
pub struct Line(pub Lanes);

// SAFETY: a `Line` is eight `u64`s (64 bytes, alignment 64): no padding, any bit pattern.
unsafe impl Plain for Line {}

/// Bit planes of a tile's counts kept (plane `j` holds bit `j` of each row's count): counts up
/// to 2^16 − 1 (the caller adds fewer bitmaps than that).
pub const PLANES: usize = 16;
