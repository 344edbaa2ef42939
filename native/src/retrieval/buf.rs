//! Read-only arrays of the index: built in memory, or views into a memory-mapped stored index
//! (see `sections.rs`). Both read as plain slices.

use std::fmt;
use std::ops::Deref;
use std::ptr::NonNull;
use std::sync::Arc;

use memmap2::Mmap;

/// Element types an index array may hold: stored as their raw little-endian bytes.
///
/// # Safety
/// Every bit pattern must be a valid value, the type must have no padding bytes, and its
/// alignment must be at most 64 (sections of a stored index start on 64-byte boundaries).
pub unsafe trait Plain: Copy + Send + Sync + 'static {}

// SAFETY: unsigned integers have no padding and accept every bit pattern.
unsafe impl Plain for u8 {}
// SAFETY: as above.
unsafe impl Plain for u16 {}
// SAFETY: as above.
unsafe impl Plain for u32 {}
// SAFETY: as above.
unsafe impl Plain for u64 {}

/// The bytes of a slice of plain values.
pub fn as_bytes<T: Plain>(values: &[T]) -> &[u8] {
    // SAFETY: `T: Plain` has no padding, so every byte of the slice is initialised; the length
    // is the slice's size in bytes and u8 has alignment 1.
    unsafe {
        std::slice::from_raw_parts(values.as_ptr().cast::<u8>(), std::mem::size_of_val(values))
    }
}

/// What keeps a `Buf`'s memory alive.
enum Owner<T> {
    Heap(Vec<T>),
    /// Held only to keep the map alive.
    Mapped(#[allow(dead_code)] Arc<Mmap>),
}

/// An immutable array: an owned vector, or a range of a shared memory map.
pub struct Buf<T: Plain> {
    ptr: NonNull<T>,
    len: usize,
    owner: Owner<T>,
}

// SAFETY: a `Buf` is never written through; its memory (a vector it owns, or a read-only map it
// shares) lives as long as it does, and `T: Plain` is `Send + Sync`.
unsafe impl<T: Plain> Send for Buf<T> {}
// SAFETY: as above: shared references only ever read.
unsafe impl<T: Plain> Sync for Buf<T> {}

impl<T: Plain> Buf<T> {
    /// `len` values of `map` starting at byte `offset`, or None when that range is out of the
    /// map or not aligned for `T`.
    pub fn mapped(map: &Arc<Mmap>, offset: usize, len: usize) -> Option<Self> {
        let bytes = len.checked_mul(std::mem::size_of::<T>())?;
        let range = map.get(offset..offset.checked_add(bytes)?)?;
        let ptr = NonNull::new(range.as_ptr().cast::<T>().cast_mut())?;
        if ptr.as_ptr().align_offset(std::mem::align_of::<T>()) != 0 {
            return None;
        }
        Some(Self {
            ptr,
            len,
            owner: Owner::Mapped(Arc::clone(map)),
        })
    }

    /// Bytes of memory this array occupies (its allocation, or its part of the map).
    pub fn heap_bytes(&self) -> usize {
        match &self.owner {
            Owner::Heap(v) => v.capacity() * std::mem::size_of::<T>(),
            Owner::Mapped(_) => self.len * std::mem::size_of::<T>(),
        }
    }

    /// Whether the array is a view into a memory map.
    pub fn is_mapped(&self) -> bool {
        matches!(self.owner, Owner::Mapped(_))
    }
}

impl<T: Plain> From<Vec<T>> for Buf<T> {
    fn from(v: Vec<T>) -> Self {
        // A vector's pointer is never null (dangling but aligned when empty); its heap buffer
        // does not move when the vector does.
        let ptr = NonNull::new(v.as_ptr().cast_mut()).unwrap_or(NonNull::dangling());
        Self {
            ptr,
            len: v.len(),
            owner: Owner::Heap(v),
        }
    }
}

impl<T: Plain> Default for Buf<T> {
    fn default() -> Self {
        Vec::new().into()
    }
}

impl<T: Plain> Deref for Buf<T> {
    type Target = [T];

    #[inline]
    fn deref(&self) -> &[T] {
        // SAFETY: `ptr` and `len` describe initialised, aligned values owned by `owner` (checked
        // in `mapped`, or taken from the vector in `from`), never written while `self` lives.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Plain> fmt::Debug for Buf<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = if self.is_mapped() { "mapped" } else { "heap" };
        write!(f, "Buf({kind}, {} values)", self.len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heap_buffers_read_as_slices() {
        let b: Buf<u32> = vec![1, 2, 3].into();
        assert_eq!(&*b, &[1, 2, 3]);
        assert!(!b.is_mapped());
        let moved = b;
        assert_eq!(moved.get(1), Some(&2));
        assert!(Buf::<u64>::default().is_empty());
        assert_eq!(as_bytes(&[1u32, 0x0102_0304]), &[1, 0, 0, 0, 4, 3, 2, 1]);
    }
}
