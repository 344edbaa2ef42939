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

/// The gram vocabulary: distinct grams with dense ids in insertion order.
#[derive(Debug, Default)]
pub struct Vocab {
    arena: Arena,
    table: HashTable<u32>,
}

impl Vocab {
    /// An empty vocabulary with room for `grams` grams of `bytes` bytes in total.
    pub fn with_capacity(grams: usize, bytes: usize) -> Self {
        Self {
            arena: Arena::with_capacity(grams, bytes),
            table: HashTable::with_capacity(grams),
        }
    }

    /// Appends a gram that is not yet present; its id is the number of grams before it.
    pub fn push_new(&mut self, gram: &str) {
        let id = self.arena.len() as u32;
        self.arena.push(gram);
        let arena = &self.arena;
        self.table
            .insert_unique(hash_bytes(gram.as_bytes()), id, |&i| {
                hash_bytes(arena.get(i))
            });
    }

    /// The id of `gram`, if it is in the vocabulary.
    #[inline]
    pub fn get(&self, gram: &str) -> Option<u32> {
        let bytes = gram.as_bytes();
        self.table
            .find(hash_bytes(bytes), |&i| self.arena.get(i) == bytes)
            .copied()
    }

    /// Approximate heap size in bytes.
    pub fn heap_bytes(&self) -> usize {
        self.arena.heap_bytes() + self.table.capacity() * (std::mem::size_of::<u32>() + 1)
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
    fn vocab_interns_in_order() {
        let mut v = Vocab::with_capacity(0, 0);
        for g in ["abc", "", "ñañ", "x"] {
            v.push_new(g);
        }
        assert_eq!(v.arena.len(), 4);
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
