//! The stored-index file format: a header and named sections, written atomically and read back
//! memory-mapped, every checksum verified (docs/exposure.md, "Stored indexes").
//!
//! The file is a header followed by sections. Each section is one array of the in-memory index
//! as raw little-endian values, starting on a 64-byte boundary so that a loaded index reads the
//! map in place: loading costs one map and one checksum pass, no parsing and no rehashing.
//!
//! Header (integers little-endian):
//!
//! | offset | size | field |
//! | --- | --- | --- |
//! | 0 | 8 | magic `TAMEWHIX` |
//! | 8 | 4 | format version (`FORMAT_VERSION`) |
//! | 12 | 4 | byte-order mark `0x01020304` |
//! | 16 | 4 | pointer width in bytes (8) |
//! | 20 | 4 | number of sections |
//! | 24 | 8 | file length in bytes |
//! | 32 | 8 | hash probe: the gram hash of a fixed string (a stored table needs the same hash) |
//! | 40 | 4 | key length |
//! | 44 | 4 | header length (a multiple of 64) |
//! | 48 | key length, padded to 8 | the key: the caller's identity of what was indexed |
//! | … | 64 per section | name (32 bytes, zero-padded), element size (u32), element kind (u32), offset (u64), length in bytes (u64), xxh3-64 checksum (u64) |
//! | header length − 8 | 8 | xxh3-64 checksum of every header byte before it |
//!
//! Bytes between sections are zero (checked), so every byte of the file is covered. Writes go to
//! a temporary file in the same directory, past the page cache where the file system allows it
//! (`uncached.rs`), are flushed to disk, then renamed over the target.
//!
//! This module knows nothing of the index: each index struct has `to_sections` / `from_sections`
//! next to its definition, listing its arrays by name, and `persist.rs` saves and loads a whole
//! index. A change of any stored array's meaning or of the hash function must bump
//! `FORMAT_VERSION` (the test `section_layout_is_pinned` in `persist.rs` lists the current
//! layout).

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use memmap2::{Mmap, MmapOptions};
use rayon::prelude::*;
use xxhash_rust::xxh3::xxh3_64;

use super::buf::{as_bytes, Buf, Plain};
use super::grams::{hash_bytes, hash_pair};
use super::uncached::UncachedFile;

/// Version of the file layout; part of every stored index's key.
pub const FORMAT_VERSION: u32 = 4;

const MAGIC: [u8; 8] = *b"TAMEWHIX";
const BYTE_ORDER: u32 = 0x0102_0304;
const ALIGN: usize = 64;
/// Bytes of the fixed header fields before the key.
const FIXED: usize = 48;
/// Bytes of one section-table entry.
const ENTRY: usize = 64;
const NAME_BYTES: usize = 32;
const MAX_KEY: usize = 1 << 16;
const MAX_SECTIONS: usize = 1 << 12;
/// The section holding the caller's metadata.
const META: &str = "meta";
const PROBE: &[u8] = b"tame-wh stored index hash probe";

/// What is wrong with a stored index file (or with writing one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// The file cannot be opened, read or written.
    Io(String),
    /// Not an index this build can read: another format, version, platform or hash function.
    Foreign(String),
    /// An index of something else: its key differs from the one asked for.
    KeyMismatch,
    /// The file is shorter than its header says.
    Truncated { expected: u64, found: u64 },
    /// A checksum or a structural check failed.
    Corrupt(String),
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Io(msg) => write!(f, "{msg}"),
            Self::Foreign(msg) => write!(f, "not an index this tame-wh reads ({msg})"),
            Self::KeyMismatch => write!(
                f,
                "an index of other training data or settings (its key differs)"
            ),
            Self::Truncated { expected, found } => {
                write!(f, "truncated ({found} of {expected} bytes)")
            }
            Self::Corrupt(msg) => write!(f, "corrupted ({msg})"),
        }
    }
}

/// A stored-index failure: the file and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PersistError {
    pub path: PathBuf,
    pub problem: Problem,
}

impl fmt::Display for PersistError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "stored index {}: {}", self.path.display(), self.problem)
    }
}

impl std::error::Error for PersistError {}

/// A structural problem found while reading sections back.
pub fn bad(msg: impl Into<String>) -> Problem {
    Problem::Corrupt(msg.into())
}

fn io(what: &str, err: &std::io::Error) -> Problem {
    Problem::Io(format!("cannot {what} ({err})"))
}

/// The arrays of an index, by name, in the order they are written.
#[derive(Default)]
pub struct SectionsOut<'a> {
    list: Vec<(String, u32, Cow<'a, [u8]>)>,
}

impl<'a> SectionsOut<'a> {
    /// Adds the array `values` under `name`.
    pub fn put<T: Plain>(&mut self, name: impl Into<String>, values: &'a [T]) {
        let size = std::mem::size_of::<T>() as u32;
        self.list
            .push((name.into(), size, Cow::Borrowed(as_bytes(values))));
    }

    /// Adds a few numbers (shapes, counts) under `name`.
    pub fn put_u64s(&mut self, name: impl Into<String>, values: &[u64]) {
        self.list
            .push((name.into(), 8, Cow::Owned(as_bytes(values).to_vec())));
    }

    /// One checksum of the arrays' content: xxh3-64 over each section's name, element size and
    /// xxh3-64 checksum, in order. It names the index whatever its key, metadata or file (an
    /// index built in memory and the same index loaded from its file give the same value).
    pub fn content_checksum(&self) -> u64 {
        let checksums: Vec<u64> = self.list.par_iter().map(|(_, _, b)| xxh3_64(b)).collect();
        let mut summary = Vec::with_capacity(self.list.len() * (NAME_BYTES + 13));
        for ((name, elem, _), checksum) in self.list.iter().zip(checksums) {
            summary.extend_from_slice(name.as_bytes());
            summary.push(0);
            summary.extend_from_slice(&elem.to_le_bytes());
            summary.extend_from_slice(&checksum.to_le_bytes());
        }
        xxh3_64(&summary)
    }

    /// Each section's name and element size, in the order they are written (`name:size`).
    #[cfg(test)]
    pub fn layout(&self) -> Vec<String> {
        self.list
            .iter()
            .map(|(name, elem, _)| format!("{name}:{elem}"))
            .collect()
    }
}

/// One entry of the section table.
#[derive(Debug, Clone, Copy)]
struct Entry {
    elem: u32,
    offset: usize,
    len: usize,
    checksum: u64,
}

/// The sections of a mapped index file, checked, ready to be taken by name.
pub struct SectionsIn {
    map: Arc<Mmap>,
    entries: HashMap<String, Entry>,
}

impl SectionsIn {
    /// The array stored under `name` (a view into the map).
    pub fn take<T: Plain>(&self, name: &str) -> Result<Buf<T>, Problem> {
        let entry = self
            .entries
            .get(name)
            .ok_or_else(|| bad(format!("section {name} is missing")))?;
        let size = std::mem::size_of::<T>();
        if entry.elem as usize != size || entry.len % size != 0 {
            return Err(bad(format!(
                "section {name} holds {}-byte values",
                entry.elem
            )));
        }
        Buf::mapped(&self.map, entry.offset, entry.len / size)
            .ok_or_else(|| bad(format!("section {name} is misplaced")))
    }

    /// The `N` numbers stored under `name`.
    pub fn u64s<const N: usize>(&self, name: &str) -> Result<[u64; N], Problem> {
        let values: Buf<u64> = self.take(name)?;
        <[u64; N]>::try_from(&*values).map_err(|_| {
            bad(format!(
                "section {name} has {} values, not {N}",
                values.len()
            ))
        })
    }
}

/// The probe value of the gram and pair hashes.
fn hash_probe() -> u64 {
    hash_bytes(PROBE) ^ hash_pair(PROBE, PROBE).rotate_left(17)
}

fn align(n: usize) -> usize {
    n.div_ceil(ALIGN) * ALIGN
}

fn put_u32(buf: &mut [u8], at: usize, v: u32) {
    if let Some(b) = buf.get_mut(at..at + 4) {
        b.copy_from_slice(&v.to_le_bytes());
    }
}

fn put_u64(buf: &mut [u8], at: usize, v: u64) {
    if let Some(b) = buf.get_mut(at..at + 8) {
        b.copy_from_slice(&v.to_le_bytes());
    }
}

fn get_u32(buf: &[u8], at: usize) -> u32 {
    buf.get(at..at + 4)
        .and_then(|b| b.try_into().ok())
        .map_or(0, u32::from_le_bytes)
}

fn get_u64(buf: &[u8], at: usize) -> u64 {
    buf.get(at..at + 8)
        .and_then(|b| b.try_into().ok())
        .map_or(0, u64::from_le_bytes)
}

/// Length of the header of `sections` sections and a key of `key_len` bytes.
fn header_len(key_len: usize, sections: usize) -> usize {
    align(FIXED + key_len.div_ceil(8) * 8 + sections * ENTRY + 8)
}

/// Writes `sections` (plus `meta`) under `key` to `path`, atomically; returns the file length.
pub fn write_file<'a>(
    path: &Path,
    key: &[u8],
    meta: &'a [u8],
    mut sections: SectionsOut<'a>,
) -> Result<u64, PersistError> {
    let fail = |problem| PersistError {
        path: path.to_path_buf(),
        problem,
    };
    if cfg!(target_endian = "big") || std::mem::size_of::<usize>() != 8 {
        return Err(fail(Problem::Foreign(
            "stored indexes need a 64-bit little-endian machine".into(),
        )));
    }
    if key.len() > MAX_KEY || sections.list.len() >= MAX_SECTIONS {
        return Err(fail(bad("key or section table too large")));
    }
    sections.put(META, meta);
    let list = &sections.list;
    if let Some((name, ..)) = list.iter().find(|(n, ..)| n.len() > NAME_BYTES) {
        return Err(fail(bad(format!("section name {name} is too long"))));
    }
    let head = header_len(key.len(), list.len());
    let mut offsets = Vec::with_capacity(list.len());
    let mut end = head;
    for (_, _, bytes) in list {
        let at = align(end);
        offsets.push(at);
        end = at + bytes.len();
    }
    let checksums: Vec<u64> = list.par_iter().map(|(_, _, b)| xxh3_64(b)).collect();

    let mut header = vec![0u8; head];
    if let Some(m) = header.get_mut(..8) {
        m.copy_from_slice(&MAGIC);
    }
    put_u32(&mut header, 8, FORMAT_VERSION);
    put_u32(&mut header, 12, BYTE_ORDER);
    put_u32(&mut header, 16, std::mem::size_of::<usize>() as u32);
    put_u32(&mut header, 20, list.len() as u32);
    put_u64(&mut header, 24, end as u64);
    put_u64(&mut header, 32, hash_probe());
    put_u32(&mut header, 40, key.len() as u32);
    put_u32(&mut header, 44, head as u32);
    if let Some(k) = header.get_mut(FIXED..FIXED + key.len()) {
        k.copy_from_slice(key);
    }
    let table = FIXED + key.len().div_ceil(8) * 8;
    for (i, ((name, elem, bytes), (&offset, &checksum))) in
        list.iter().zip(offsets.iter().zip(&checksums)).enumerate()
    {
        let at = table + i * ENTRY;
        if let Some(n) = header.get_mut(at..at + name.len()) {
            n.copy_from_slice(name.as_bytes());
        }
        put_u32(&mut header, at + NAME_BYTES, *elem);
        put_u64(&mut header, at + NAME_BYTES + 8, offset as u64);
        put_u64(&mut header, at + NAME_BYTES + 16, bytes.len() as u64);
        put_u64(&mut header, at + NAME_BYTES + 24, checksum);
    }
    let sum = xxh3_64(header.get(..head - 8).unwrap_or(&[]));
    put_u64(&mut header, head - 8, sum);

    let parts = std::iter::once((0usize, &header[..])).chain(
        offsets
            .iter()
            .copied()
            .zip(list.iter().map(|(_, _, b)| &b[..])),
    );
    write_atomically(path, parts).map_err(fail)?;
    Ok(end as u64)
}

/// Writes the byte ranges `parts` (at ascending offsets, zeros between them) to a temporary file
/// beside `path`, syncs it, renames it to `path` and syncs the directory.
fn write_atomically<'a>(
    path: &Path,
    parts: impl Iterator<Item = (usize, &'a [u8])>,
) -> Result<(), Problem> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| Problem::Io("no file name".into()))?
        .to_string_lossy();
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let tmp = dir.join(format!(".{name}.{}.{nanos}.tmp", std::process::id()));
    let written = (|| -> Result<(), Problem> {
        let mut out = UncachedFile::create(&tmp).map_err(|e| io("create a temporary file", &e))?;
        for (offset, bytes) in parts {
            out.write_zeros(offset.saturating_sub(out.written() as usize))
                .map_err(|e| io("write", &e))?;
            out.write_all(bytes).map_err(|e| io("write", &e))?;
        }
        let file = out.finish().map_err(|e| io("write", &e))?;
        file.sync_all().map_err(|e| io("flush to disk", &e))?;
        Ok(())
    })();
    if let Err(e) = written {
        let _ = fs::remove_file(&tmp);
        return Err(e);
    }
    if let Err(e) = fs::rename(&tmp, path) {
        let _ = fs::remove_file(&tmp);
        return Err(io("rename the temporary file", &e));
    }
    if let Ok(d) = File::open(&dir) {
        // Makes the rename durable; some file systems cannot sync a directory, which is harmless.
        let _ = d.sync_all();
    }
    Ok(())
}

/// What the header of a stored index says.
pub struct Header {
    /// The key it was stored under.
    pub key: Vec<u8>,
    /// Its format version.
    pub version: u32,
    /// Its length in bytes.
    pub bytes: u64,
    entries: HashMap<String, Entry>,
    head: usize,
}

/// Maps `path` and checks its header (and, with `key`, that it was stored under `key`);
/// `populate` reads the whole file into the map at once.
fn open_header(
    path: &Path,
    key: Option<&[u8]>,
    populate: bool,
) -> Result<(Arc<Mmap>, Header), Problem> {
    let file = File::open(path).map_err(|e| io("open", &e))?;
    let found = file.metadata().map_err(|e| io("read", &e))?.len();
    if found == 0 {
        return Err(Problem::Truncated {
            expected: FIXED as u64,
            found,
        });
    }
    let mut options = MmapOptions::new();
    if populate {
        options.populate();
    }
    // SAFETY: the map is read-only; tame-wh never writes an index file in place (writes replace
    // it by rename), so its bytes stay as checked while mapped.
    let map = unsafe { options.map(&file) }.map_err(|e| io("map", &e))?;
    let bytes: &[u8] = &map;
    let prefix = bytes.len().min(MAGIC.len());
    if bytes.get(..prefix) != MAGIC.get(..prefix) {
        return Err(Problem::Foreign("not a tame-wh index file".into()));
    }
    if found < FIXED as u64 {
        return Err(Problem::Truncated {
            expected: FIXED as u64,
            found,
        });
    }
    let version = get_u32(bytes, 8);
    if version != FORMAT_VERSION {
        return Err(Problem::Foreign(format!(
            "format version {version}; this tame-wh reads version {FORMAT_VERSION}"
        )));
    }
    if get_u32(bytes, 12) != BYTE_ORDER || get_u32(bytes, 16) != 8 {
        return Err(Problem::Foreign(
            "written on another kind of machine".into(),
        ));
    }
    let expected = get_u64(bytes, 24);
    let head = get_u32(bytes, 44) as usize;
    if head < FIXED + 8 || !head.is_multiple_of(ALIGN) || head as u64 > expected.max(found) {
        return Err(bad("header length"));
    }
    if found < expected || (head as u64) > found {
        return Err(Problem::Truncated { expected, found });
    }
    let header = bytes.get(..head).ok_or_else(|| bad("header length"))?;
    if xxh3_64(header.get(..head - 8).unwrap_or(&[])) != get_u64(header, head - 8) {
        return Err(bad("header checksum"));
    }
    if found > expected {
        return Err(bad(format!("{} bytes after the end", found - expected)));
    }
    if get_u64(header, 32) != hash_probe() {
        return Err(Problem::Foreign(
            "written with another hash function".into(),
        ));
    }
    let key_len = get_u32(header, 40) as usize;
    let count = get_u32(header, 20) as usize;
    if key_len > MAX_KEY || count > MAX_SECTIONS || header_len(key_len, count) != head {
        return Err(bad("header layout"));
    }
    let stored_key = header
        .get(FIXED..FIXED + key_len)
        .ok_or_else(|| bad("header layout"))?;
    if key.is_some_and(|k| k != stored_key) {
        return Err(Problem::KeyMismatch);
    }
    let entries = section_table(header, FIXED + key_len.div_ceil(8) * 8, count, expected)?;
    let header = Header {
        key: stored_key.to_vec(),
        version,
        bytes: expected,
        entries,
        head,
    };
    Ok((Arc::new(map), header))
}

/// The section table at `table` (`count` entries), checked against a file of `len` bytes:
/// every section aligned, inside the file, after the header and after the previous one.
fn section_table(
    header: &[u8],
    table: usize,
    count: usize,
    len: u64,
) -> Result<HashMap<String, Entry>, Problem> {
    let mut entries = HashMap::with_capacity(count);
    let mut end = header.len();
    for i in 0..count {
        let at = table + i * ENTRY;
        let raw = header
            .get(at..at + NAME_BYTES)
            .ok_or_else(|| bad("section table"))?;
        let name = std::str::from_utf8(raw)
            .map_err(|_| bad("section name"))?
            .trim_end_matches('\0')
            .to_owned();
        let elem = get_u32(header, at + NAME_BYTES);
        let offset = get_u64(header, at + NAME_BYTES + 8);
        let size = get_u64(header, at + NAME_BYTES + 16);
        let checksum = get_u64(header, at + NAME_BYTES + 24);
        let fits = offset
            .checked_add(size)
            .is_some_and(|stop| stop <= len && offset >= end as u64);
        if !fits
            || !(offset as usize).is_multiple_of(ALIGN)
            || ![1, 2, 4, 8, 16, 64].contains(&elem)
        {
            return Err(bad(format!("section {name} is misplaced")));
        }
        let entry = Entry {
            elem,
            offset: offset as usize,
            len: size as usize,
            checksum,
        };
        end = entry.offset + entry.len;
        if entries.insert(name.clone(), entry).is_some() {
            return Err(bad(format!("section {name} appears twice")));
        }
    }
    Ok(entries)
}

/// Checks every section's checksum (in parallel) and that the bytes between sections are zero.
fn check_sections(map: &Mmap, header: &Header) -> Result<(), Problem> {
    let mut spans: Vec<(&String, &Entry)> = header.entries.iter().collect();
    spans.sort_unstable_by_key(|(_, e)| (e.offset, e.len));
    let mut at = header.head;
    for (name, e) in &spans {
        let gap = map.get(at..e.offset).ok_or_else(|| bad("section table"))?;
        if gap.iter().any(|&b| b != 0) {
            return Err(bad(format!("bytes before section {name}")));
        }
        at = e.offset + e.len;
    }
    if let Some((name, _)) = spans.par_iter().find_any(|(_, e)| {
        map.get(e.offset..e.offset + e.len)
            .is_none_or(|bytes| xxh3_64(bytes) != e.checksum)
    }) {
        return Err(bad(format!("checksum of section {name}")));
    }
    Ok(())
}

/// Maps the index at `path`, checks header, key and every checksum; returns its sections and
/// the caller's metadata.
pub fn read_file(path: &Path, key: &[u8]) -> Result<(SectionsIn, Vec<u8>), PersistError> {
    let fail = |problem| PersistError {
        path: path.to_path_buf(),
        problem,
    };
    let (map, header) = open_header(path, Some(key), true).map_err(fail)?;
    check_sections(&map, &header).map_err(fail)?;
    let sections = SectionsIn {
        map,
        entries: header.entries,
    };
    let meta: Buf<u8> = sections.take(META).map_err(fail)?;
    let meta = meta.to_vec();
    Ok((sections, meta))
}

/// The header of the index at `path` and its metadata (checked by their checksums), without
/// reading the other sections.
pub fn read_info(path: &Path) -> Result<(Header, Vec<u8>), PersistError> {
    let fail = |problem| PersistError {
        path: path.to_path_buf(),
        problem,
    };
    let (map, header) = open_header(path, None, false).map_err(fail)?;
    let entry = *header
        .entries
        .get(META)
        .ok_or_else(|| fail(bad("section meta is missing")))?;
    let meta = map
        .get(entry.offset..entry.offset + entry.len)
        .filter(|m| xxh3_64(m) == entry.checksum)
        .ok_or_else(|| fail(bad("checksum of section meta")))?
        .to_vec();
    Ok((header, meta))
}
