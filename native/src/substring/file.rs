//! A shard stored in one file, memory-mapped when loaded (docs/exposure.md, "Substring lens"):
//!
//! ```text
//! magic "TWHSUFX\0" | version u32 | key length u32 | documents u64 | text bytes u64 |
//! checksum u64 | key (padded to 8) | starts u64 × documents | text (padded to 8) |
//! suffix array u32 × text bytes
//! ```
//!
//! All numbers little-endian; the checksum is xxh3-64 over the starts, the text and the suffix
//! array. A file whose header, length, key, checksum or positions do not hold is refused.

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::Path;

use memmap2::Mmap;
use xxhash_rust::xxh3::Xxh3;

use super::error::{file_problem, Result};
use super::shard::{SuffixShard, END};

/// The version of the shard file format; part of every stored shard's key in Python.
pub const FILE_VERSION: u32 = 1;

const MAGIC: &[u8; 8] = b"TWHSUFX\0";
const HEADER: usize = 8 + 4 + 4 + 8 + 8 + 8;

fn padded(n: usize) -> usize {
    n.div_ceil(8) * 8
}

fn le_u32s(values: &[u32]) -> impl Iterator<Item = [u8; 4]> + '_ {
    values.iter().map(|v| v.to_le_bytes())
}

/// The checksum of a shard's arrays (xxh3-64 of their little-endian bytes).
pub(crate) fn checksum_of(starts: &[u64], text: &[u8], sa: &[u32]) -> u64 {
    let mut h = Xxh3::new();
    for s in starts {
        h.update(&s.to_le_bytes());
    }
    h.update(text);
    if cfg!(target_endian = "little") {
        // SAFETY: u32 has no padding; the slice's bytes are its little-endian values here.
        h.update(unsafe { std::slice::from_raw_parts(sa.as_ptr().cast::<u8>(), sa.len() * 4) });
    } else {
        for bytes in le_u32s(sa) {
            h.update(&bytes);
        }
    }
    h.digest()
}

impl SuffixShard {
    /// Stores the shard at `path` under `key` (written to a temporary file, then renamed);
    /// returns the file's length.
    pub fn save(&self, path: &Path, key: &[u8]) -> Result<u64> {
        let tmp = path.with_extension(format!("{}.tmp", std::process::id()));
        let written = self.write(&tmp, key).and_then(|n| {
            fs::rename(&tmp, path)
                .map_err(|e| file_problem(path, format!("cannot rename: {e}")))?;
            Ok(n)
        });
        if written.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        written
    }

    fn write(&self, path: &Path, key: &[u8]) -> Result<u64> {
        let fail = |e: std::io::Error| file_problem(path, format!("cannot write: {e}"));
        let key_len = u32::try_from(key.len()).map_err(|_| file_problem(path, "key too long"))?;
        let mut out = BufWriter::with_capacity(1 << 20, File::create(path).map_err(fail)?);
        let (text, sa) = (self.text(), self.suffix_array());
        out.write_all(MAGIC).map_err(fail)?;
        out.write_all(&FILE_VERSION.to_le_bytes()).map_err(fail)?;
        out.write_all(&key_len.to_le_bytes()).map_err(fail)?;
        for n in [self.docs() as u64, text.len() as u64, self.checksum()] {
            out.write_all(&n.to_le_bytes()).map_err(fail)?;
        }
        out.write_all(key).map_err(fail)?;
        out.write_all(&[0; 8][..padded(key.len()) - key.len()])
            .map_err(fail)?;
        for s in self.starts() {
            out.write_all(&s.to_le_bytes()).map_err(fail)?;
        }
        out.write_all(text).map_err(fail)?;
        out.write_all(&[0; 8][..padded(text.len()) - text.len()])
            .map_err(fail)?;
        for bytes in le_u32s(sa) {
            out.write_all(&bytes).map_err(fail)?;
        }
        let file = out.into_inner().map_err(|e| fail(e.into_error()))?;
        file.sync_all().map_err(fail)?;
        Ok(file.metadata().map_err(fail)?.len())
    }

    /// The shard stored at `path` under `key`, memory-mapped, its checksum and every position
    /// verified.
    pub fn load(path: &Path, key: &[u8]) -> Result<Self> {
        let bad = |problem: &str| file_problem(path, problem);
        let file = File::open(path).map_err(|e| file_problem(path, format!("cannot open: {e}")))?;
        // SAFETY: the map is read-only; stored shards are written to a temporary file and
        // renamed into place, never modified where they lie.
        let map = unsafe { Mmap::map(&file) }
            .map_err(|e| file_problem(path, format!("cannot map: {e}")))?;
        if cfg!(target_endian = "big") {
            return Err(bad("stored shards are read on little-endian machines only"));
        }
        let header = map.get(..HEADER).ok_or_else(|| bad("truncated header"))?;
        if &header[..8] != MAGIC {
            return Err(bad("not a tame-wh suffix-array shard"));
        }
        let word4 = |at: usize| {
            u32::from_le_bytes([header[at], header[at + 1], header[at + 2], header[at + 3]])
        };
        let word8 = |at: usize| {
            let mut b = [0; 8];
            b.copy_from_slice(&header[at..at + 8]);
            u64::from_le_bytes(b)
        };
        let version = word4(8);
        if version != FILE_VERSION {
            return Err(file_problem(
                path,
                format!("format version {version}, expected {FILE_VERSION}"),
            ));
        }
        let key_len = word4(12) as usize;
        let to_usize = |n: u64| usize::try_from(n).map_err(|_| bad("sizes beyond this machine"));
        let (docs, text_len, checksum) = (to_usize(word8(16))?, to_usize(word8(24))?, word8(32));
        let key_at = HEADER;
        let starts_at = key_at + padded(key_len);
        let text_at = docs
            .checked_mul(8)
            .and_then(|n| n.checked_add(starts_at))
            .ok_or_else(|| bad("sizes overflow"))?;
        let sa_at = text_at
            .checked_add(padded(text_len))
            .ok_or_else(|| bad("sizes overflow"))?;
        let end = text_len
            .checked_mul(4)
            .and_then(|n| n.checked_add(sa_at))
            .ok_or_else(|| bad("sizes overflow"))?;
        if map.len() != end {
            return Err(file_problem(
                path,
                format!("{} bytes, expected {end} (truncated or foreign)", map.len()),
            ));
        }
        if map.get(key_at..key_at + key_len) != Some(key) {
            return Err(bad("stored under another key"));
        }
        let starts: Vec<u64> = map[starts_at..text_at]
            .chunks_exact(8)
            .map(|c| {
                let mut b = [0; 8];
                b.copy_from_slice(c);
                u64::from_le_bytes(b)
            })
            .collect();
        let text = &map[text_at..text_at + text_len];
        if map.as_ptr().wrapping_add(sa_at).align_offset(4) != 0 {
            return Err(bad("misaligned suffix array"));
        }
        let sa_bytes = &map[sa_at..end];
        // SAFETY: the range lies in the map (checked above), starts 4-byte aligned (checked
        // above) and holds `text_len` whole u32 values; every bit pattern is a valid u32.
        let sa = unsafe { std::slice::from_raw_parts(sa_bytes.as_ptr().cast::<u32>(), text_len) };
        if checksum_of(&starts, text, sa) != checksum {
            return Err(bad("checksum mismatch (corrupted)"));
        }
        let starts_ok = starts.first().is_none_or(|&s| s == 0)
            && starts.windows(2).all(|w| w[0] < w[1])
            && starts.iter().all(|&s| (s as usize) < text_len)
            && (docs == 0) == (text_len == 0)
            && text.last().is_none_or(|&b| b == END);
        if !starts_ok || sa.iter().any(|&s| s as usize >= text_len) {
            return Err(bad("positions out of range"));
        }
        Ok(Self::mapped(
            map,
            text_at..text_at + text_len,
            sa_at..end,
            starts,
            checksum,
        ))
    }
}
