//! Helpers shared by the crate's unit tests.

/// A small deterministic generator (xorshift): the same sequence on every platform, no
/// dependency needed. Test modules add their own generators of texts in `impl Rng` blocks.
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 pseudo-random bits.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number below `n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}
