//! Compact string storage: a byte arena with end offsets and a hash table of ids.
//!
//! `Vocab` interns distinct grams (id = insertion order); `TextStore` keeps every training text in
//! row order and maps each distinct text to the lowest row holding it. Their arrays and hash
//! tables are flat, so a stored index maps them as they are (see `persist.rs`).

use super::buf::Buf;
use super::grams::{hash_bytes, hash_pair};
use super::persist::{bad, Problem, SectionsIn, SectionsOut};

/// Strings in one byte arena, addressed by a dense `u32` id.
#[derive(Debug, Default)]
struct Arena {
    bytes: Buf<u8>,
    /// End offset of each string in `bytes`.
    ends: Buf<u64>,
}

impl Arena {
    fn new(bytes: Vec<u8>, ends: Vec<u64>) -> Self {
        Self {
            bytes: bytes.into(),
            ends: ends.into(),
        }
    }

    #[inline]
    fn get(&self, id: u32) -> &[u8] {
        arena_get(&self.bytes, &self.ends, id)
    }

    fn len(&self) -> usize {
        self.ends.len()
    }

    fn heap_bytes(&self) -> usize {
        self.bytes.heap_bytes() + self.ends.heap_bytes()
    }

    fn to_sections<'a>(&'a self, out: &mut SectionsOut<'a>, prefix: &str) {
        out.put(format!("{prefix}.bytes"), &self.bytes);
        out.put(format!("{prefix}.ends"), &self.ends);
    }

    fn from_sections(sections: &SectionsIn, prefix: &str) -> Result<Self, Problem> {
        let bytes: Buf<u8> = sections.take(&format!("{prefix}.bytes"))?;
        let ends: Buf<u64> = sections.take(&format!("{prefix}.ends"))?;
        let sorted = ends.windows(2).all(|w| w[0] <= w[1]);
        if !sorted || ends.last().is_some_and(|&e| e != bytes.len() as u64) {
            return Err(bad(format!(
                "{prefix}: string offsets do not fit the bytes"
            )));
        }
        Ok(Self { bytes, ends })
    }
}

/// String `id` of an arena given as its bytes and end offsets.
#[inline]
fn arena_get<'a>(bytes: &'a [u8], ends: &[u64], id: u32) -> &'a [u8] {
    let id = id as usize;
    let end = ends.get(id).copied().unwrap_or(0) as usize;
    let start = match id.checked_sub(1) {
        Some(prev) => ends.get(prev).copied().unwrap_or(0) as usize,
        None => 0,
    };
    bytes.get(start..end).unwrap_or(&[])
}

/// An open-addressing hash table of `u32` ids (linear probing, at most 2/3 full). A slot holds
/// the high 32 bits of the id's hash above `id + 1`; 0 is an empty slot. The hash of an id is
/// given by the caller (the table stores no keys), so the table is one flat array.
#[derive(Debug, Default)]
struct IdTable {
    slots: Buf<u64>,
}

/// Slots of a table holding `n` ids: a power of two, at least 3n/2 (and at least 8).
fn table_slots(n: usize) -> usize {
    (n + n / 2 + 1).next_power_of_two().max(8)
}

#[inline]
fn slot_tag(h: u64) -> u64 {
    h >> 32
}

/// A table under construction.
struct IdTableBuilder {
    slots: Vec<u64>,
}

impl IdTableBuilder {
    fn with_capacity(n: usize) -> Self {
        Self {
            slots: vec![0; table_slots(n)],
        }
    }

    /// Inserts `id` with hash `h` (the caller knows it is not present).
    fn insert_unique(&mut self, h: u64, id: u32) {
        let mask = self.slots.len() - 1;
        let mut at = h as usize & mask;
        for _ in 0..self.slots.len() {
            match self.slots.get_mut(at) {
                Some(slot) if *slot == 0 => {
                    *slot = (slot_tag(h) << 32) | (u64::from(id) + 1);
                    return;
                }
                _ => at = (at + 1) & mask,
            }
        }
    }

    /// The id with hash `h` whose key `matches`.
    fn find(&self, h: u64, matches: impl FnMut(u32) -> bool) -> Option<u32> {
        probe(&self.slots, h, matches)
    }

    fn finish(self) -> IdTable {
        IdTable {
            slots: self.slots.into(),
        }
    }
}

/// Linear probing for the id with hash `h` whose key `matches`; stops at an empty slot.
#[inline]
fn probe(slots: &[u64], h: u64, mut matches: impl FnMut(u32) -> bool) -> Option<u32> {
    let mask = slots.len().checked_sub(1)?;
    let (mut at, tag) = (h as usize & mask, slot_tag(h));
    for _ in 0..slots.len() {
        let slot = *slots.get(at)?;
        if slot == 0 {
            return None;
        }
        if slot >> 32 == tag {
            let id = (slot as u32).wrapping_sub(1);
            if matches(id) {
                return Some(id);
            }
        }
        at = (at + 1) & mask;
    }
    None
}

impl IdTable {
    #[inline]
    fn find(&self, h: u64, matches: impl FnMut(u32) -> bool) -> Option<u32> {
        probe(&self.slots, h, matches)
    }

    fn heap_bytes(&self) -> usize {
        self.slots.heap_bytes()
    }

    fn from_sections(sections: &SectionsIn, name: &str, ids: usize) -> Result<Self, Problem> {
        let slots: Buf<u64> = sections.take(name)?;
        if slots.len() != table_slots(ids) {
            return Err(bad(format!("{name}: hash table of the wrong size")));
        }
        Ok(Self { slots })
    }
}

/// The gram vocabulary: distinct grams with dense ids in insertion order.
#[derive(Debug, Default)]
pub struct Vocab {
    arena: Arena,
    table: IdTable,
}

/// A vocabulary under construction (`Vocab::builder`).
pub struct VocabBuilder {
    bytes: Vec<u8>,
    ends: Vec<u64>,
    table: IdTableBuilder,
}

impl VocabBuilder {
    /// Appends a gram that is not yet present; its id is the number of grams before it.
    pub fn push_new(&mut self, gram: &str) {
        let id = self.ends.len() as u32;
        self.bytes.extend_from_slice(gram.as_bytes());
        self.ends.push(self.bytes.len() as u64);
        self.table.insert_unique(hash_bytes(gram.as_bytes()), id);
    }

    /// The finished vocabulary.
    pub fn finish(self) -> Vocab {
        Vocab {
            arena: Arena::new(self.bytes, self.ends),
            table: self.table.finish(),
        }
    }
}

impl Vocab {
    /// An empty vocabulary to fill, with room for `grams` grams of `bytes` bytes in total.
    pub fn builder(grams: usize, bytes: usize) -> VocabBuilder {
        VocabBuilder {
            bytes: Vec::with_capacity(bytes),
            ends: Vec::with_capacity(grams),
            table: IdTableBuilder::with_capacity(grams),
        }
    }

    /// The id of `gram`, if it is in the vocabulary.
    #[inline]
    pub fn get(&self, gram: &str) -> Option<u32> {
        let bytes = gram.as_bytes();
        self.table
            .find(hash_bytes(bytes), |i| self.arena.get(i) == bytes)
    }

    /// Number of grams.
    pub fn len(&self) -> usize {
        self.arena.len()
    }

    /// Approximate heap size in bytes.
    pub fn heap_bytes(&self) -> usize {
        self.arena.heap_bytes() + self.table.heap_bytes()
    }

    /// The arrays to store (see `persist.rs`).
    pub fn to_sections<'a>(&'a self, out: &mut SectionsOut<'a>, prefix: &str) {
        self.arena.to_sections(out, prefix);
        out.put(format!("{prefix}.table"), &self.table.slots);
    }

    /// The vocabulary from stored arrays.
    pub fn from_sections(sections: &SectionsIn, prefix: &str) -> Result<Self, Problem> {
        let arena = Arena::from_sections(sections, prefix)?;
        let table = IdTable::from_sections(sections, &format!("{prefix}.table"), arena.len())?;
        Ok(Self { arena, table })
    }
}

/// Every text of one training side in row order, with exact-match lookup.
#[derive(Debug, Default)]
pub struct TextStore {
    arena: Arena,
    first: IdTable,
}

impl TextStore {
    /// Stores `texts` (row order) and indexes the lowest row of each distinct text.
    pub fn build<S: AsRef<str>>(texts: &[S]) -> Self {
        let total = texts.iter().map(|t| t.as_ref().len()).sum();
        let mut bytes: Vec<u8> = Vec::with_capacity(total);
        let mut ends: Vec<u64> = Vec::with_capacity(texts.len());
        let mut first = IdTableBuilder::with_capacity(texts.len());
        for (row, text) in texts.iter().enumerate() {
            let text = text.as_ref().as_bytes();
            bytes.extend_from_slice(text);
            ends.push(bytes.len() as u64);
            let h = hash_bytes(text);
            if first
                .find(h, |i| arena_get(&bytes, &ends, i) == text)
                .is_none()
            {
                first.insert_unique(h, row as u32);
            }
        }
        Self {
            arena: Arena::new(bytes, ends),
            first: first.finish(),
        }
    }

    /// The text of `row`.
    #[inline]
    pub fn text(&self, row: u32) -> &[u8] {
        self.arena.get(row)
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.arena.len()
    }

    /// The lowest row whose text equals `text`.
    #[inline]
    pub fn lowest_equal(&self, text: &str) -> Option<u32> {
        let bytes = text.as_bytes();
        self.first
            .find(hash_bytes(bytes), |i| self.arena.get(i) == bytes)
    }

    /// Approximate heap size in bytes.
    pub fn heap_bytes(&self) -> usize {
        self.arena.heap_bytes() + self.first.heap_bytes()
    }

    /// The arrays to store (see `persist.rs`).
    pub fn to_sections<'a>(&'a self, out: &mut SectionsOut<'a>, prefix: &str) {
        self.arena.to_sections(out, prefix);
        out.put(format!("{prefix}.first"), &self.first.slots);
    }

    /// The store from stored arrays.
    pub fn from_sections(sections: &SectionsIn, prefix: &str) -> Result<Self, Problem> {
        let arena = Arena::from_sections(sections, prefix)?;
        let first = IdTable::from_sections(sections, &format!("{prefix}.first"), arena.len())?;
        Ok(Self { arena, first })
    }
}

/// Exact lookup of aligned (source, target) rows: the lowest row holding each distinct pair.
#[derive(Debug, Default)]
pub struct PairTable {
    first: IdTable,
}

impl PairTable {
    /// Indexes the rows of two aligned stores of `rows` rows.
    pub fn build(src: &TextStore, tgt: &TextStore, rows: usize) -> Self {
        let mut first = IdTableBuilder::with_capacity(rows);
        for row in 0..rows as u32 {
            let (s, t) = (src.text(row), tgt.text(row));
            let h = hash_pair(s, t);
            if first
                .find(h, |i| src.text(i) == s && tgt.text(i) == t)
                .is_none()
            {
                first.insert_unique(h, row);
            }
        }
        Self {
            first: first.finish(),
        }
    }

    /// The lowest row whose source equals `s` and whose target equals `t`.
    #[inline]
    pub fn lowest_equal(&self, src: &TextStore, tgt: &TextStore, s: &str, t: &str) -> Option<u32> {
        let (s, t) = (s.as_bytes(), t.as_bytes());
        self.first
            .find(hash_pair(s, t), |i| src.text(i) == s && tgt.text(i) == t)
    }

    /// Approximate heap size in bytes.
    pub fn heap_bytes(&self) -> usize {
        self.first.heap_bytes()
    }

    /// The arrays to store (see `persist.rs`).
    pub fn to_sections<'a>(&'a self, out: &mut SectionsOut<'a>, prefix: &str) {
        out.put(format!("{prefix}.first"), &self.first.slots);
    }

    /// The table of `rows` rows from stored arrays.
    pub fn from_sections(
        sections: &SectionsIn,
        prefix: &str,
        rows: usize,
    ) -> Result<Self, Problem> {
        let first = IdTable::from_sections(sections, &format!("{prefix}.first"), rows)?;
        Ok(Self { first })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vocab_interns_in_order() {
        let mut b = Vocab::builder(0, 0);
        for g in ["abc", "", "ñañ", "x"] {
            b.push_new(g);
        }
        let v = b.finish();
        assert_eq!(v.len(), 4);
        assert_eq!(v.get("abc"), Some(0));
        assert_eq!(v.get(""), Some(1));
        assert_eq!(v.get("ñañ"), Some(2));
        assert_eq!(v.get("x"), Some(3));
        assert_eq!(v.get("ab"), None);
    }

    #[test]
    fn text_store_keeps_lowest_row() {
        let texts = ["a", "b", "a", "", ""];
        let s = TextStore::build(&texts);
        assert_eq!(s.lowest_equal("a"), Some(0));
        assert_eq!(s.lowest_equal(""), Some(3));
        assert_eq!(s.lowest_equal("c"), None);
        assert_eq!(s.text(2), b"a");
        let t = TextStore::build(&["x", "y", "y", "z", ""]);
        let p = PairTable::build(&s, &t, 5);
        assert_eq!(p.lowest_equal(&s, &t, "a", "y"), Some(2));
        assert_eq!(p.lowest_equal(&s, &t, "a", "x"), Some(0));
        assert_eq!(p.lowest_equal(&s, &t, "", ""), Some(4));
        assert_eq!(p.lowest_equal(&s, &t, "b", "x"), None);
        // the length prefix keeps ("ab", "c") apart from ("a", "bc")
        let s2 = TextStore::build(&["ab"]);
        let t2 = TextStore::build(&["c"]);
        let p2 = PairTable::build(&s2, &t2, 1);
        assert_eq!(p2.lowest_equal(&s2, &t2, "a", "bc"), None);
    }
}
