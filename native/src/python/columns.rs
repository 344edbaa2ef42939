//! Result columns in Arrow's memory layout, written straight into Python `bytes` objects (no
//! intermediate buffer): fixed-width values native-endian, booleans and validity as LSB-first
//! bitmaps of `ceil(n / 8)` bytes. Python wraps them with `pyarrow.Array.from_buffers` or
//! `numpy.frombuffer` without copying.

use pyo3::prelude::*;
use pyo3::types::PyBytes;

use super::error::invalid;

/// Values of `W` bytes each, one after the other.
fn fixed_width<'py, const W: usize>(
    py: Python<'py>,
    values: impl ExactSizeIterator<Item = [u8; W]>,
) -> PyResult<Bound<'py, PyBytes>> {
    let len = values
        .len()
        .checked_mul(W)
        .ok_or_else(|| invalid("a result column is too large"))?;
    PyBytes::new_with(py, len, |buf| {
        for (slot, value) in buf.chunks_exact_mut(W).zip(values) {
            slot.copy_from_slice(&value);
        }
        Ok(())
    })
}

/// An LSB-first bitmap: bit `i % 8` of byte `i / 8` is set when the `i`-th value is true.
pub fn bitmap<'py>(
    py: Python<'py>,
    bits: impl ExactSizeIterator<Item = bool>,
) -> PyResult<Bound<'py, PyBytes>> {
    PyBytes::new_with(py, bits.len().div_ceil(8), |buf| {
        // `new_with` hands over zeroed bytes: only the set bits are written.
        for (i, bit) in bits.enumerate() {
            if let (true, Some(byte)) = (bit, buf.get_mut(i / 8)) {
                *byte |= 1 << (i % 8);
            }
        }
        Ok(())
    })
}

/// float64 values.
pub fn float64<'py>(
    py: Python<'py>,
    values: impl ExactSizeIterator<Item = f64>,
) -> PyResult<Bound<'py, PyBytes>> {
    fixed_width(py, values.map(f64::to_ne_bytes))
}

/// uint64 values.
pub fn uint64<'py>(
    py: Python<'py>,
    values: impl ExactSizeIterator<Item = u64>,
) -> PyResult<Bound<'py, PyBytes>> {
    fixed_width(py, values.map(u64::to_ne_bytes))
}

/// Values of an optional column and its validity bitmap; absent values are written as zero.
pub fn nullable<'py, T: Copy + Default, const W: usize>(
    py: Python<'py>,
    values: impl ExactSizeIterator<Item = Option<T>> + Clone,
    to_bytes: fn(T) -> [u8; W],
) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
    let valid = bitmap(py, values.clone().map(|v| v.is_some()))?;
    let data = fixed_width(py, values.map(|v| to_bytes(v.unwrap_or_default())))?;
    Ok((data, valid))
}
