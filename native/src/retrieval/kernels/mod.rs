//! The one dispatch point of the counting search's kernels: `Counter::at_least_mask` and
//! `Counter::add_dense` run the AVX-512, AVX2 or portable kernel, the fastest the CPU has
//! (detected once, on first use); every kernel gives the same counts and masks.

#[cfg(target_arch = "x86_64")]
mod avx2;
#[cfg(target_arch = "x86_64")]
mod avx512;
mod portable;

use crate::retrieval::dense::DenseGrams;

/// A per-row shared-gram counter: `u8` or `u16` for ordinary queries, `u32` for huge ones. A
/// count never exceeds the query's known grams, which the caller keeps within the type.
pub trait Counter:
    Copy + Default + Ord + Send + 'static + From<u8> + Into<u64> + std::ops::AddAssign
{
    #[inline(always)]
    fn inc(&mut self) {
        *self += Self::from(1);
    }
    #[inline(always)]
    fn get(self) -> u64 {
        self.into()
    }
    /// Bit `i` set when `chunk[i] >= at_least` (64 counters).
    #[inline(always)]
    fn at_least_mask(chunk: &[Self], at_least: u64) -> u64 {
        portable::at_least_scalar(chunk, at_least)
    }

    /// Adds each dense gram's bitmap of tile `tile` to the tile's 512 counters.
    fn add_dense(block: &mut [Self], dense: &DenseGrams, tile: usize, locals: &[usize]) {
        portable::add_dense_portable(block, dense, tile, locals);
    }
}

/// `Counter` for a width with SIMD kernels (`at_least`, `add_dense`): AVX-512 or AVX2 where the
/// CPU has them (`kernel`), portable otherwise.
macro_rules! simd_counter {
    ($t:ty, $at_least:ident, $add_dense:ident) => {
        impl Counter for $t {
            #[inline(always)]
            fn at_least_mask(chunk: &[Self], at_least: u64) -> u64 {
                match kernel() {
                    // SAFETY: the CPU supports AVX-512F and AVX-512BW (`kernel` checked).
                    #[cfg(target_arch = "x86_64")]
                    Kernel::Avx512 => unsafe { avx512::$at_least(chunk, at_least) },
                    // SAFETY: the CPU supports AVX2 (`kernel` checked).
                    #[cfg(target_arch = "x86_64")]
                    Kernel::Avx2 => unsafe { avx2::$at_least(chunk, at_least) },
                    _ => portable::at_least_scalar(chunk, at_least),
                }
            }

            fn add_dense(block: &mut [Self], dense: &DenseGrams, tile: usize, locals: &[usize]) {
                match kernel() {
                    // SAFETY: the CPU supports AVX-512F and AVX-512BW (`kernel` checked).
                    #[cfg(target_arch = "x86_64")]
                    Kernel::Avx512 => unsafe { avx512::$add_dense(block, dense, tile, locals) },
                    // SAFETY: the CPU supports AVX2 (`kernel` checked).
                    #[cfg(target_arch = "x86_64")]
                    Kernel::Avx2 => unsafe { avx2::$add_dense(block, dense, tile, locals) },
                    _ => portable::add_dense_by_planes(block, dense, tile, locals),
                }
            }
        }
    };
}

simd_counter!(u8, at_least_u8, add_dense_u8);
simd_counter!(u16, at_least_u16, add_dense_u16);

/// Counts of over 65,535 grams do not fit the planes: one bitmap at a time.
impl Counter for u32 {}

/// The kernels of `Counter::at_least_mask` and `Counter::add_dense`, fastest first; all give
/// the same results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kernel {
    Avx512,
    Avx2,
    Portable,
}

/// What the CPU supports (`DETECTED` and the `HAS_` bits), found on first use; 0 before.
#[cfg(target_arch = "x86_64")]
static SUPPORT: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);
/// Set in `SUPPORT` once the CPU has been asked.
#[cfg(target_arch = "x86_64")]
const DETECTED: u8 = 1;
/// The CPU has AVX-512F and AVX-512BW.
#[cfg(target_arch = "x86_64")]
const HAS_AVX512: u8 = 2;
/// The CPU has AVX2.
#[cfg(target_arch = "x86_64")]
const HAS_AVX2: u8 = 4;

/// What the CPU supports (`SUPPORT`), asking it the first time only.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn support() -> u8 {
    match SUPPORT.load(std::sync::atomic::Ordering::Relaxed) {
        0 => detect(),
        known => known,
    }
}

/// Asks the CPU what it supports and keeps the answer in `SUPPORT` (every thread finds the same).
#[cfg(target_arch = "x86_64")]
#[cold]
fn detect() -> u8 {
    let mut found = DETECTED;
    if avx512::available() {
        found |= HAS_AVX512;
    }
    if avx2::available() {
        found |= HAS_AVX2;
    }
    SUPPORT.store(found, std::sync::atomic::Ordering::Relaxed);
    found
}

/// The fastest kernel the CPU runs (of those tests allow).
#[inline(always)]
fn kernel() -> Kernel {
    #[cfg(target_arch = "x86_64")]
    {
        let allowed = fastest_allowed();
        let cpu = support();
        if allowed <= Kernel::Avx512 && cpu & HAS_AVX512 != 0 {
            return Kernel::Avx512;
        }
        if allowed <= Kernel::Avx2 && cpu & HAS_AVX2 != 0 {
            return Kernel::Avx2;
        }
    }
    Kernel::Portable
}

/// The name of the kernel the counting search runs on this CPU: `avx512`, `avx2` or `portable`.
pub fn kernel_name() -> &'static str {
    match kernel() {
        Kernel::Avx512 => "avx512",
        Kernel::Avx2 => "avx2",
        Kernel::Portable => "portable",
    }
}

/// Set by tests to the fastest kernel they allow (0: AVX-512, 1: AVX2, 2: portable).
#[cfg(test)]
static FASTEST: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// The fastest kernel allowed: any, unless a test asked for a slower one.
#[inline(always)]
fn fastest_allowed() -> Kernel {
    #[cfg(test)]
    {
        match FASTEST.load(std::sync::atomic::Ordering::Relaxed) {
            0 => Kernel::Avx512,
            1 => Kernel::Avx2,
            _ => Kernel::Portable,
        }
    }
    #[cfg(not(test))]
    {
        Kernel::Avx512
    }
}

/// Runs `f` with `kernel` at most (a slower one where the CPU lacks it); returns what `f`
/// returned and the kernel that ran (tests cover every kernel the CPU has).
#[cfg(test)]
pub fn with_kernel<T>(kernel: Kernel, f: impl FnOnce() -> T) -> (T, Kernel) {
    use std::sync::atomic::Ordering::Relaxed;
    // One test's choice at a time (others run the fastest kernel, which counts the same).
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _turn = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    FASTEST.store(kernel as u8, Relaxed);
    let ran = self::kernel();
    let out = f();
    FASTEST.store(0, Relaxed);
    (out, ran)
}

/// Runs `f` with the portable kernel.
#[cfg(test)]
pub fn with_portable_kernel<T>(f: impl FnOnce() -> T) -> T {
    with_kernel(Kernel::Portable, f).0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::retrieval::tiles::TILE_ROWS;

    /// Every kernel.
    const KERNELS: [Kernel; 3] = [Kernel::Avx512, Kernel::Avx2, Kernel::Portable];

    /// Checks each kernel's mask against the one spelled out bit by bit.
    fn check_masks<T: Counter>(chunk: &[T], at_least: u64) {
        let expected = chunk
            .iter()
            .enumerate()
            .filter(|(_, c)| c.get() >= at_least)
            .fold(0u64, |m, (i, _)| m | (1 << i));
        for k in KERNELS {
            let (mask, ran) = with_kernel(k, || T::at_least_mask(chunk, at_least));
            let width = std::mem::size_of::<T>() * 8;
            assert_eq!(mask, expected, "{ran:?}: u{width} at least {at_least}");
        }
    }

    /// Adds `locals` of every tile with the current kernel, from counters starting at `start`.
    fn dense_counts<T: Counter>(dense: &DenseGrams, locals: &[usize], start: T) -> Vec<T> {
        let mut counts = vec![start; dense.tiles() * TILE_ROWS];
        for (tile, block) in counts.chunks_mut(TILE_ROWS).enumerate() {
            T::add_dense(block, dense, tile, locals);
        }
        counts
    }

    #[test]
    fn dense_kernels_add_each_bitmap_to_its_rows_counters() {
        // 600 grams over three tiles; gram k covers the rows r with (7r + k) % (k % 3 + 1) == 0,
        // so counts differ by row and reach every plane the widths hold (up to ~370).
        let (rows, grams) = (3 * TILE_ROWS, 600usize);
        let has = |r: usize, k: usize| (r * 7 + k).is_multiple_of(k % 3 + 1);
        let lists: Vec<Vec<u16>> = (0..grams)
            .map(|k| (0..rows).filter(|&r| has(r, k)).map(|r| r as u16).collect())
            .collect();
        let refs: Vec<&[u16]> = lists.iter().map(Vec::as_slice).collect();
        let df = lists.iter().map(|l| l.len() as u32).collect();
        let dense = DenseGrams::from_blocks(rows, 0, df, &[refs]).unwrap();
        for take in [0usize, 1, 15, 16, 17, 31, 33, 200, 250, 600] {
            let locals: Vec<usize> = (0..take).map(|k| (k * 37) % grams).collect();
            let want = |r: usize| locals.iter().filter(|&&k| has(r, k)).count() as u64;
            check_dense_width(&dense, &locals, 3u16, want);
            if take <= 250 {
                check_dense_width(&dense, &locals, 5u8, want);
            }
        }
    }

    /// Each kernel's counts of `locals` from counters starting at `start` are `start + want(r)`.
    fn check_dense_width<T: Counter + std::fmt::Debug>(
        dense: &DenseGrams,
        locals: &[usize],
        start: T,
        want: impl Fn(usize) -> u64,
    ) {
        let width = std::mem::size_of::<T>() * 8;
        let grams = locals.len();
        for k in KERNELS {
            let (counts, ran) = with_kernel(k, || dense_counts(dense, locals, start));
            for (r, c) in counts.iter().enumerate() {
                let expected = start.get() + want(r);
                assert_eq!(
                    c.get(),
                    expected,
                    "{ran:?}: u{width}, {grams} grams, row {r}"
                );
            }
        }
    }

    #[test]
    fn at_least_masks_agree_with_each_counter_for_every_kernel() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for round in 0..200 {
            let c8: Vec<u8> = (0..64).map(|_| (next() % 256) as u8).collect();
            let c16: Vec<u16> = (0..64)
                .map(|_| (next() % 70_000).min(65_535) as u16)
                .collect();
            let c32: Vec<u32> = (0..64).map(|_| (next() % 200_000) as u32).collect();
            // Bounds inside each range, at its ends, and beyond it (no counter reaches those).
            for at_least in [0, 1, round, 255, 256, 65_535, 65_536, next() % 300_000] {
                check_masks(&c8, at_least);
                check_masks(&c16, at_least);
                check_masks(&c32, at_least);
            }
        }
        for k in KERNELS {
            let full8 = [u8::MAX; 64];
            let full16 = [u16::MAX; 64];
            let ((a, b, c, d), ran) = with_kernel(k, || {
                (
                    u8::at_least_mask(&full8, 255),
                    u8::at_least_mask(&full8, 256),
                    u16::at_least_mask(&full16, 65_535),
                    u16::at_least_mask(&full16, 65_536),
                )
            });
            assert_eq!((a, b, c, d), (u64::MAX, 0, u64::MAX, 0), "{ran:?}");
        }
    }
}
