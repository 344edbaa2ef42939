//! Exact search by counting: for one query, the number of grams it shares with every row of a
//! side, then the best rows read off those counts.
//!
//! The counts are exact intersections, so a row's similarity follows from its count and length
//! without looking at the row again. Sparse grams add their postings one by one, a window of
//! rows at a time; dense grams add their bitmaps 512 rows at a time (`add_dense`, through the
//! bit planes of `planes.rs`). Reading off keeps the best so far and skips
//! every tile whose highest count cannot reach it: a row sharing `c` of the query's `|Q|` grams
//! scores at most `c / |Q|`.
//!
//! One pass per query and side serves the source, target and pair searches alike: the pair
//! value of a row is the minimum of its two side similarities, both known from the counts.

use super::cache::prefetch;
use super::dense::{DenseGrams, TILE_ROWS, TILE_WORDS};
use super::index::{SideIndex, TrainingIndex, BLOCK_ROWS};
use super::pair::capped_by_references;
use super::planes::Planes;
use super::score::{Best, Ratio};
use super::search::{min_shared, Query, Stats};

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
    /// Adds bit `i` of `word` to `counts[i]` (64 counters).
    #[inline(always)]
    fn add_word(counts: &mut [Self], word: u64) {
        for (i, c) in counts.iter_mut().take(64).enumerate() {
            *c += Self::from(((word >> i) & 1) as u8);
        }
    }
    /// Bit `i` set when `chunk[i] >= at_least` (64 counters).
    #[inline(always)]
    fn at_least_mask(chunk: &[Self], at_least: u64) -> u64 {
        at_least_scalar(chunk, at_least)
    }

    /// Adds each dense gram's bitmap of tile `tile` to the tile's 512 counters.
    fn add_dense(block: &mut [Self], dense: &DenseGrams, tile: usize, locals: &[usize]) {
        add_dense_portable(block, dense, tile, locals);
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
                    Kernel::Avx512 => unsafe { simd::$at_least(chunk, at_least) },
                    // SAFETY: the CPU supports AVX2 (`kernel` checked).
                    #[cfg(target_arch = "x86_64")]
                    Kernel::Avx2 => unsafe { avx2::$at_least(chunk, at_least) },
                    _ => at_least_scalar(chunk, at_least),
                }
            }

            fn add_dense(block: &mut [Self], dense: &DenseGrams, tile: usize, locals: &[usize]) {
                match kernel() {
                    // SAFETY: the CPU supports AVX-512F and AVX-512BW (`kernel` checked).
                    #[cfg(target_arch = "x86_64")]
                    Kernel::Avx512 => unsafe { simd::$add_dense(block, dense, tile, locals) },
                    // SAFETY: the CPU supports AVX2 (`kernel` checked).
                    #[cfg(target_arch = "x86_64")]
                    Kernel::Avx2 => unsafe { avx2::$add_dense(block, dense, tile, locals) },
                    _ => add_dense_by_planes(block, dense, tile, locals),
                }
            }
        }
    };
}

simd_counter!(u8, at_least_u8, add_dense_u8);
simd_counter!(u16, at_least_u16, add_dense_u16);

/// Counts of over 65,535 grams do not fit the planes: one bitmap at a time.
impl Counter for u32 {}

/// `Counter::at_least_mask` without SIMD intrinsics.
pub(super) fn at_least_scalar<T: Counter>(chunk: &[T], at_least: u64) -> u64 {
    let mut mask = 0u64;
    for (i, c) in chunk.iter().take(64).enumerate() {
        mask |= u64::from(c.get() >= at_least) << i;
    }
    mask
}

/// `Counter::add_dense` one bitmap at a time, without SIMD intrinsics.
fn add_dense_portable<T: Counter>(
    block: &mut [T],
    dense: &DenseGrams,
    tile: usize,
    locals: &[usize],
) {
    for &k in locals {
        let line = dense.tile_line(tile, k);
        for (lane, chunk) in block.chunks_mut(64).enumerate().take(TILE_WORDS) {
            if let Some(&word) = line.get(lane) {
                if word != 0 {
                    T::add_word(chunk, word);
                }
            }
        }
    }
}

/// `Counter::add_dense` through bit planes (`planes.rs`), without SIMD intrinsics (the planes
/// of a query's counts all fit `T`).
pub(super) fn add_dense_by_planes<T: Counter>(
    block: &mut [T],
    dense: &DenseGrams,
    tile: usize,
    locals: &[usize],
) {
    let mut planes = Planes::default();
    planes.fill(dense, tile, locals);
    let mut w = T::from(1);
    for (j, plane) in planes.lanes().iter().enumerate() {
        if j > 0 {
            w += w; // plane j weighs 2^j
        }
        for (chunk, &word) in block.chunks_mut(64).zip(plane.iter()) {
            let mut bits = word;
            while bits != 0 {
                if let Some(c) = chunk.get_mut(bits.trailing_zeros() as usize) {
                    *c += w;
                }
                bits &= bits - 1;
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
use super::avx2;

#[cfg(target_arch = "x86_64")]
mod simd {
    use std::arch::x86_64::{
        __m512i, _mm512_and_si512, _mm512_cmpge_epu16_mask, _mm512_cmpge_epu8_mask,
        _mm512_load_si512, _mm512_loadu_si512, _mm512_mask_add_epi16, _mm512_mask_add_epi8,
        _mm512_set1_epi16, _mm512_set1_epi8, _mm512_setzero_si512, _mm512_storeu_si512,
        _mm512_ternarylogic_epi64, _mm512_test_epi64_mask, _mm512_xor_si512,
    };

    use super::super::dense::{DenseGrams, TILE_ROWS};
    use super::super::planes::PLANES;

    /// Whether the CPU has AVX-512F and AVX-512BW.
    pub fn available() -> bool {
        std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512bw")
    }

    /// The tile's counters as `N` vectors (512 counters of 64 / N bytes).
    ///
    /// # Safety
    /// The CPU must support AVX-512F, and `block` must hold at least `N` × 64 bytes.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn load<T, const N: usize>(block: &[T]) -> [__m512i; N] {
        let base = block.as_ptr().cast::<__m512i>();
        let mut acc = [_mm512_setzero_si512(); N];
        for (j, a) in acc.iter_mut().enumerate() {
            // SAFETY: within the `N` × 64 bytes the caller vouches for.
            *a = unsafe { _mm512_loadu_si512(base.add(j)) };
        }
        acc
    }

    /// Writes `acc` back over the tile's counters (see `load`).
    ///
    /// # Safety
    /// As for `load`.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn store<T, const N: usize>(block: &mut [T], acc: &[__m512i; N]) {
        let base = block.as_mut_ptr().cast::<__m512i>();
        for (j, a) in acc.iter().enumerate() {
            // SAFETY: as in `load`.
            unsafe { _mm512_storeu_si512(base.add(j), *a) };
        }
    }

    /// `Counter::at_least_mask` of 64 `u8` counters: one vector compare.
    ///
    /// # Safety
    /// The CPU must support AVX-512F and AVX-512BW.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    pub unsafe fn at_least_u8(chunk: &[u8], at_least: u64) -> u64 {
        let Ok(chunk) = <&[u8; 64]>::try_from(chunk) else {
            return super::at_least_scalar(chunk, at_least);
        };
        let Ok(bound) = u8::try_from(at_least) else {
            return 0;
        };
        // SAFETY: `chunk` holds exactly 64 bytes.
        let v = unsafe { _mm512_loadu_si512(chunk.as_ptr().cast::<__m512i>()) };
        _mm512_cmpge_epu8_mask(v, _mm512_set1_epi8(bound as i8))
    }

    /// `Counter::at_least_mask` of 64 `u16` counters: two vector compares.
    ///
    /// # Safety
    /// The CPU must support AVX-512F and AVX-512BW.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    pub unsafe fn at_least_u16(chunk: &[u16], at_least: u64) -> u64 {
        let Ok(chunk) = <&[u16; 64]>::try_from(chunk) else {
            return super::at_least_scalar(chunk, at_least);
        };
        let Ok(bound) = u16::try_from(at_least) else {
            return 0;
        };
        let bound = _mm512_set1_epi16(bound as i16);
        let base = chunk.as_ptr().cast::<__m512i>();
        // SAFETY: `chunk` holds exactly 128 bytes, two vectors.
        let (lo, hi) = unsafe { (_mm512_loadu_si512(base), _mm512_loadu_si512(base.add(1))) };
        let lo = _mm512_cmpge_epu16_mask(lo, bound);
        let hi = _mm512_cmpge_epu16_mask(hi, bound);
        u64::from(lo) | (u64::from(hi) << 32)
    }

    /// Sum and carry of three bit vectors (one full adder per bit).
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn csa(a: __m512i, b: __m512i, c: __m512i) -> (__m512i, __m512i) {
        (
            _mm512_ternarylogic_epi64::<0x96>(a, b, c),
            _mm512_ternarylogic_epi64::<0xE8>(a, b, c),
        )
    }

    /// Adds eight lines to the planes of weight 1, 2 and 4 (seven full adders); returns those
    /// planes and the carry of weight 8.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn add_eight(
        ones: __m512i,
        twos: __m512i,
        fours: __m512i,
        l: [__m512i; 8],
    ) -> (__m512i, __m512i, __m512i, __m512i) {
        let (o, t_a) = csa(ones, l[0], l[1]);
        let (o, t_b) = csa(o, l[2], l[3]);
        let (t, f_a) = csa(twos, t_a, t_b);
        let (o, t_a) = csa(o, l[4], l[5]);
        let (o, t_b) = csa(o, l[6], l[7]);
        let (t, f_b) = csa(t, t_a, t_b);
        let (f, eights) = csa(fours, f_a, f_b);
        (o, t, f, eights)
    }

    /// Line `at` of the bitmaps (`DenseGrams::line_at`) as a vector (zero out of range). The
    /// gram's line for the next tile, which follows it in memory, is fetched for the next call: a
    /// query's grams are more streams than the processor's prefetchers follow.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn line(dense: &DenseGrams, at: usize) -> __m512i {
        match dense.line_at(at) {
            Some(l) => {
                super::prefetch(std::ptr::from_ref(l).wrapping_add(1));
                // SAFETY: a `Line` is 64 bytes, aligned to 64.
                unsafe { _mm512_load_si512(l.0.as_ptr().cast::<__m512i>()) }
            }
            None => _mm512_setzero_si512(),
        }
    }

    /// Bit planes of tile `tile`'s counts over the dense grams `locals` (plane `j` weighs
    /// `2^j`), and how many planes may be non-zero. Sixteen lines at a time go through a
    /// Harley–Seal tree of full adders (a carry into the planes above ripples up).
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn planes(dense: &DenseGrams, tile: usize, locals: &[usize]) -> ([__m512i; PLANES], usize) {
        let zero = _mm512_setzero_si512();
        let mut p = [zero; PLANES];
        let mut used = 0;
        // Adds a carry of weight 16 at plane 4, rippling upwards.
        let ripple = |p: &mut [__m512i; PLANES], used: &mut usize, mut carry| {
            for (j, plane) in p.iter_mut().enumerate().skip(4) {
                if _mm512_test_epi64_mask(carry, carry) == 0 {
                    return;
                }
                let sum = _mm512_xor_si512(*plane, carry);
                carry = _mm512_and_si512(*plane, carry);
                *plane = sum;
                *used = (*used).max(j + 1);
            }
        };
        let (mut ones, mut twos, mut fours, mut eights) = (zero, zero, zero, zero);
        // A last, partial chunk is padded with zero lines.
        let tiles = dense.tiles();
        for c in locals.chunks(16) {
            let l = |i: usize| match c.get(i) {
                Some(&k) => line(dense, k.wrapping_mul(tiles).wrapping_add(tile)),
                None => zero,
            };
            let (o, t, f, e_a) = add_eight(ones, twos, fours, std::array::from_fn(&l));
            let (o, t, f, e_b) = add_eight(o, t, f, std::array::from_fn(|i| l(8 + i)));
            let (e, sixteens) = csa(eights, e_a, e_b);
            (ones, twos, fours, eights) = (o, t, f, e);
            ripple(&mut p, &mut used, sixteens);
        }
        let (p0, p1, p2, p3) = (ones, twos, fours, eights);
        [p[0], p[1], p[2], p[3]] = [p0, p1, p2, p3];
        used = used.max(4);
        (p, used)
    }

    /// A vector's eight 64-bit words.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn words(v: __m512i) -> [u64; 8] {
        let mut out = [0u64; 8];
        // SAFETY: `out` is 64 bytes.
        unsafe { _mm512_storeu_si512(out.as_mut_ptr().cast::<__m512i>(), v) };
        out
    }

    /// Adds the dense grams `locals` of tile `tile` to 512 `u16` counters: their bit planes
    /// (`planes.rs`, vectorised here), then one masked add per plane and 32 rows.
    ///
    /// # Safety
    /// The CPU must support AVX-512F and AVX-512BW.
    #[target_feature(enable = "avx512f,avx512bw")]
    pub unsafe fn add_dense_u16(
        block: &mut [u16],
        dense: &DenseGrams,
        tile: usize,
        locals: &[usize],
    ) {
        if block.len() < TILE_ROWS {
            super::add_dense_by_planes(block, dense, tile, locals);
            return;
        }
        let (planes, used) = planes(dense, tile, locals);
        // SAFETY: `block` holds at least 512 u16 = 16 vectors of 32 lanes.
        let mut acc: [__m512i; 16] = unsafe { load(block) };
        for (j, plane) in planes.iter().enumerate().take(used.min(16)) {
            let weight = _mm512_set1_epi16((1u16 << j) as i16);
            let words = words(*plane);
            for (g, a) in acc.iter_mut().enumerate() {
                let word = words[g / 2];
                let mask = (word >> (32 * (g % 2))) as u32;
                *a = _mm512_mask_add_epi16(*a, mask, *a, weight);
            }
        }
        // SAFETY: as above.
        unsafe { store(block, &acc) };
    }

    /// Adds the dense grams `locals` of tile `tile` to 512 `u8` counters: their bit planes, then
    /// one masked add per plane and 64 rows (one bitmap word).
    ///
    /// # Safety
    /// The CPU must support AVX-512F and AVX-512BW.
    #[target_feature(enable = "avx512f,avx512bw")]
    pub unsafe fn add_dense_u8(
        block: &mut [u8],
        dense: &DenseGrams,
        tile: usize,
        locals: &[usize],
    ) {
        if block.len() < TILE_ROWS {
            super::add_dense_by_planes(block, dense, tile, locals);
            return;
        }
        let (planes, used) = planes(dense, tile, locals);
        // SAFETY: `block` holds at least 512 u8 = 8 vectors of 64 lanes.
        let mut acc: [__m512i; 8] = unsafe { load(block) };
        for (j, plane) in planes.iter().enumerate().take(used.min(8)) {
            let weight = _mm512_set1_epi8((1u8 << j) as i8);
            for (a, &word) in acc.iter_mut().zip(words(*plane).iter()) {
                *a = _mm512_mask_add_epi8(*a, word, *a, weight);
            }
        }
        // SAFETY: as above.
        unsafe { store(block, &acc) };
    }
}

/// The kernels of `Counter::at_least_mask` and `Counter::add_dense`, fastest first; all give
/// the same results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kernel {
    Avx512,
    Avx2,
    Portable,
}

/// The fastest kernel the CPU runs (of those tests allow).
#[inline(always)]
fn kernel() -> Kernel {
    #[cfg(target_arch = "x86_64")]
    {
        let allowed = fastest_allowed();
        if allowed <= Kernel::Avx512 && simd::available() {
            return Kernel::Avx512;
        }
        if allowed <= Kernel::Avx2 && avx2::available() {
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

/// Bytes of counters one pass over the postings adds to: 128 KiB, a whole block of `u16`
/// counters (of `u8` too: a window never spans blocks), 32,768 rows of `u32`. The counters sit
/// in the second-level cache; fewer, longer passes read where each list resumes less often,
/// which cost more than first-level misses (on the real corpus 128 KiB took 7-11% less time
/// than 32 KiB, once lists and bitmaps were fetched ahead; without that 32 KiB was best).
const WINDOW_BYTES: usize = 1 << 17;

/// Rows of counters of type `T` one pass adds to: a power of two dividing `BLOCK_ROWS`.
const fn window_rows<T>() -> usize {
    let rows = WINDOW_BYTES / std::mem::size_of::<T>();
    if rows > BLOCK_ROWS {
        BLOCK_ROWS
    } else {
        rows
    }
}

/// Set by tests to count in wider counters than the queries need (every width gives the same
/// counts).
#[cfg(test)]
static NARROWEST: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// The fewest known query grams the counters must hold: 0, unless a test asked for wider ones.
#[inline]
pub fn narrowest_counts() -> usize {
    #[cfg(test)]
    {
        NARROWEST.load(std::sync::atomic::Ordering::Relaxed)
    }
    #[cfg(not(test))]
    {
        0
    }
}

/// Runs `f` with counters wide enough for `grams` known query grams at least (tests cover the
/// `u8`, `u16` and `u32` paths with the same queries).
#[cfg(test)]
pub fn with_counters_for<T>(grams: usize, f: impl FnOnce() -> T) -> T {
    NARROWEST.store(grams, std::sync::atomic::Ordering::Relaxed);
    let out = f();
    NARROWEST.store(0, std::sync::atomic::Ordering::Relaxed);
    out
}

/// The non-empty postings of `query`'s sparse grams in block `b` of `side`, into `lists`;
/// returns how many rows they hold.
fn block_lists<'s>(
    side: &'s SideIndex,
    query: &Query<'_>,
    b: usize,
    lists: &mut Vec<&'s [u16]>,
) -> u64 {
    lists.clear();
    let Some(block) = side.blocks().get(b) else {
        return 0;
    };
    let mut rows = 0u64;
    for &g in query.sparse_grams() {
        let list = block.rows(g);
        rows += list.len() as u64;
        if !list.is_empty() {
            lists.push(list);
        }
    }
    rows
}

/// Lists ahead of the one being added whose next rows are fetched (see `add_postings`).
const LISTS_AHEAD: usize = 8;

/// Adds the rows of each list below `end` to their counters and advances the lists past them.
fn add_postings<C: Counter>(counts: &mut [C; BLOCK_ROWS], lists: &mut [&[u16]], end: usize) {
    // Where each list resumes was last read a window ago and has mostly left the cache since:
    // the lists `LISTS_AHEAD` places on are fetched while this one is added.
    for rows in lists.iter().take(LISTS_AHEAD) {
        prefetch(rows.as_ptr());
    }
    for i in 0..lists.len() {
        if let Some(ahead) = lists.get(i + LISTS_AHEAD) {
            prefetch(ahead.as_ptr());
        }
        let Some(rows) = lists.get_mut(i) else {
            continue;
        };
        // Sixteen rows at a time while the sixteenth is below `end` (rows ascend), with the
        // list read four lines ahead (on the real corpus 4% less time than two or six); then
        // one at a time.
        let mut rest: &[u16] = rows;
        while let Some((many, tail)) = rest.split_first_chunk::<16>() {
            if usize::from(many[15]) >= end {
                break;
            }
            prefetch(tail.as_ptr().wrapping_add(128));
            for &low in many {
                counts[usize::from(low)].inc();
            }
            rest = tail;
        }
        let mut taken = 0;
        for &low in rest.iter() {
            if usize::from(low) >= end {
                break;
            }
            counts[usize::from(low)].inc();
            taken += 1;
        }
        *rows = rest.get(taken..).unwrap_or_default();
        // The line after the one the rest starts in: a coming window needs it.
        prefetch(rows.as_ptr().wrapping_add(32));
    }
}

/// Sets each counter to its row's number of lists (what the counters held is replaced),
/// through 8-bit counters, 255 lists at a time (a list adds at most one to a row): `narrow`'s
/// 64 KiB take the postings where wider counters would take twice the cache, and go into
/// `counts` after each group. `narrow` is all zeros before and after.
fn set_postings_narrow<C: Counter>(
    counts: &mut [C; BLOCK_ROWS],
    lists: &mut [&[u16]],
    narrow: &mut [u8; BLOCK_ROWS],
) {
    let mut groups = lists.chunks_mut(usize::from(u8::MAX));
    let Some(first) = groups.next() else {
        counts.fill(C::default());
        return;
    };
    add_postings(narrow, first, BLOCK_ROWS);
    for (c, n) in counts.iter_mut().zip(narrow.iter_mut()) {
        *c = C::from(*n);
        *n = 0;
    }
    for group in groups {
        add_postings(narrow, group, BLOCK_ROWS);
        for (c, n) in counts.iter_mut().zip(narrow.iter_mut()) {
            *c += C::from(*n);
            *n = 0;
        }
    }
}

/// Every row's count of one query's grams on one side, with each tile's highest count.
#[derive(Debug, Default)]
pub struct RowCounts<T> {
    counts: Vec<T>,
    tile_max: Vec<u64>,
    /// |G(query)|, unseen grams included.
    size: u64,
    /// Whether the query is the empty text.
    empty: bool,
}

impl<T: Counter> RowCounts<T> {
    /// Counts `query`'s grams in every row of `side`.
    pub fn fill(
        &mut self,
        side: &SideIndex,
        query: &Query<'_>,
        locals: &mut Vec<usize>,
        stats: &mut Stats,
    ) {
        let dense = side.dense();
        // Each window's counters are zeroed just before it is counted.
        let (_, tiles, mut visited) = self.start(side, query, locals);
        // Block by block, and within a block window by window (each gram's rows ascend): a
        // window's counters take the sparse grams' postings and then the dense grams' bitmaps
        // while they are in cache.
        let window = window_rows::<T>();
        let mut lists: Vec<&[u16]> = Vec::with_capacity(query.sparse_grams().len());
        for (b, counts) in self.counts.chunks_exact_mut(BLOCK_ROWS).enumerate() {
            let Ok(counts) = <&mut [T; BLOCK_ROWS]>::try_from(counts) else {
                continue;
            };
            visited += block_lists(side, query, b, &mut lists);
            for start in (0..BLOCK_ROWS).step_by(window) {
                let first_tile = (b * BLOCK_ROWS + start) / TILE_ROWS;
                if first_tile >= tiles {
                    break;
                }
                let end = start + window;
                let Some(part) = counts.get_mut(start..end) else {
                    continue;
                };
                part.fill(T::default());
                add_postings(counts, &mut lists, end);
                let part = counts.get_mut(start..end).unwrap_or_default();
                for (i, tile_counts) in part.chunks_mut(TILE_ROWS).enumerate() {
                    let tile = first_tile + i;
                    if tile >= tiles {
                        break;
                    }
                    if !locals.is_empty() {
                        T::add_dense(tile_counts, dense, tile, locals);
                    }
                    self.tile_max
                        .push(tile_counts.iter().copied().max().map_or(0, Counter::get));
                }
            }
        }
        stats.postings_visited += visited;
        stats.postings_total += visited;
        stats.searches_counted += 1;
    }

    /// Readies the counters for `query` on `side`: sized to whole blocks, with the query's size,
    /// and its dense grams as bitmap numbers in `locals`; returns the blocks and tiles to count
    /// and the postings the dense grams stand for.
    fn start(
        &mut self,
        side: &SideIndex,
        query: &Query<'_>,
        locals: &mut Vec<usize>,
    ) -> (usize, usize, u64) {
        let dense = side.dense();
        let tiles = side.rows().div_ceil(TILE_ROWS);
        // Whole blocks, so a 16-bit row within a block always indexes its counters.
        let blocks = side
            .blocks()
            .len()
            .max(tiles.div_ceil(BLOCK_ROWS / TILE_ROWS));
        if self.counts.len() != blocks * BLOCK_ROWS {
            self.counts.clear();
            self.counts.resize(blocks * BLOCK_ROWS, T::default());
        }
        self.size = query.size;
        self.empty = query.text.is_empty();
        self.tile_max.clear();
        locals.clear();
        let mut visited = 0u64;
        for &g in query.dense_grams() {
            locals.push(g.wrapping_sub(dense.first()) as usize);
            visited += dense.df(g);
        }
        (blocks, tiles, visited)
    }

    /// Counts each of `queries` into its own `counts` in one pass over the side's blocks: in
    /// each block, every query's dense grams are added tile by tile for all the queries at once
    /// (a tile's bitmap lines, shared by most queries, are read from memory once), and each
    /// query's postings a whole block of counters at a time (the window of `u8` and `u16`
    /// counters; `u32` ones are left to `fill`, whose windows keep to the cache) — before the
    /// bitmaps for `u16` counters (`set_postings_narrow`), after them for `u8` ones. The counts
    /// equal `fill`'s.
    pub fn fill_many(
        side: &SideIndex,
        queries: &[&Query<'_>],
        counts: &mut [&mut RowCounts<T>],
        locals: &mut Vec<Vec<usize>>,
        stats: &mut Stats,
    ) {
        let dense = side.dense();
        if locals.len() < queries.len() {
            locals.resize_with(queries.len(), Vec::new);
        }
        let mut blocks = 0;
        let mut tiles = 0;
        let mut visited = 0u64;
        for ((query, c), l) in queries.iter().zip(counts.iter_mut()).zip(locals.iter_mut()) {
            let (b, t, v) = c.start(side, query, l);
            (blocks, tiles, visited) = (b, t, visited + v);
        }
        let n = queries.len().min(counts.len());
        let mut lists: Vec<Vec<&[u16]>> = vec![Vec::new(); n];
        let mut narrow = Box::new([0u8; BLOCK_ROWS]);
        let per_block = BLOCK_ROWS / TILE_ROWS;
        for b in 0..blocks {
            let first_tile = b * per_block;
            if first_tile >= tiles {
                break;
            }
            let last_tile = (first_tile + per_block).min(tiles);
            let span = b * BLOCK_ROWS..(b + 1) * BLOCK_ROWS;
            // Counters wider than 8 bits take the postings first, through the 8-bit block,
            // which sets them (no zeroing of their own); 8-bit ones are zeroed and take them
            // after the bitmaps.
            let narrowed = std::mem::size_of::<T>() > 1;
            for ((query, c), rows) in queries.iter().zip(counts.iter_mut()).zip(&mut lists) {
                visited += block_lists(side, query, b, rows);
                let Some(block) = c.counts.get_mut(span.clone()) else {
                    continue;
                };
                match <&mut [T; BLOCK_ROWS]>::try_from(block) {
                    Ok(block) if narrowed => set_postings_narrow(block, rows, &mut narrow),
                    Ok(block) => block.fill(T::default()),
                    Err(_) => {}
                }
            }
            for tile in first_tile..last_tile {
                let at = tile * TILE_ROWS..(tile + 1) * TILE_ROWS;
                for (c, l) in counts.iter_mut().zip(locals.iter()).take(n) {
                    if let (false, Some(tile_counts)) = (l.is_empty(), c.counts.get_mut(at.clone()))
                    {
                        T::add_dense(tile_counts, dense, tile, l);
                    }
                }
            }
            for (c, rows) in counts.iter_mut().zip(&mut lists) {
                let Some(block) = c.counts.get_mut(span.clone()) else {
                    continue;
                };
                let Ok(block) = <&mut [T; BLOCK_ROWS]>::try_from(block) else {
                    continue;
                };
                if !narrowed {
                    add_postings(block, rows, BLOCK_ROWS);
                }
                for tile_counts in block.chunks(TILE_ROWS).take(last_tile - first_tile) {
                    c.tile_max
                        .push(tile_counts.iter().copied().max().map_or(0, Counter::get));
                }
            }
        }
        stats.postings_visited += visited;
        stats.postings_total += visited;
        stats.searches_counted += n as u64;
    }

    /// The count of row `d`.
    #[inline]
    pub fn count(&self, d: u32) -> u64 {
        self.counts.get(d as usize).map_or(0, |c| c.get())
    }

    /// The query's similarity to row `d`.
    #[inline]
    pub fn similarity(&self, side: &SideIndex, d: u32) -> Ratio {
        Ratio::jaccard(self.count(d), self.size, side.doc_len(d))
    }

    /// Calls `f` with each row, ascending, whose count is at least `need()` (re-read after every
    /// call, as the caller's best rises); whole tiles below it are skipped. A tile's rows are
    /// gathered first and `ahead` called on each, so what `f` will read can be prefetched.
    fn scan(&self, mut need: impl FnMut() -> u64, ahead: impl Fn(u32), mut f: impl FnMut(u32)) {
        let mut rows = [0u32; TILE_ROWS];
        // Tiles past the side's last row have no maximum (their counters are stale).
        let tiles = self.counts.chunks(TILE_ROWS).zip(&self.tile_max);
        for (tile, (block, &max)) in tiles.enumerate() {
            if max < need() {
                continue;
            }
            let at_least = need();
            let mut found = 0;
            for (lane, chunk) in block.chunks(64).enumerate() {
                let mut mask = T::at_least_mask(chunk, at_least);
                while mask != 0 {
                    let d = (tile * TILE_ROWS + lane * 64) as u32 + mask.trailing_zeros();
                    if let Some(slot) = rows.get_mut(found) {
                        *slot = d;
                        found += 1;
                    }
                    ahead(d);
                    mask &= mask - 1;
                }
            }
            for &d in rows.get(..found).unwrap_or(&[]) {
                if self.count(d) >= need() {
                    f(d);
                }
            }
        }
    }

    /// Offers every row that can beat `best` (higher similarity, or equal at a lower row).
    pub fn best_into(&self, side: &SideIndex, best: &mut Best, stats: &mut Stats) {
        let size = self.size;
        // The count a row needs, worked out again only when the best rises.
        let need = std::cell::Cell::new(min_shared(best, size));
        self.scan(
            || need.get(),
            |d| side.prefetch_len(d),
            |d| {
                stats.candidates_verified += 1;
                if best.offer(self.similarity(side, d), d) {
                    need.set(min_shared(best, size));
                }
            },
        );
    }

    /// A row with the highest count (the first such), as a starting point for `best_into`.
    pub fn top_row(&self) -> Option<u32> {
        let (tile, &max) = self
            .tile_max
            .iter()
            .enumerate()
            .max_by_key(|&(t, &m)| (m, std::cmp::Reverse(t)))?;
        if max == 0 {
            return None;
        }
        let block = self.counts.get(tile * TILE_ROWS..)?;
        let i = block.iter().position(|c| c.get() == max)?;
        Some((tile * TILE_ROWS + i) as u32)
    }
}

/// Count buffers of one worker, reused across queries.
#[derive(Debug, Default)]
pub struct Buffers<T> {
    pub source: RowCounts<T>,
    pub refs: Vec<RowCounts<T>>,
    pub locals: Vec<usize>,
}

/// Count buffers of one worker for several test segments at once (`RowCounts::fill_many`).
#[derive(Debug, Default)]
pub struct ManyBuffers<T> {
    pub sources: Vec<RowCounts<T>>,
    /// Each segment's references' counts.
    pub refs: Vec<Vec<RowCounts<T>>>,
    pub locals: Vec<Vec<usize>>,
}

/// The best row of `side` for one query, from its counts (`best` may hold a starting point).
pub fn best_row<T: Counter>(
    side: &SideIndex,
    counts: &RowCounts<T>,
    best: &mut Best,
    stats: &mut Stats,
) {
    if let Some(row) = counts.top_row() {
        best.offer(counts.similarity(side, row), row);
    }
    counts.best_into(side, best, stats);
}

/// The best target row over references with counts `refs` (ties: lower row, then lower
/// reference); returns the best and the reference reaching it.
pub fn best_target<T: Counter>(
    side: &SideIndex,
    refs: &[RowCounts<T>],
    stats: &mut Stats,
) -> (Best, Option<u32>) {
    let mut best = Best::NONE;
    for counts in refs {
        if let Some(row) = counts.top_row() {
            best.offer(counts.similarity(side, row), row);
        }
    }
    for counts in refs {
        counts.best_into(side, &mut best, stats);
    }
    // The reference reaching the best at its row: the lowest one with that similarity.
    let ref_idx = best.row().and_then(|row| {
        refs.iter()
            .position(|c| c.similarity(side, row).cmp_exact(best.score).is_eq())
            .map(|r| r as u32)
    });
    (best, ref_idx)
}

/// Pair value of row `d`: min(source similarity, best reference similarity), from counts.
#[inline]
fn pair_value<T: Counter>(
    index: &TrainingIndex,
    source: &RowCounts<T>,
    refs: &[RowCounts<T>],
    d: u32,
) -> Ratio {
    let s = source.similarity(&index.src, d);
    capped_by_references(s, refs.iter().map(|r| r.similarity(&index.tgt, d)))
}

/// The best pair row: max over rows of min(source, best reference similarity), lowest row on
/// ties. `seeds` are rows worth trying first (the side's nearest rows).
pub fn best_pair<T: Counter>(
    index: &TrainingIndex,
    source: &RowCounts<T>,
    refs: &[RowCounts<T>],
    seeds: &[u32],
    stats: &mut Stats,
) -> Best {
    let mut best = Best::NONE;
    for &d in seeds {
        best.offer(pair_value(index, source, refs, d), d);
    }
    if source.empty {
        // Only rows with an empty source are similar to an empty query.
        for &d in index.src.empty_rows() {
            best.offer(pair_value(index, source, refs, d), d);
        }
        return best;
    }
    // A row beats the best only if its source count reaches the best's share of the query,
    // and so does its count for some reference (an empty reference is similar to empty rows
    // with a zero count, so it disables that filter).
    // The counts a row needs, worked out again only when the best rises.
    let any_empty_ref = refs.iter().any(|r| r.empty);
    let need = std::cell::Cell::new(min_shared(&best, source.size));
    let mut ref_needs: Vec<u64> = refs.iter().map(|r| min_shared(&best, r.size)).collect();
    source.scan(
        || need.get(),
        |d| {
            index.src.prefetch_len(d);
            index.tgt.prefetch_len(d);
        },
        |d| {
            let counts = refs.iter().zip(&ref_needs);
            if !any_empty_ref && counts.into_iter().all(|(r, &n)| r.count(d) < n) {
                return;
            }
            stats.candidates_verified += 1;
            if best.offer(pair_value(index, source, refs, d), d) {
                need.set(min_shared(&best, source.size));
                for (n, r) in ref_needs.iter_mut().zip(refs) {
                    *n = min_shared(&best, r.size);
                }
            }
        },
    );
    stats.pairs_counted += 1;
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_tile_a_block_for_every_counter_width() {
        for rows in [
            window_rows::<u8>(),
            window_rows::<u16>(),
            window_rows::<u32>(),
        ] {
            assert!(rows.is_power_of_two() && rows <= BLOCK_ROWS, "{rows}");
            assert_eq!(BLOCK_ROWS % rows, 0);
        }
        assert_eq!(window_rows::<u16>(), BLOCK_ROWS);
        assert!(
            window_rows::<u32>() < BLOCK_ROWS,
            "u32 windows split a block"
        );
    }

    #[test]
    fn add_word_adds_each_bit_to_its_counter() {
        let mut c = vec![0u16; 64];
        u16::add_word(&mut c, (1 << 0) | (1 << 5) | (1 << 63));
        u16::add_word(&mut c, 1 << 5);
        assert_eq!(c[0], 1);
        assert_eq!(c[5], 2);
        assert_eq!(c[63], 1);
        assert_eq!(c.iter().map(|&x| u64::from(x)).sum::<u64>(), 4);
    }

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
