//! Bootstrap resampling over numpy arrays: the statistics and indices are read in place and the
//! sums are written into an array the caller allocates; nothing is copied across.
//!
//! The arrays cross as numpy's array interface (`__array_interface__`: data address, shape,
//! strides, type string) rather than PyO3's `PyBuffer`, which the stable ABI of Python 3.10 that
//! the extension targets does not offer. Only exact `numpy.ndarray`s are accepted, so the
//! interface is numpy's own, and each must be two-dimensional, C-contiguous, aligned and of the
//! kernel's element type.

use std::ops::{AddAssign, Range};

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use super::error::invalid;
use crate::bootstrap;

/// An element type of the kernels and its numpy type string.
trait Element: Copy + Default + AddAssign + Send + Sync {
    const TYPESTR: &'static str;
}

impl Element for i64 {
    const TYPESTR: &'static str = if cfg!(target_endian = "little") {
        "<i8"
    } else {
        ">i8"
    };
}

impl Element for f64 {
    const TYPESTR: &'static str = if cfg!(target_endian = "little") {
        "<f8"
    } else {
        ">f8"
    };
}

/// A validated two-dimensional, C-contiguous numpy array of `T` (borrowed from the argument).
struct Matrix {
    address: usize,
    rows: usize,
    cols: usize,
    readonly: bool,
}

impl Matrix {
    /// Reads and checks the array interface of `array`.
    fn of<T: Element>(name: &str, array: &Bound<'_, PyAny>) -> PyResult<Self> {
        let ndarray = array.py().import("numpy")?.getattr("ndarray")?;
        if !array.get_type().is(&ndarray) {
            return Err(invalid(format!("{name} must be a numpy.ndarray")));
        }
        let interface = array
            .getattr("__array_interface__")?
            .cast_into::<PyDict>()?;
        let item = |key: &str| -> PyResult<Bound<'_, PyAny>> {
            interface
                .get_item(key)?
                .ok_or_else(|| invalid(format!("{name} has no {key} in its array interface")))
        };
        let typestr: String = item("typestr")?.extract()?;
        if typestr != T::TYPESTR {
            return Err(invalid(format!(
                "{name} must hold {} values (numpy {}), got {typestr}",
                std::any::type_name::<T>(),
                T::TYPESTR
            )));
        }
        let shape: Vec<usize> = item("shape")?.extract()?;
        let &[rows, cols] = shape.as_slice() else {
            return Err(invalid(format!(
                "{name} must be two-dimensional, got {} dimension(s)",
                shape.len()
            )));
        };
        if !item("strides")?.is_none() {
            return Err(invalid(format!("{name} must be C-contiguous")));
        }
        let data = item("data")?.cast_into::<PyTuple>()?;
        let (address, readonly): (usize, bool) = data.extract()?;
        if address == 0 || address % std::mem::align_of::<T>() != 0 {
            return Err(invalid(format!("{name} is not aligned for its values")));
        }
        rows.checked_mul(cols)
            .and_then(|n| n.checked_mul(std::mem::size_of::<T>()))
            .ok_or_else(|| invalid(format!("{name} is too large")))?;
        Ok(Self {
            address,
            rows,
            cols,
            readonly,
        })
    }

    fn len(&self) -> usize {
        self.rows * self.cols
    }

    /// The bytes the array occupies.
    fn bytes<T>(&self) -> Range<usize> {
        self.address..self.address + self.len() * std::mem::size_of::<T>()
    }
}

fn overlaps(a: &Range<usize>, b: &Range<usize>) -> bool {
    a.start < b.end && b.start < a.end
}

/// Sums of the indexed `stats` rows of every resample, written into `out`.
fn resample_into<T: Element>(
    py: Python<'_>,
    stats: &Bound<'_, PyAny>,
    indices: &Bound<'_, PyAny>,
    out: &Bound<'_, PyAny>,
) -> PyResult<()> {
    let stats = Matrix::of::<T>("stats", stats)?;
    let indices = Matrix::of::<i64>("indices", indices)?;
    let out = Matrix::of::<T>("out", out)?;
    if (out.rows, out.cols) != (indices.rows, stats.cols) {
        return Err(invalid(format!(
            "out must have shape ({}, {}), got ({}, {})",
            indices.rows, stats.cols, out.rows, out.cols
        )));
    }
    if out.readonly {
        return Err(invalid("out must be writable"));
    }
    let written = out.bytes::<T>();
    if !written.is_empty()
        && (overlaps(&written, &stats.bytes::<T>()) || overlaps(&written, &indices.bytes::<i64>()))
    {
        return Err(invalid("out must not share memory with stats or indices"));
    }
    // SAFETY: each address is the data of a numpy.ndarray the caller holds for the whole call
    // (the arguments stay referenced), checked above to be non-null, aligned, C-contiguous and of
    // `len()` elements of the element type (every bit pattern of i64 and f64 is a value). `out`
    // is writable and shares no byte with the inputs, so the shared and the exclusive slices do
    // not alias. Callers must not resize or write the arrays from another thread meanwhile, as
    // with any array a native function reads without the GIL.
    let (stats_values, index_values, sums) = unsafe {
        (
            std::slice::from_raw_parts(stats.address as *const T, stats.len()),
            std::slice::from_raw_parts(indices.address as *const i64, indices.len()),
            std::slice::from_raw_parts_mut(out.address as *mut T, out.len()),
        )
    };
    let (n_cols, n_resamples) = (stats.cols, indices.rows);
    py.detach(|| {
        bootstrap::resample_sums_into(stats_values, n_cols, index_values, n_resamples, sums)
    })?;
    Ok(())
}

/// Per-resample sums of int64 statistic rows: `out[r] = stats[indices[r]].sum(axis=0)`.
#[pyfunction]
fn resample_sums_i64(
    py: Python<'_>,
    stats: &Bound<'_, PyAny>,
    indices: &Bound<'_, PyAny>,
    out: &Bound<'_, PyAny>,
) -> PyResult<()> {
    resample_into::<i64>(py, stats, indices, out)
}

/// Per-resample sums of float64 statistic rows, added in index order.
#[pyfunction]
fn resample_sums_f64(
    py: Python<'_>,
    stats: &Bound<'_, PyAny>,
    indices: &Bound<'_, PyAny>,
    out: &Bound<'_, PyAny>,
) -> PyResult<()> {
    resample_into::<f64>(py, stats, indices, out)
}

/// Adds the resampling functions to the extension module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(resample_sums_i64, m)?)?;
    m.add_function(wrap_pyfunction!(resample_sums_f64, m)?)?;
    Ok(())
}
