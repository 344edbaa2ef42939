//! Bootstrap resampling of per-segment statistic vectors.
//!
//! A resample is a list of segment indices (drawn with replacement by the caller, so the draws
//! are numpy's and reproducible from a seed). Its statistics are the element-wise sum of the
//! indexed rows; any corpus metric is then its formula applied to that sum. Integer statistics
//! are summed in `i64` (exact); float statistics in `f64`, in index order (deterministic).

use std::fmt;
use std::ops::AddAssign;

/// Invalid arguments to the resampling kernel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BootstrapError {
    /// The statistics buffer is not a whole number of rows of `n_cols` values.
    Shape { values: usize, n_cols: usize },
    /// The index buffer cannot be split into `n_resamples` equal resamples.
    Resamples { indices: usize, n_resamples: usize },
    /// An index does not name a row of the statistics.
    Index { index: i64, n_rows: usize },
    /// The output does not hold `n_resamples × n_cols` values.
    Output {
        len: usize,
        n_resamples: usize,
        n_cols: usize,
    },
}

impl fmt::Display for BootstrapError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Shape { values, n_cols } => write!(
                f,
                "{values} statistic values are not a whole number of rows of {n_cols} columns"
            ),
            Self::Resamples {
                indices,
                n_resamples,
            } => write!(
                f,
                "{indices} indices cannot be split into {n_resamples} equal resamples"
            ),
            Self::Index { index, n_rows } => {
                write!(f, "resample index {index} is outside 0..{n_rows}")
            }
            Self::Output {
                len,
                n_resamples,
                n_cols,
            } => write!(
                f,
                "the output holds {len} values, not {n_resamples} resamples of {n_cols} columns"
            ),
        }
    }
}

impl std::error::Error for BootstrapError {}

/// Row-major `n_resamples × n_cols` sums: row `r` adds up the statistic rows named by the
/// `r`-th block of `indices` (all blocks have the same length).
pub fn resample_sums<T>(
    stats: &[T],
    n_cols: usize,
    indices: &[i64],
    n_resamples: usize,
) -> Result<Vec<T>, BootstrapError>
where
    T: Copy + Default + AddAssign + Send + Sync,
{
    let mut out = vec![T::default(); n_resamples.saturating_mul(n_cols)];
    resample_sums_into(stats, n_cols, indices, n_resamples, &mut out)?;
    Ok(out)
}

/// `resample_sums` written into `out` (`n_resamples × n_cols`, row-major; its previous contents
/// are overwritten).
pub fn resample_sums_into<T>(
    stats: &[T],
    n_cols: usize,
    indices: &[i64],
    n_resamples: usize,
    out: &mut [T],
) -> Result<(), BootstrapError>
where
    T: Copy + Default + AddAssign + Send + Sync,
{
    let per_resample = check_shapes(stats, n_cols, indices, n_resamples, out.len())?;
    if per_resample == 0 {
        out.fill(T::default());
        return Ok(());
    }
    // Resamples are independent: split them over the available cores.
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunk = n_resamples.div_ceil(threads.min(n_resamples));
    std::thread::scope(|scope| {
        for (acc, block) in out
            .chunks_mut(chunk * n_cols)
            .zip(indices.chunks(chunk * per_resample))
        {
            scope.spawn(move || sum_blocks(stats, n_cols, block, per_resample, acc));
        }
    });
    Ok(())
}

/// Validates the shapes and every index; returns the number of indices per resample.
fn check_shapes<T>(
    stats: &[T],
    n_cols: usize,
    indices: &[i64],
    n_resamples: usize,
    out_len: usize,
) -> Result<usize, BootstrapError> {
    if n_cols == 0 || !stats.len().is_multiple_of(n_cols) {
        return Err(BootstrapError::Shape {
            values: stats.len(),
            n_cols,
        });
    }
    if n_resamples == 0 || !indices.len().is_multiple_of(n_resamples) {
        return Err(BootstrapError::Resamples {
            indices: indices.len(),
            n_resamples,
        });
    }
    let expected = n_resamples.checked_mul(n_cols);
    if expected != Some(out_len) {
        return Err(BootstrapError::Output {
            len: out_len,
            n_resamples,
            n_cols,
        });
    }
    let n_rows = stats.len() / n_cols;
    if let Some(&index) = indices
        .iter()
        .find(|&&i| usize::try_from(i).map_or(true, |row| row >= n_rows))
    {
        return Err(BootstrapError::Index { index, n_rows });
    }
    Ok(indices.len() / n_resamples)
}

/// Width of the fixed-size column groups the row addition is unrolled over.
const LANES: usize = 8;

/// Sums each block of `per_resample` (validated) row indices into its row of `out`, which is
/// reset first.
fn sum_blocks<T>(stats: &[T], n_cols: usize, indices: &[i64], per_resample: usize, out: &mut [T])
where
    T: Copy + Default + AddAssign,
{
    let wide = n_cols - n_cols % LANES;
    for (acc, block) in out
        .chunks_exact_mut(n_cols)
        .zip(indices.chunks_exact(per_resample))
    {
        acc.fill(T::default());
        let (acc_wide, acc_rest) = acc.split_at_mut(wide);
        for &index in block {
            // In range: checked by the caller.
            let start = index as usize * n_cols;
            let (row_wide, row_rest) = stats[start..start + n_cols].split_at(wide);
            for (a, r) in acc_wide
                .chunks_exact_mut(LANES)
                .zip(row_wide.chunks_exact(LANES))
            {
                for k in 0..LANES {
                    a[k] += r[k];
                }
            }
            for (a, &r) in acc_rest.iter_mut().zip(row_rest) {
                *a += r;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_the_indexed_rows_of_each_resample() {
        let stats: Vec<i64> = vec![1, 10, 2, 20, 3, 30];
        let sums = resample_sums(&stats, 2, &[0, 0, 2, 1, 2, 2], 2).unwrap();
        assert_eq!(sums, vec![5, 50, 8, 80]);
    }

    #[test]
    fn every_width_sums_like_the_naive_loop() {
        for n_cols in [1, 7, 8, 9, 10, 24, 34, 36, 70] {
            let n_rows = 13;
            let stats: Vec<i64> = (0..n_rows * n_cols)
                .map(|v| (v * 7919 % 1000) as i64)
                .collect();
            let indices: Vec<i64> = (0..3 * n_rows).map(|v| (v * 5 % n_rows) as i64).collect();
            let sums = resample_sums(&stats, n_cols, &indices, 3).unwrap();
            for (r, block) in indices.chunks(n_rows).enumerate() {
                for c in 0..n_cols {
                    let want: i64 = block.iter().map(|&i| stats[i as usize * n_cols + c]).sum();
                    assert_eq!(sums[r * n_cols + c], want, "width {n_cols}");
                }
            }
        }
    }

    #[test]
    fn float_sums_follow_index_order() {
        let stats = [0.1_f64, 0.2, 0.3];
        let sums = resample_sums(&stats, 1, &[2, 1, 0], 1).unwrap();
        assert_eq!(sums, vec![0.3 + 0.2 + 0.1]);
    }

    #[test]
    fn sums_into_overwrite_the_output() {
        let mut out = vec![f64::NAN; 4];
        resample_sums_into(&[0.5_f64, 1.0, 2.0, 4.0], 2, &[1, 1, 0], 2, &mut out).unwrap_err();
        resample_sums_into(&[0.5_f64, 1.0, 2.0, 4.0], 2, &[1, 0], 2, &mut out).unwrap();
        assert_eq!(out, vec![2.0, 4.0, 0.5, 1.0]);
        resample_sums_into(&[0.5_f64, 1.0], 2, &[], 2, &mut out).unwrap();
        assert_eq!(out, vec![0.0; 4]);
        assert_eq!(
            resample_sums_into(&[1_i64, 2], 2, &[0], 1, &mut [0; 3]),
            Err(BootstrapError::Output {
                len: 3,
                n_resamples: 1,
                n_cols: 2
            })
        );
    }

    #[test]
    fn empty_resamples_sum_to_zero() {
        let sums = resample_sums(&[1_i64, 2], 2, &[], 3).unwrap();
        assert_eq!(sums, vec![0; 6]);
    }

    #[test]
    fn rejects_bad_shapes_and_indices() {
        assert_eq!(
            resample_sums(&[1_i64, 2, 3], 2, &[0], 1),
            Err(BootstrapError::Shape {
                values: 3,
                n_cols: 2
            })
        );
        assert_eq!(
            resample_sums(&[1_i64, 2], 1, &[0, 1, 0], 2),
            Err(BootstrapError::Resamples {
                indices: 3,
                n_resamples: 2
            })
        );
        let err = resample_sums(&[1_i64, 2], 1, &[0, 2], 1).unwrap_err();
        assert_eq!(
            err,
            BootstrapError::Index {
                index: 2,
                n_rows: 2
            }
        );
        assert_eq!(err.to_string(), "resample index 2 is outside 0..2");
        assert!(resample_sums(&[1_i64], 1, &[-1], 1).is_err());
    }
}
