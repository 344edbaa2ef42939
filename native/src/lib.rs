//! Native kernels of tame-wh.
//!
//! The core logic lives in plain Rust modules that `cargo test` exercises without Python;
//! the `python` feature adds the PyO3 bindings that maturin builds into `warehouse._native`.

/// Version of the native crate; the Python package checks it matches its own at import.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

pub mod bootstrap;
pub mod cyzil;
pub mod minhash;
pub mod process;
pub mod profile;
pub mod retrieval;
pub mod substring;
pub mod surface;
pub mod ter;

#[cfg(feature = "python")]
mod python;

#[cfg(test)]
mod module_graph;
#[cfg(test)]
mod testing;

#[cfg(test)]
mod tests {
    use super::VERSION;

    #[test]
    fn version_is_semver_like() {
        let parts: Vec<&str> = VERSION.split('.').collect();
        assert_eq!(parts.len(), 3);
        assert!(parts.iter().all(|p| p.parse::<u32>().is_ok()));
    }
}
