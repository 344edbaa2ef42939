//! Training texts handed over as one newline-joined string (no per-row Python objects).

use rayon::prelude::*;

use super::error::{invalid, Result};
use crate::surface::is_py_space;

/// `text` with whitespace runs (Python's definition) collapsed to single spaces and the ends
/// stripped: Python's `" ".join(text.split())`.
pub fn collapse_whitespace(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for word in text.split(is_py_space).filter(|w| !w.is_empty()) {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

/// The `rows` newline-separated rows of `joined`, each with its whitespace collapsed.
pub fn rows_from_joined(joined: &str, rows: usize) -> Result<Vec<String>> {
    if rows == 0 {
        return if joined.is_empty() {
            Ok(Vec::new())
        } else {
            Err(invalid("0 rows given but the text is not empty"))
        };
    }
    let lines: Vec<&str> = joined.split('\n').collect();
    if lines.len() != rows {
        return Err(invalid(format!(
            "expected {rows} newline-separated rows, found {}",
            lines.len()
        )));
    }
    Ok(lines
        .par_iter()
        .with_min_len(1024)
        .map(|l| collapse_whitespace(l))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_split_on_newlines_and_collapsed_like_python() {
        let rows = rows_from_joined(" a \t b \n\n\u{1c}c\u{3000}d\u{a0}", 3).unwrap();
        assert_eq!(rows, vec!["a b", "", "c d"]);
        assert!(rows_from_joined("a\nb", 3).is_err());
        assert_eq!(rows_from_joined("", 0).unwrap(), Vec::<String>::new());
        assert_eq!(rows_from_joined("", 1).unwrap(), vec![String::new()]);
    }
}
