//! AVX-512 kernels of the counting search: the bit planes of a tile's dense grams summed on
//! 512-bit vectors (one tile line each), added to the counters by masked adds, and the "count at
//! least" masks as vector compares; the counts equal the portable and AVX2 kernels'.

use std::arch::x86_64::{
    __m512i, _mm512_and_si512, _mm512_cmpge_epu16_mask, _mm512_cmpge_epu8_mask, _mm512_load_si512,
    _mm512_loadu_si512, _mm512_mask_add_epi16, _mm512_mask_add_epi8, _mm512_set1_epi16,
    _mm512_set1_epi8, _mm512_setzero_si512, _mm512_storeu_si512, _mm512_ternarylogic_epi64,
    _mm512_test_epi64_mask, _mm512_xor_si512,
};

use super::portable::{add_dense_by_planes, at_least_scalar};
use crate::retrieval::cache::prefetch;
use crate::retrieval::dense::DenseGrams;
use crate::retrieval::tiles::{PLANES, TILE_ROWS};

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
        return at_least_scalar(chunk, at_least);
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
        return at_least_scalar(chunk, at_least);
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
            prefetch(std::ptr::from_ref(l).wrapping_add(1));
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
pub unsafe fn add_dense_u16(block: &mut [u16], dense: &DenseGrams, tile: usize, locals: &[usize]) {
    if block.len() < TILE_ROWS {
        add_dense_by_planes(block, dense, tile, locals);
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
pub unsafe fn add_dense_u8(block: &mut [u8], dense: &DenseGrams, tile: usize, locals: &[usize]) {
    if block.len() < TILE_ROWS {
        add_dense_by_planes(block, dense, tile, locals);
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
