//! Compact string storage: a byte arena with end offsets and a hash table of ids.
//!
//! `Vocab` interns distinct grams (id = insertion order); `TextStore` keeps every training text in
//! row order and maps each distinct text to the lowest row holding it.

use hashbrown::HashTable;

use super::grams::{hash_bytes, hash_pair};

/// Strings in one byte arena, addressed by a dense `u32` id.
#[derive(Debug, Default)]
struct Arena {
    bytes: Vec<u8>,
    ends: Vec<usize>,
}

impl Arena {
    fn with_capacity(items: usize, bytes: usize) -> Self {
        Self {
            bytes: Vec::with_capacity(bytes),
            ends: Vec::with_capacity(items),
        }
    }

    fn push(&mut self, s: &str) {
        self.bytes.extend_from_slice(s.as_bytes());
        self.ends.push(self.bytes.len());
    }

    #[inline]
    fn get(&self, id: u32) -> &[u8] {
        let id = id as usize;
        let end = self.ends.get(id).copied().unwrap_or(0);
        let start = if id == 0 {
            0
        } else {
            self.ends.get(id - 1).copied().unwrap_or(end)
        };
        self.bytes.get(start..end).unwrap_or(&[])
    }

    fn len(&self) -> usize {
        self.ends.len()
    }

    fn heap_bytes(&self) -> usize {
        self.bytes.capacity() + self.ends.capacity() * std::mem::size_of::<usize>()
    }
}

/// A gram of at most 7 bytes as an integer: its bytes (little-endian) and its length in the top
/// byte, so different grams never share a key and no key is 0.
#[inline]
pub fn short_key(gram: &[u8]) -> Option<u64> {
    let len = gram.len();
    if len == 0 || len > 7 {
        return None;
    }
    let mut word = [0u8; 8];
    word.get_mut(..len)?.copy_from_slice(gram);
    Some(u64::from_le_bytes(word) | ((len as u64) << 56))
}

/// One slot of the short-gram table: key (0 = empty), id, and the last row that met the gram.
#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    key: u64,
    id: u32,
    tag: u32,
}

/// Open addressing over short-gram keys with linear probing; a lookup reads one cache line.
#[derive(Debug, Default)]
struct ShortTable {
    slots: Vec<Slot>,
    len: usize,
    shift: u32,
}

impl ShortTable {
    fn with_bits(bits: u32) -> Self {
        Self {
            slots: vec![Slot::default(); 1 << bits],
            len: 0,
            shift: 64 - bits,
        }
    }

    #[inline(always)]
    fn home(&self, key: u64) -> usize {
        (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    /// The slot holding `key`, or the empty slot where it belongs.
    #[inline(always)]
    fn find(&self, key: u64) -> usize {
        // The table is never full (its load stays at most 4/5), so an empty slot ends the probe.
        let mask = self.slots.len().wrapping_sub(1);
        let mut i = self.home(key);
        for _ in 0..self.slots.len() {
            match self.slots.get(i) {
                Some(s) if s.key != key && s.key != 0 => i = (i + 1) & mask,
                _ => return i,
            }
        }
        usize::MAX
    }

    #[inline(always)]
    fn prefetch(&self, key: u64) {
        #[cfg(target_arch = "x86_64")]
        if let Some(s) = self.slots.get(self.home(key)) {
            // SAFETY: a prefetch is only a hint; the address is that of a live slot.
            unsafe {
                std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                    (s as *const Slot).cast::<i8>(),
                );
            }
        }
    }

    fn get(&self, key: u64) -> Option<u32> {
        self.slots
            .get(self.find(key))
            .filter(|s| s.key == key)
            .map(|s| s.id)
    }

    /// Rebuilds with room for its keys at a load of at most `num/den` (below 1).
    fn resize(&mut self, num: usize, den: usize) {
        let mut bits = 4;
        while (1usize << bits) * num < self.len.max(1) * den {
            bits += 1;
        }
        let mut bigger = Self::with_bits(bits);
        for s in self.slots.iter().filter(|s| s.key != 0) {
            let i = bigger.find(s.key);
            if let Some(slot) = bigger.slots.get_mut(i) {
                *slot = *s;
            }
        }
        bigger.len = self.len;
        *self = bigger;
    }
}

/// The gram vocabulary: distinct grams with dense ids in order of first appearance. Grams of up
/// to 7 bytes live in an open-addressing table keyed by their bytes; longer ones (rare: five
/// code points of which several take two bytes or more) in a byte arena with a hash table.
#[derive(Debug, Default)]
pub struct Vocab {
    short: ShortTable,
    long: Arena,
    long_ids: Vec<u32>,
    long_tags: Vec<u32>,
    long_table: HashTable<u32>,
    len: u32,
}

impl Vocab {
    /// An empty vocabulary.
    pub fn new() -> Self {
        Self {
            short: ShortTable::with_bits(14),
            ..Self::default()
        }
    }

    /// Number of grams.
    #[inline]
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// Prefetches the table slot of a short gram's `key` (0: nothing to do).
    #[inline(always)]
    pub fn prefetch(&self, key: u64) {
        if key != 0 {
            self.short.prefetch(key);
        }
    }

    /// The id of `gram` (its short `key`, or 0 for a long gram), added when new, and whether
    /// row tag `tag` had met it already. Fails when ids run out.
    #[inline(always)]
    pub fn intern(&mut self, key: u64, gram: &str, tag: u32) -> Option<(u32, bool)> {
        let next = self.len;
        if key != 0 {
            if 2 * (self.short.len + 1) > self.short.slots.len() {
                self.short.resize(1, 4);
            }
            let i = self.short.find(key);
            let slot = self.short.slots.get_mut(i)?;
            if slot.key == 0 {
                *slot = Slot { key, id: next, tag };
                self.short.len += 1;
                self.len = next.checked_add(1)?;
                return Some((next, false));
            }
            let seen = slot.tag == tag;
            slot.tag = tag;
            return Some((slot.id, seen));
        }
        let bytes = gram.as_bytes();
        let h = hash_bytes(bytes);
        let arena = &self.long;
        if let Some(&k) = self.long_table.find(h, |&k| arena.get(k) == bytes) {
            let id = self.long_ids.get(k as usize).copied()?;
            let t = self.long_tags.get_mut(k as usize)?;
            let seen = *t == tag;
            *t = tag;
            return Some((id, seen));
        }
        let k = self.long.len() as u32;
        self.long.push(gram);
        self.long_ids.push(next);
        self.long_tags.push(tag);
        let arena = &self.long;
        self.long_table
            .insert_unique(h, k, |&i| hash_bytes(arena.get(i)));
        self.len = next.checked_add(1)?;
        Some((next, false))
    }

    /// Gives every gram the id `new_of[old id]`.
    pub fn renumber(&mut self, new_of: &[u32]) {
        let map = |id: &mut u32| *id = new_of.get(*id as usize).copied().unwrap_or(u32::MAX);
        self.short
            .slots
            .iter_mut()
            .filter(|s| s.key != 0)
            .for_each(|s| map(&mut s.id));
        self.long_ids.iter_mut().for_each(map);
    }

    /// Drops the build-time row tags and packs the short table for lookups.
    pub fn finish(&mut self) {
        self.long_tags = Vec::new();
        self.short.resize(4, 5);
        let arena = &self.long;
        self.long_table.shrink_to_fit(|&i| hash_bytes(arena.get(i)));
    }

    /// The id of `gram`, if it is in the vocabulary.
    #[inline]
    pub fn get(&self, gram: &str) -> Option<u32> {
        let bytes = gram.as_bytes();
        if let Some(key) = short_key(bytes) {
            return self.short.get(key);
        }
        let k = *self
            .long_table
            .find(hash_bytes(bytes), |&k| self.long.get(k) == bytes)?;
        self.long_ids.get(k as usize).copied()
    }

    /// Approximate heap size in bytes.
    pub fn heap_bytes(&self) -> usize {
        self.short.slots.capacity() * std::mem::size_of::<Slot>()
            + self.long.heap_bytes()
            + (self.long_ids.capacity() + self.long_tags.capacity()) * 4
            + self.long_table.capacity() * (std::mem::size_of::<u32>() + 1)
    }
}

/// Every text of one training side in row order, with exact-match lookup.
#[derive(Debug, Default)]
pub struct TextStore {
    arena: Arena,
    first: HashTable<u32>,
}

impl TextStore {
    /// Stores `texts` (row order) and indexes the lowest row of each distinct text.
    pub fn build<S: AsRef<str>>(texts: &[S]) -> Self {
        let bytes = texts.iter().map(|t| t.as_ref().len()).sum();
        let mut arena = Arena::with_capacity(texts.len(), bytes);
        let mut first: HashTable<u32> = HashTable::with_capacity(texts.len());
        for (row, text) in texts.iter().enumerate() {
            let text = text.as_ref();
            arena.push(text);
            let h = hash_bytes(text.as_bytes());
            if first
                .find(h, |&i| arena.get(i) == text.as_bytes())
                .is_none()
            {
                first.insert_unique(h, row as u32, |&i| hash_bytes(arena.get(i)));
            }
        }
        first.shrink_to_fit(|&i| hash_bytes(arena.get(i)));
        Self { arena, first }
    }

    /// The text of `row`.
    #[inline]
    pub fn text(&self, row: u32) -> &[u8] {
        self.arena.get(row)
    }

    /// The lowest row whose text equals `text`.
    #[inline]
    pub fn lowest_equal(&self, text: &str) -> Option<u32> {
        let bytes = text.as_bytes();
        self.first
            .find(hash_bytes(bytes), |&i| self.arena.get(i) == bytes)
            .copied()
    }

    /// Approximate heap size in bytes.
    pub fn heap_bytes(&self) -> usize {
        self.arena.heap_bytes() + self.first.capacity() * (std::mem::size_of::<u32>() + 1)
    }
}

/// Exact lookup of aligned (source, target) rows: the lowest row holding each distinct pair.
#[derive(Debug, Default)]
pub struct PairTable {
    first: HashTable<u32>,
}

impl PairTable {
    /// Indexes the rows of two aligned stores of `rows` rows.
    pub fn build(src: &TextStore, tgt: &TextStore, rows: usize) -> Self {
        let mut first: HashTable<u32> = HashTable::with_capacity(rows);
        let hash = |i: u32| hash_pair(src.text(i), tgt.text(i));
        for row in 0..rows as u32 {
            let (s, t) = (src.text(row), tgt.text(row));
            let h = hash_pair(s, t);
            if first
                .find(h, |&i| src.text(i) == s && tgt.text(i) == t)
                .is_none()
            {
                first.insert_unique(h, row, |&i| hash(i));
            }
        }
        first.shrink_to_fit(|&i| hash(i));
        Self { first }
    }

    /// The lowest row whose source equals `s` and whose target equals `t`.
    #[inline]
    pub fn lowest_equal(&self, src: &TextStore, tgt: &TextStore, s: &str, t: &str) -> Option<u32> {
        let (s, t) = (s.as_bytes(), t.as_bytes());
        self.first
            .find(hash_pair(s, t), |&i| src.text(i) == s && tgt.text(i) == t)
            .copied()
    }

    /// Approximate heap size in bytes.
    pub fn heap_bytes(&self) -> usize {
        self.first.capacity() * (std::mem::size_of::<u32>() + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vocab_interns_in_order_and_tags_rows() {
        let mut v = Vocab::new();
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
        v.finish();
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
