//! Saving and loading a `RetrievalIndex`: its training index's arrays as the sections of one
//! file (`sections.rs`), memory-mapped when loaded (docs/exposure.md, "Stored indexes").

use std::path::Path;

use super::audit::RetrievalIndex;
use super::index::TrainingIndex;
use super::sections::{read_file, read_info, write_file, PersistError, SectionsOut};

/// What `RetrievalIndex::info` reads from a stored index without loading it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexInfo {
    /// The key it was stored under.
    pub key: Vec<u8>,
    /// The caller's metadata.
    pub meta: Vec<u8>,
    /// Its format version.
    pub version: u32,
    /// Its length in bytes.
    pub bytes: u64,
}

impl RetrievalIndex {
    /// Stores the index at `path` (atomically) under `key`, with the caller's `meta` bytes;
    /// returns the file's length.
    pub fn save(&self, path: &Path, key: &[u8], meta: &[u8]) -> Result<u64, PersistError> {
        let mut sections = SectionsOut::default();
        self.training().to_sections(&mut sections);
        write_file(path, key, meta, sections)
    }

    /// One checksum of the index's arrays (`SectionsOut::content_checksum`): equal for an index
    /// built in memory and the same index saved and loaded.
    pub fn checksum(&self) -> u64 {
        let mut sections = SectionsOut::default();
        self.training().to_sections(&mut sections);
        sections.content_checksum()
    }

    /// The index stored at `path` under `key` (memory-mapped, every checksum verified), and the
    /// metadata stored with it.
    pub fn load(path: &Path, key: &[u8]) -> Result<(Self, Vec<u8>), PersistError> {
        let (sections, meta) = read_file(path, key)?;
        let index = TrainingIndex::from_sections(&sections).map_err(|problem| PersistError {
            path: path.to_path_buf(),
            problem,
        })?;
        Ok((Self::from_training(index), meta))
    }

    /// The key, metadata, version and length of the index stored at `path`, from its header
    /// and metadata section only.
    pub fn info(path: &Path) -> Result<IndexInfo, PersistError> {
        let (header, meta) = read_info(path)?;
        Ok(IndexInfo {
            key: header.key,
            meta,
            version: header.version,
            bytes: header.bytes,
        })
    }
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::path::PathBuf;
    use std::time::{SystemTime, UNIX_EPOCH};

    use xxhash_rust::xxh3::xxh3_64;

    use super::*;
    use crate::retrieval::audit::Mode;
    use crate::retrieval::sections::{Problem, FORMAT_VERSION};

    /// A fresh directory under the system's temporary directory, removed when dropped.
    struct TempDir(PathBuf);

    impl TempDir {
        fn new(tag: &str) -> Self {
            let nanos = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos());
            let dir = std::env::temp_dir().join(format!(
                "tame-wh-persist-{tag}-{}-{nanos}",
                std::process::id()
            ));
            fs::create_dir_all(&dir).unwrap();
            Self(dir)
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    fn texts(seed: u64, n: usize) -> Vec<String> {
        let words = [
            "alpha", "beta", "gamma", "délta", "ε", "zeta", "eta", "théta", "", "x",
        ];
        let mut state = seed;
        (0..n)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let len = (state % 6) as usize;
                (0..len)
                    .map(|k| words[((state >> (8 * k)) % words.len() as u64) as usize])
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect()
    }

    /// An index with sparse and dense grams, duplicate and empty rows.
    fn index() -> RetrievalIndex {
        let mut src = texts(7, 300);
        let tgt = texts(11, 300);
        src[5] = src[3].clone();
        RetrievalIndex::build_with(&src, &tgt, &[2, 3], Some(1), Some(20)).unwrap()
    }

    fn audit(index: &RetrievalIndex) -> Vec<crate::retrieval::AuditRow> {
        let queries = texts(13, 40);
        let refs: Vec<Vec<String>> = texts(17, 40).into_iter().map(|r| vec![r]).collect();
        index
            .audit(&queries, &refs, Mode::Exact, Some(1))
            .unwrap()
            .0
    }

    #[test]
    fn a_loaded_index_is_mapped_and_audits_identically() {
        let dir = TempDir::new("roundtrip");
        let path = dir.0.join("a.index");
        let built = index();
        let bytes = built.save(&path, b"key-1", b"{\"m\": 1}").unwrap();
        assert_eq!(fs::metadata(&path).unwrap().len(), bytes);
        let (loaded, meta) = RetrievalIndex::load(&path, b"key-1").unwrap();
        assert_eq!(meta, b"{\"m\": 1}");
        assert!(loaded.training().src.doc_lens_mapped());
        assert_eq!(loaded.rows(), built.rows());
        assert_eq!(loaded.orders(), built.orders());
        assert_eq!(audit(&loaded), audit(&built));
        let info = RetrievalIndex::info(&path).unwrap();
        assert_eq!(
            (info.key.as_slice(), info.version),
            (&b"key-1"[..], FORMAT_VERSION)
        );
        assert_eq!(
            (info.meta.as_slice(), info.bytes),
            (&b"{\"m\": 1}"[..], bytes)
        );
        // Only the index itself is left in the directory (no temporary file).
        assert_eq!(fs::read_dir(&dir.0).unwrap().count(), 1);
    }

    #[test]
    fn the_checksum_names_the_content_not_the_file() {
        let dir = TempDir::new("checksum");
        let built = index();
        built.save(&dir.0.join("a.index"), b"key-a", b"one").unwrap();
        built.save(&dir.0.join("b.index"), b"key-b", b"two").unwrap();
        let (a, _) = RetrievalIndex::load(&dir.0.join("a.index"), b"key-a").unwrap();
        let (b, _) = RetrievalIndex::load(&dir.0.join("b.index"), b"key-b").unwrap();
        // Built, or loaded under any key and metadata: one value.
        assert_eq!(a.checksum(), built.checksum());
        assert_eq!(b.checksum(), built.checksum());
        // Another corpus, or the same corpus with other gram orders: another value.
        let mut src = texts(7, 300);
        src[6] = format!("{} x", src[6]);
        let other = RetrievalIndex::build_with(&src, &texts(11, 300), &[2, 3], Some(1), Some(20));
        assert_ne!(other.unwrap().checksum(), built.checksum());
        let orders = RetrievalIndex::build(&texts(7, 300), &texts(11, 300), &[2, 4], Some(1));
        assert_ne!(orders.unwrap().checksum(), built.checksum());
    }

    #[test]
    fn every_flipped_byte_is_detected() {
        let dir = TempDir::new("flip");
        let path = dir.0.join("a.index");
        index().save(&path, b"k", b"meta").unwrap();
        let good = fs::read(&path).unwrap();
        let bad_path = dir.0.join("bad.index");
        // Every byte of a small index (header, table, padding, sections), one at a time.
        let small = dir.0.join("small.index");
        RetrievalIndex::build(&["ab"], &["cd"], &[2], Some(1))
            .unwrap()
            .save(&small, b"k", b"")
            .unwrap();
        let tiny = fs::read(&small).unwrap();
        for at in 0..tiny.len() {
            let mut copy = tiny.clone();
            copy[at] ^= 0x10;
            fs::write(&bad_path, &copy).unwrap();
            assert!(RetrievalIndex::load(&bad_path, b"k").is_err(), "byte {at}");
        }
        // A spread of positions in the larger one.
        for at in (0..good.len()).step_by(97) {
            let mut copy = good.clone();
            copy[at] ^= 1;
            fs::write(&bad_path, &copy).unwrap();
            let err = RetrievalIndex::load(&bad_path, b"k").unwrap_err();
            assert_eq!(err.path, bad_path);
        }
    }

    #[test]
    fn truncated_foreign_and_other_key_files_are_refused() {
        let dir = TempDir::new("refuse");
        let path = dir.0.join("a.index");
        index().save(&path, b"k", b"").unwrap();
        let good = fs::read(&path).unwrap();
        let cut = dir.0.join("cut.index");
        for len in [0, 5, 8, 47, 48, 200, good.len() / 2, good.len() - 1] {
            fs::write(&cut, &good[..len]).unwrap();
            let err = RetrievalIndex::load(&cut, b"k").unwrap_err().problem;
            assert!(
                matches!(err, Problem::Truncated { .. } | Problem::Corrupt(_)),
                "{len}: {err:?}"
            );
        }
        fs::write(&cut, [&good[..], b"x"].concat()).unwrap();
        assert!(matches!(
            RetrievalIndex::load(&cut, b"k").unwrap_err().problem,
            Problem::Corrupt(_)
        ));
        fs::write(
            &cut,
            b"some other file, long enough to hold a whole header of ours",
        )
        .unwrap();
        assert!(matches!(
            RetrievalIndex::load(&cut, b"k").unwrap_err().problem,
            Problem::Foreign(_)
        ));
        let mut other_version = good.clone();
        other_version[8..12].copy_from_slice(&(FORMAT_VERSION + 1).to_le_bytes());
        fs::write(&cut, &other_version).unwrap();
        assert!(matches!(
            RetrievalIndex::load(&cut, b"k").unwrap_err().problem,
            Problem::Foreign(_)
        ));
        assert_eq!(
            RetrievalIndex::load(&path, b"other").unwrap_err().problem,
            Problem::KeyMismatch
        );
        assert!(matches!(
            RetrievalIndex::load(&dir.0.join("missing"), b"k")
                .unwrap_err()
                .problem,
            Problem::Io(_)
        ));
    }

    #[test]
    fn a_failed_write_leaves_the_old_file() {
        let dir = TempDir::new("atomic");
        let path = dir.0.join("a.index");
        index().save(&path, b"k", b"").unwrap();
        let before = fs::read(&path).unwrap();
        let err = index()
            .save(&dir.0.join("no-such-dir").join("b.index"), b"k", b"")
            .unwrap_err();
        assert!(matches!(err.problem, Problem::Io(_)));
        // Overwriting replaces the whole file at once.
        RetrievalIndex::build(&["a"], &["b"], &[3], Some(1))
            .unwrap()
            .save(&path, b"k2", b"")
            .unwrap();
        assert_ne!(fs::read(&path).unwrap(), before);
        assert!(RetrievalIndex::load(&path, b"k2").is_ok());
        assert_eq!(fs::read_dir(&dir.0).unwrap().count(), 1);
    }

    /// Deterministic rows of words in several scripts (Latin, Greek, Cyrillic,
    /// CJK, Arabic, emoji, digits), with duplicate and empty rows: sparse, dense and long grams.
    fn golden_texts(seed: u64, n: usize) -> Vec<String> {
        let words = [
            "the",
            "of",
            "and",
            "translation",
            "warehouse",
            "déjà",
            "vu",
            "naïve",
            "straße",
            "αβγ",
            "λόγος",
            "μήνυμα",
            "привет",
            "мир",
            "данные",
            "数据",
            "仓库",
            "翻译质量",
            "評価",
            "テスト",
            "مرحبا",
            "بيانات",
            "🙂",
            "🚀✨",
            "12",
            "3.14",
            "2024-05",
            "x",
            "—",
            "¿qué?",
            "ok!",
            "tame-wh",
        ];
        let mut state = seed;
        let mut next = move || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            state >> 33
        };
        let mut rows: Vec<String> = Vec::with_capacity(n);
        for i in 0..n {
            let pick = next();
            if pick % 97 == 0 {
                rows.push(String::new());
            } else if pick % 89 == 0 && i > 0 {
                let again = rows[(next() as usize) % i].clone();
                rows.push(again);
            } else {
                let len = 1 + (next() % 12) as usize;
                let text: Vec<&str> = (0..len)
                    .map(|_| words[(next() as usize) % words.len()])
                    .collect();
                rows.push(text.join(" "));
            }
        }
        rows
    }

    /// The bytes of a stored index are pinned: the length and checksum of the file of a fixed
    /// corpus, as the format was when this test was written. When they change, the file format
    /// changed (bump `FORMAT_VERSION`) or the build stopped being deterministic.
    #[test]
    fn stored_bytes_are_pinned() {
        let dir = TempDir::new("pinned");
        let path = dir.0.join("a.index");
        let (src, tgt) = (golden_texts(1, 4000), golden_texts(2, 4000));
        let index = RetrievalIndex::build(&src, &tgt, &[2, 3, 4], Some(2)).unwrap();
        let len = index
            .save(&path, b"golden-key", b"{\"golden\": true}")
            .unwrap();
        let bytes = fs::read(&path).unwrap();
        assert_eq!(len, bytes.len() as u64);
        assert_eq!(
            (bytes.len(), xxh3_64(&bytes)),
            (1_539_024, 0xc7ae_2bb2_ae96_2423),
            "the stored bytes changed: bump FORMAT_VERSION"
        );
    }

    /// The stored layout: when this list changes, bump `FORMAT_VERSION`.
    #[test]
    fn section_layout_is_pinned() {
        let index = index();
        let mut out = SectionsOut::default();
        index.training().to_sections(&mut out);
        let got = out.layout();
        let side = |p: &str| {
            [
                "doc_lens:4",
                "dfs:4",
                "empty_rows:4",
                "blocks:8",
                "block0.offsets:4",
                "block0.lows:2",
                "dense.shape:8",
                "dense.bitmaps:64",
                "dense.df:4",
                "vocab.len:8",
                "vocab.slots:4",
                "vocab.keys:8",
                "vocab.long.bytes:1",
                "vocab.long.ends:8",
                "vocab.long_ids:4",
                "vocab.long_table:8",
                "texts.bytes:1",
                "texts.ends:8",
                "texts.first:8",
            ]
            .map(|s| format!("{p}.{s}"))
        };
        let mut want = vec!["orders:8".to_owned()];
        want.extend(side("src"));
        want.extend(side("tgt"));
        want.push("pairs.first:8".to_owned());
        assert_eq!(got, want, "the stored layout changed: bump FORMAT_VERSION");
        assert_eq!(FORMAT_VERSION, 4);
    }
}
