//! Compact string storage: a byte arena with end offsets and a hash table of ids.
//!
//! `Vocab` interns distinct grams (id = insertion order); `TextStore` keeps every training text in
//! row order and maps each distinct text to the lowest row holding it. Their arrays and hash
//! tables are flat, so a stored index maps them as they are (see `sections.rs`).

use super::buf::Buf;
use super::cache::prefetch;
use super::grams::{hash_bytes, hash_pair, short_key};
use super::memory::written_zeros;
use super::sections::{bad, Problem, SectionsIn, SectionsOut};

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
            slots: written_zeros(table_slots(n)),
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

/// One slot of the short-gram table while building: key (0 = empty), id, and the last row that
/// met the gram.
#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    key: u64,
    id: u32,
    tag: u32,
}

/// The home slot of `key` in a table of `slots` slots (a power of two).
#[inline(always)]
fn home(key: u64, slots: usize) -> usize {
    let bits = slots.trailing_zeros();
    if bits == 0 {
        return 0;
    }
    (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - bits)) as usize
}

/// The slot holding `key`, or the empty slot where it belongs (linear probing; `usize::MAX`
/// when the table is full, which a table at most 7/10 full never is).
#[inline(always)]
fn find_slot(slots: &[Slot], key: u64) -> usize {
    let mask = slots.len().wrapping_sub(1);
    let mut i = home(key, slots.len());
    for _ in 0..slots.len() {
        match slots.get(i) {
            Some(s) if s.key != key && s.key != 0 => i = (i + 1) & mask,
            _ => return i,
        }
    }
    usize::MAX
}

/// `slots` rebuilt as a table of at most `num/den` load (below 1).
fn rehash(slots: &[Slot], len: usize, num: usize, den: usize) -> Vec<Slot> {
    let mut size = 16usize;
    while size * num < len.max(1) * den {
        size *= 2;
    }
    let mut out = vec![Slot::default(); size];
    for s in slots.iter().filter(|s| s.key != 0) {
        let i = find_slot(&out, s.key);
        if let Some(slot) = out.get_mut(i) {
            *slot = *s;
        }
    }
    out
}

/// The gram vocabulary: distinct grams with dense ids. Grams of up to 7 bytes are found through
/// an open-addressing table of ids (4 bytes a slot, at most half full) keyed by their bytes, each
/// id's key kept once beside it; longer ones (rare: five code points of which several take two
/// bytes or more) in a byte arena with a hash table. Every array is flat, so a stored index maps
/// them as they are.
#[derive(Debug, Default)]
pub struct Vocab {
    /// Id + 1 of the short gram whose probe passes here (0: empty).
    slots: Buf<u32>,
    /// Each id's short key (0 for a long gram).
    keys: Buf<u64>,
    long: Arena,
    long_ids: Buf<u32>,
    long_table: IdTable,
    len: usize,
}

/// A vocabulary under construction: ids in order of first appearance (`Vocab::builder`).
pub struct VocabBuilder {
    short: Vec<Slot>,
    short_len: usize,
    long_bytes: Vec<u8>,
    long_ends: Vec<u64>,
    long_ids: Vec<u32>,
    long_tags: Vec<u32>,
    long_table: hashbrown::HashTable<u32>,
    len: u32,
}

impl VocabBuilder {
    /// Number of grams so far.
    #[inline]
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// Prefetches the table slot of a short gram's `key` (0: nothing to do).
    #[inline(always)]
    pub fn prefetch(&self, key: u64) {
        if key != 0 {
            if let Some(s) = self.short.get(home(key, self.short.len())) {
                prefetch(s);
            }
        }
    }

    /// The id of `gram` (its short `key`, or 0 for a long gram), added when new, and whether
    /// row tag `tag` had met it already. None when ids run out.
    #[inline(always)]
    pub fn intern(&mut self, key: u64, gram: &str, tag: u32) -> Option<(u32, bool)> {
        let next = self.len;
        if key != 0 {
            // Grown to twice the size past 7/10 full (linear probing stays short).
            if 10 * (self.short_len + 1) > 7 * self.short.len() {
                self.short = rehash(&self.short, self.short_len, 7, 20);
            }
            let i = find_slot(&self.short, key);
            let slot = self.short.get_mut(i)?;
            if slot.key == 0 {
                *slot = Slot { key, id: next, tag };
                self.short_len += 1;
                self.len = next.checked_add(1)?;
                return Some((next, false));
            }
            let seen = slot.tag == tag;
            slot.tag = tag;
            return Some((slot.id, seen));
        }
        let bytes = gram.as_bytes();
        let h = hash_bytes(bytes);
        let (arena, ends) = (&self.long_bytes, &self.long_ends);
        if let Some(&k) = self
            .long_table
            .find(h, |&k| arena_get(arena, ends, k) == bytes)
        {
            let id = self.long_ids.get(k as usize).copied()?;
            let t = self.long_tags.get_mut(k as usize)?;
            let seen = *t == tag;
            *t = tag;
            return Some((id, seen));
        }
        let k = self.long_ids.len() as u32;
        self.long_bytes.extend_from_slice(bytes);
        self.long_ends.push(self.long_bytes.len() as u64);
        self.long_ids.push(next);
        self.long_tags.push(tag);
        let (arena, ends) = (&self.long_bytes, &self.long_ends);
        self.long_table
            .insert_unique(h, k, |&i| hash_bytes(arena_get(arena, ends, i)));
        self.len = next.checked_add(1)?;
        Some((next, false))
    }

    /// Gives every gram the id `new_of[old id]`.
    pub fn renumber(&mut self, new_of: &[u32]) {
        let map = |id: &mut u32| *id = new_of.get(*id as usize).copied().unwrap_or(u32::MAX);
        self.short
            .iter_mut()
            .filter(|s| s.key != 0)
            .for_each(|s| map(&mut s.id));
        self.long_ids.iter_mut().for_each(map);
    }

    /// The finished vocabulary: the short table at most half full (a query gram missing from
    /// the training side then ends its probe within a few slots), holding ids only.
    pub fn finish(self) -> Vocab {
        let mut size = 16usize;
        while size < 2 * self.short_len {
            size *= 2;
        }
        let mask = size - 1;
        let mut slots: Vec<u32> = written_zeros(size);
        let mut keys = vec![0u64; self.len as usize];
        for s in self.short.iter().filter(|s| s.key != 0) {
            // Keys are distinct: a gram goes to the first empty slot of its probe.
            let mut i = home(s.key, size);
            while slots.get(i).is_some_and(|&v| v != 0) {
                i = (i + 1) & mask;
            }
            if let (Some(slot), Some(key)) = (slots.get_mut(i), keys.get_mut(s.id as usize)) {
                *slot = s.id.wrapping_add(1);
                *key = s.key;
            }
        }
        drop(self.short);
        let mut table = IdTableBuilder::with_capacity(self.long_ids.len());
        for k in 0..self.long_ids.len() as u32 {
            table.insert_unique(
                hash_bytes(arena_get(&self.long_bytes, &self.long_ends, k)),
                k,
            );
        }
        Vocab {
            slots: slots.into(),
            keys: keys.into(),
            long: Arena::new(self.long_bytes, self.long_ends),
            long_ids: self.long_ids.into(),
            long_table: table.finish(),
            len: self.len as usize,
        }
    }
}

impl Vocab {
    /// An empty vocabulary to fill.
    pub fn builder() -> VocabBuilder {
        VocabBuilder {
            short: vec![Slot::default(); 1 << 14],
            short_len: 0,
            long_bytes: Vec::new(),
            long_ends: Vec::new(),
            long_ids: Vec::new(),
            long_tags: Vec::new(),
            long_table: hashbrown::HashTable::new(),
            len: 0,
        }
    }

    /// The id of `gram`, if it is in the vocabulary.
    #[inline]
    pub fn get(&self, gram: &str) -> Option<u32> {
        let bytes = gram.as_bytes();
        if let Some(key) = short_key(bytes) {
            return self.find_short(key);
        }
        let k = self
            .long_table
            .find(hash_bytes(bytes), |k| self.long.get(k) == bytes)?;
        self.long_ids.get(k as usize).copied()
    }

    /// The id of the short gram with key `key` (linear probing; the table always has an empty
    /// slot, so a probe ends).
    #[inline(always)]
    fn find_short(&self, key: u64) -> Option<u32> {
        let mask = self.slots.len().checked_sub(1)?;
        let mut i = home(key, self.slots.len());
        for _ in 0..self.slots.len() {
            let id = self.slots.get(i)?.checked_sub(1)?;
            if self.keys.get(id as usize) == Some(&key) {
                return Some(id);
            }
            i = (i + 1) & mask;
        }
        None
    }

    /// The id of each of `grams` (None when absent) into `ids`. A query's lookups are scattered
    /// over large tables, so each is asked for ahead: the slot 16 grams ahead, the key of the id
    /// found there 8 grams ahead.
    pub fn get_each(&self, grams: &[&str], ids: &mut Vec<Option<u32>>) {
        const AHEAD: usize = 16;
        let keyed: Vec<Option<(u64, usize)>> = grams
            .iter()
            .map(|g| short_key(g.as_bytes()).map(|key| (key, home(key, self.slots.len()))))
            .collect();
        let slot_at = |i: usize| {
            keyed
                .get(i)
                .copied()
                .flatten()
                .and_then(|(_, h)| self.slots.get(h))
        };
        ids.clear();
        for (i, &gram) in grams.iter().enumerate() {
            if let Some(slot) = slot_at(i + AHEAD) {
                prefetch(slot);
            }
            if let Some(key) = slot_at(i + AHEAD / 2)
                .and_then(|&s| s.checked_sub(1))
                .and_then(|id| self.keys.get(id as usize))
            {
                prefetch(key);
            }
            ids.push(match keyed.get(i).copied().flatten() {
                Some((key, _)) => self.find_short(key),
                None => self.get(gram),
            });
        }
    }

    /// Number of grams.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Approximate heap size in bytes.
    pub fn heap_bytes(&self) -> usize {
        self.slots.heap_bytes()
            + self.keys.heap_bytes()
            + self.long.heap_bytes()
            + self.long_ids.heap_bytes()
            + self.long_table.heap_bytes()
    }

    /// The arrays to store (see `sections.rs`).
    pub fn to_sections<'a>(&'a self, out: &mut SectionsOut<'a>, prefix: &str) {
        out.put_u64s(format!("{prefix}.len"), &[self.len as u64]);
        out.put(format!("{prefix}.slots"), &self.slots);
        out.put(format!("{prefix}.keys"), &self.keys);
        self.long.to_sections(out, &format!("{prefix}.long"));
        out.put(format!("{prefix}.long_ids"), &self.long_ids);
        out.put(format!("{prefix}.long_table"), &self.long_table.slots);
    }

    /// The vocabulary from stored arrays, with the checks that keep every lookup in range.
    pub fn from_sections(sections: &SectionsIn, prefix: &str) -> Result<Self, Problem> {
        let [len] = sections.u64s(&format!("{prefix}.len"))?;
        let slots: Buf<u32> = sections.take(&format!("{prefix}.slots"))?;
        let keys: Buf<u64> = sections.take(&format!("{prefix}.keys"))?;
        let long = Arena::from_sections(sections, &format!("{prefix}.long"))?;
        let long_ids: Buf<u32> = sections.take(&format!("{prefix}.long_ids"))?;
        let long_table =
            IdTable::from_sections(sections, &format!("{prefix}.long_table"), long.len())?;
        let len = usize::try_from(len).map_err(|_| bad(format!("{prefix}: gram count")))?;
        let used = slots.iter().filter(|&&s| s != 0).count();
        let shaped = slots.len().is_power_of_two()
            && used * 2 <= slots.len()
            && keys.len() == len
            && long_ids.len() == long.len()
            && used + long.len() == len
            && slots.iter().all(|&s| (s as usize) <= len)
            && long_ids.iter().all(|&id| (id as usize) < len);
        if !shaped {
            return Err(bad(format!("{prefix}: arrays of inconsistent lengths")));
        }
        Ok(Self {
            slots,
            keys,
            long,
            long_ids,
            long_table,
            len,
        })
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

    /// The arrays to store (see `sections.rs`).
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

    /// The arrays to store (see `sections.rs`).
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
    fn vocab_interns_in_order_and_tags_rows() {
        let mut v = Vocab::builder();
        let grams = ["abc", "ñañ", "a longer gram", "x", "abc"];
        let mut ids = Vec::new();
        for (i, g) in grams.iter().enumerate() {
            let key = short_key(g.as_bytes()).unwrap_or(0);
            ids.push(v.intern(key, g, 1 + i as u32).unwrap());
        }
        // "abc" again in another row: same id, not yet met by that row; then met by it
        assert_eq!(
            ids,
            vec![(0, false), (1, false), (2, false), (3, false), (0, false)]
        );
        let key = short_key(b"abc").unwrap();
        assert_eq!(v.intern(key, "abc", 5), Some((0, true)));
        // many more grams: the table grows and keeps every id
        for i in 0..5000u32 {
            let g = format!("{i:06}");
            v.intern(short_key(g.as_bytes()).unwrap(), &g, 9);
        }
        let v = v.finish();
        assert_eq!(v.len(), 5004);
        assert_eq!(v.get("abc"), Some(0));
        assert_eq!(v.get("ñañ"), Some(1));
        assert_eq!(v.get("a longer gram"), Some(2));
        assert_eq!(v.get("x"), Some(3));
        assert_eq!(v.get("004999"), Some(5003));
        assert_eq!(v.get("ab"), None);
        assert_eq!(v.get("another long one"), None);
        assert_eq!(short_key(b""), None);
        assert_ne!(short_key(b"a"), short_key(b"a\0"));
        // Looked up together (past the prefetch distance), each gram gets its own id.
        let mut batch: Vec<String> = (0..5000u32).rev().map(|i| format!("{i:06}")).collect();
        batch.extend(["abc", "ab", "a longer gram", "another long one", "x"].map(String::from));
        let batch: Vec<&str> = batch.iter().map(String::as_str).collect();
        let mut ids = vec![Some(7)];
        v.get_each(&batch, &mut ids);
        let one_by_one: Vec<Option<u32>> = batch.iter().map(|g| v.get(g)).collect();
        assert_eq!(ids, one_by_one);
        assert_eq!(ids.first(), Some(&Some(5003)));
        assert_eq!(
            ids.get(5000..),
            Some(&[Some(0), None, Some(2), None, Some(3)][..])
        );
        // The finished short table holds ids only (4 bytes a slot, at most half full), each
        // key kept once: well under 24 bytes a gram (16-byte slots would take over 50).
        assert!(v.heap_bytes() < 5004 * 24, "{} bytes", v.heap_bytes());
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
