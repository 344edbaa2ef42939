//! AVX2 kernels of the counting search for CPUs without AVX-512: the bit-plane sums of a tile's
//! dense grams and the "count at least" masks on 256-bit vectors, two per tile line. A plane bit
//! becomes a counter lane by broadcasting the plane's word, spreading it so each lane holds the
//! byte with its bit, and comparing that bit; the counts equal the portable and AVX-512 kernels'
//! (tests run every kernel the CPU has on the same bitmaps).

use std::arch::x86_64::{
    __m256i, _mm256_add_epi16, _mm256_add_epi8, _mm256_and_si256, _mm256_castsi256_si128,
    _mm256_cmpeq_epi16, _mm256_cmpeq_epi8, _mm256_cvtepu8_epi16, _mm256_extracti128_si256,
    _mm256_load_si256, _mm256_loadu_si256, _mm256_max_epu16, _mm256_max_epu8, _mm256_movemask_epi8,
    _mm256_or_si256, _mm256_packs_epi16, _mm256_permute4x64_epi64, _mm256_set1_epi16,
    _mm256_set1_epi32, _mm256_set1_epi64x, _mm256_set1_epi8, _mm256_setr_epi16, _mm256_setr_epi8,
    _mm256_setzero_si256, _mm256_shuffle_epi8, _mm256_storeu_si256, _mm256_testz_si256,
    _mm256_xor_si256,
};

use super::portable::{add_dense_by_planes, at_least_scalar};
use crate::retrieval::cache::prefetch;
use crate::retrieval::dense::DenseGrams;
use crate::retrieval::tiles::{PLANES, TILE_ROWS, TILE_WORDS};

/// One tile line (512 rows) as two vectors.
type Line2 = [__m256i; 2];

/// Whether the CPU has AVX2.
pub fn available() -> bool {
    std::arch::is_x86_feature_detected!("avx2")
}

#[inline]
#[target_feature(enable = "avx2")]
fn zero() -> Line2 {
    [_mm256_setzero_si256(); 2]
}

/// Sum and carry of three bit vectors (one full adder per bit).
#[inline]
#[target_feature(enable = "avx2")]
fn csa(a: Line2, b: Line2, c: Line2) -> (Line2, Line2) {
    let half = |i: usize| {
        let u = _mm256_xor_si256(a[i], b[i]);
        let sum = _mm256_xor_si256(u, c[i]);
        let carry = _mm256_or_si256(_mm256_and_si256(a[i], b[i]), _mm256_and_si256(u, c[i]));
        (sum, carry)
    };
    let ((s0, c0), (s1, c1)) = (half(0), half(1));
    ([s0, s1], [c0, c1])
}

/// Adds eight lines to the planes of weight 1, 2 and 4 (seven full adders); returns those
/// planes and the carry of weight 8.
#[inline]
#[target_feature(enable = "avx2")]
fn add_eight(
    ones: Line2,
    twos: Line2,
    fours: Line2,
    l: [Line2; 8],
) -> (Line2, Line2, Line2, Line2) {
    let (o, t_a) = csa(ones, l[0], l[1]);
    let (o, t_b) = csa(o, l[2], l[3]);
    let (t, f_a) = csa(twos, t_a, t_b);
    let (o, t_a) = csa(o, l[4], l[5]);
    let (o, t_b) = csa(o, l[6], l[7]);
    let (t, f_b) = csa(t, t_a, t_b);
    let (f, eights) = csa(fours, f_a, f_b);
    (o, t, f, eights)
}

/// Line `at` of the bitmaps (`DenseGrams::line_at`; zero out of range), with the gram's line
/// for the next tile, which follows it in memory, fetched for the next call.
#[inline]
#[target_feature(enable = "avx2")]
fn line(dense: &DenseGrams, at: usize) -> Line2 {
    match dense.line_at(at) {
        Some(l) => {
            prefetch(std::ptr::from_ref(l).wrapping_add(1));
            let p = l.0.as_ptr().cast::<__m256i>();
            // SAFETY: a `Line` is 64 bytes aligned to 64: two aligned vectors.
            unsafe { [_mm256_load_si256(p), _mm256_load_si256(p.add(1))] }
        }
        None => zero(),
    }
}

/// The bit planes of tile `tile`'s counts over the dense grams `locals` into `words` (plane `j`
/// weighs `2^j`); returns how many planes may be non-zero (only those are written). Sixteen
/// lines at a time go through a Harley–Seal tree of full adders, a carry into the planes above
/// rippling up.
#[inline]
#[target_feature(enable = "avx2")]
fn planes(
    dense: &DenseGrams,
    tile: usize,
    locals: &[usize],
    words: &mut [[u64; TILE_WORDS]; PLANES],
) -> usize {
    let z = zero();
    let mut p = [z; PLANES];
    let mut used = 4;
    let (mut ones, mut twos, mut fours, mut eights) = (z, z, z, z);
    let tiles = dense.tiles();
    // A last, partial chunk is padded with zero lines.
    for c in locals.chunks(16) {
        let l = |i: usize| match c.get(i) {
            Some(&k) => line(dense, k.wrapping_mul(tiles).wrapping_add(tile)),
            None => z,
        };
        let (o, t, f, e_a) = add_eight(ones, twos, fours, std::array::from_fn(&l));
        let (o, t, f, e_b) = add_eight(o, t, f, std::array::from_fn(|i| l(8 + i)));
        let (e, mut carry) = csa(eights, e_a, e_b);
        (ones, twos, fours, eights) = (o, t, f, e);
        // The carry of weight 16 ripples up from plane 4.
        for (j, plane) in p.iter_mut().enumerate().skip(4) {
            let any = _mm256_or_si256(carry[0], carry[1]);
            if _mm256_testz_si256(any, any) == 1 {
                break;
            }
            let next = [
                _mm256_and_si256(plane[0], carry[0]),
                _mm256_and_si256(plane[1], carry[1]),
            ];
            *plane = [
                _mm256_xor_si256(plane[0], carry[0]),
                _mm256_xor_si256(plane[1], carry[1]),
            ];
            carry = next;
            used = used.max(j + 1);
        }
    }
    [p[0], p[1], p[2], p[3]] = [ones, twos, fours, eights];
    for (w, plane) in words.iter_mut().zip(&p).take(used) {
        let out = w.as_mut_ptr().cast::<__m256i>();
        // SAFETY: `w` is 64 bytes, two vectors.
        unsafe {
            _mm256_storeu_si256(out, plane[0]);
            _mm256_storeu_si256(out.add(1), plane[1]);
        }
    }
    used
}

/// Rows `32·g` to `32·g + 31` of the tile: each row's count in the planes `low` (weights 1 to
/// 128), one byte per row. Each plane's 32 bits are broadcast, spread so byte `i` holds the byte
/// with bit `i`, compared with that bit and masked to the plane's weight (weights never overlap,
/// so OR adds them).
#[inline]
#[target_feature(enable = "avx2")]
fn low_bytes(low: &[[u64; TILE_WORDS]], g: usize) -> __m256i {
    // Byte i of a lane takes byte i / 8 of the broadcast 32 bits, and tests bit i % 8 of it.
    let spread = _mm256_setr_epi8(
        0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3,
        3, 3,
    );
    let bits = _mm256_set1_epi64x(0x8040_2010_0804_0201_u64 as i64);
    let mut bytes = _mm256_setzero_si256();
    for (j, plane) in low.iter().enumerate().take(8) {
        let word = plane.get(g / 2).copied().unwrap_or(0);
        let b = _mm256_set1_epi32((word >> (32 * (g % 2))) as u32 as i32);
        let set = _mm256_cmpeq_epi8(_mm256_and_si256(_mm256_shuffle_epi8(b, spread), bits), bits);
        let weight = _mm256_set1_epi8((1u8 << j) as i8);
        bytes = _mm256_or_si256(bytes, _mm256_and_si256(set, weight));
    }
    bytes
}

/// Adds the dense grams `locals` of tile `tile` to 512 `u8` counters: their bit planes, turned
/// into one byte per row (`low_bytes`), added 32 rows at a time.
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
pub unsafe fn add_dense_u8(block: &mut [u8], dense: &DenseGrams, tile: usize, locals: &[usize]) {
    if block.len() < TILE_ROWS {
        add_dense_by_planes(block, dense, tile, locals);
        return;
    }
    let mut words = [[0u64; TILE_WORDS]; PLANES];
    let used = planes(dense, tile, locals, &mut words);
    let low = words.get(..used.min(8)).unwrap_or_default();
    let base = block.as_mut_ptr().cast::<__m256i>();
    for g in 0..TILE_ROWS / 32 {
        // SAFETY: `block` holds at least 512 u8 = 16 vectors of 32 lanes.
        unsafe {
            let at = base.add(g);
            _mm256_storeu_si256(
                at,
                _mm256_add_epi8(_mm256_loadu_si256(at), low_bytes(low, g)),
            );
        }
    }
}

/// Adds the dense grams `locals` of tile `tile` to 512 `u16` counters: their bit planes, the
/// lowest eight turned into one byte per row (`low_bytes`) and widened, each higher plane's 16
/// bits compared lane by lane and masked to its weight; added 16 rows at a time.
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
pub unsafe fn add_dense_u16(block: &mut [u16], dense: &DenseGrams, tile: usize, locals: &[usize]) {
    if block.len() < TILE_ROWS {
        add_dense_by_planes(block, dense, tile, locals);
        return;
    }
    let mut words = [[0u64; TILE_WORDS]; PLANES];
    let used = planes(dense, tile, locals, &mut words);
    let low = words.get(..used.min(8)).unwrap_or_default();
    let high = words.get(8..used.clamp(8, 16)).unwrap_or_default();
    let bits = _mm256_setr_epi16(
        1,
        2,
        4,
        8,
        16,
        32,
        64,
        128,
        256,
        512,
        1024,
        2048,
        4096,
        8192,
        16384,
        i16::MIN,
    );
    let base = block.as_mut_ptr().cast::<__m256i>();
    for g in 0..TILE_ROWS / 32 {
        let bytes = low_bytes(low, g);
        let halves = [
            _mm256_cvtepu8_epi16(_mm256_castsi256_si128(bytes)),
            _mm256_cvtepu8_epi16(_mm256_extracti128_si256::<1>(bytes)),
        ];
        for (h, part) in halves.into_iter().enumerate() {
            // Vector `v` holds rows 16·v to 16·v + 15.
            let v = 2 * g + h;
            let mut sum = part;
            for (j, plane) in high.iter().enumerate() {
                let word = plane.get(v / 4).copied().unwrap_or(0);
                let b = _mm256_set1_epi16((word >> (16 * (v % 4))) as u16 as i16);
                let set = _mm256_cmpeq_epi16(_mm256_and_si256(b, bits), bits);
                let weight = _mm256_set1_epi16((1u16 << (8 + j)) as i16);
                sum = _mm256_add_epi16(sum, _mm256_and_si256(set, weight));
            }
            // SAFETY: `block` holds at least 512 u16 = 32 vectors of 16 lanes.
            unsafe {
                let at = base.add(v);
                _mm256_storeu_si256(at, _mm256_add_epi16(_mm256_loadu_si256(at), sum));
            }
        }
    }
}

/// `Counter::at_least_mask` of 64 `u8` counters: two vector compares.
///
/// # Safety
/// The CPU must support AVX2.
#[inline]
#[target_feature(enable = "avx2")]
pub unsafe fn at_least_u8(chunk: &[u8], at_least: u64) -> u64 {
    let Ok(chunk) = <&[u8; 64]>::try_from(chunk) else {
        return at_least_scalar(chunk, at_least);
    };
    let Ok(bound) = u8::try_from(at_least) else {
        return 0;
    };
    let bound = _mm256_set1_epi8(bound as i8);
    let base = chunk.as_ptr().cast::<__m256i>();
    // SAFETY: `chunk` holds exactly 64 bytes, two vectors.
    let (lo, hi) = unsafe { (_mm256_loadu_si256(base), _mm256_loadu_si256(base.add(1))) };
    // v >= bound exactly when max(v, bound) == v.
    let lo = _mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_max_epu8(lo, bound), lo)) as u32;
    let hi = _mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_max_epu8(hi, bound), hi)) as u32;
    u64::from(lo) | (u64::from(hi) << 32)
}

/// `Counter::at_least_mask` of 64 `u16` counters: four vector compares, packed to bytes.
///
/// # Safety
/// The CPU must support AVX2.
#[inline]
#[target_feature(enable = "avx2")]
pub unsafe fn at_least_u16(chunk: &[u16], at_least: u64) -> u64 {
    let Ok(chunk) = <&[u16; 64]>::try_from(chunk) else {
        return at_least_scalar(chunk, at_least);
    };
    let Ok(bound) = u16::try_from(at_least) else {
        return 0;
    };
    let bound = _mm256_set1_epi16(bound as i16);
    let base = chunk.as_ptr().cast::<__m256i>();
    let ge = |j: usize| {
        // SAFETY: `chunk` holds exactly 128 bytes, four vectors.
        let v = unsafe { _mm256_loadu_si256(base.add(j)) };
        _mm256_cmpeq_epi16(_mm256_max_epu16(v, bound), v)
    };
    // Packing interleaves the two inputs' 128-bit halves; the permute puts rows back in order.
    let half = |j: usize| {
        let packed = _mm256_packs_epi16(ge(j), ge(j + 1));
        _mm256_movemask_epi8(_mm256_permute4x64_epi64::<0b11_01_10_00>(packed)) as u32
    };
    u64::from(half(0)) | (u64::from(half(2)) << 32)
}
