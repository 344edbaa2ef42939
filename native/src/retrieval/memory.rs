//! How the index asks for memory: fresh zeroed arrays that are written at once, and giving
//! freed memory back to the system.

/// `n` zeros whose pages are written now. Memory from `vec![0; n]` is mapped to the shared
/// zero page when it is first read, and the first write after that read copies the page and
/// flushes every other thread's TLB entry for it (an interrupt to each core, costly in a
/// virtual machine); arrays that are read before they are written (hash tables, counters)
/// come from here.
pub fn written_zeros<T: Copy + Default>(n: usize) -> Vec<T> {
    let mut v = Vec::with_capacity(n);
    v.resize(n, T::default());
    v
}

/// Returns the allocator's freed memory to the system (glibc keeps it otherwise, and a build
/// frees a lot of short-lived buffers).
pub fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        extern "C" {
            fn malloc_trim(pad: usize) -> i32;
        }
        // SAFETY: glibc's malloc_trim only releases free heap pages; it has no preconditions.
        unsafe {
            malloc_trim(0);
        }
    }
}

/// From the first build on, large buffers go back to the system as soon as they are freed:
/// glibc's threshold for them stays at its initial 128 KiB (glibc otherwise raises it, up to
/// 32 MiB, each time one is freed, and keeps what is freed below it).
pub fn hand_back_large_buffers() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        extern "C" {
            fn mallopt(param: i32, value: i32) -> i32;
        }
        /// glibc's `M_MMAP_THRESHOLD`, and its initial value.
        const M_MMAP_THRESHOLD: i32 = -3;
        const LARGE: i32 = 128 * 1024;
        static FIXED: std::sync::Once = std::sync::Once::new();
        // SAFETY: mallopt only changes a glibc allocator setting; it has no preconditions.
        FIXED.call_once(|| unsafe {
            mallopt(M_MMAP_THRESHOLD, LARGE);
        });
    }
}
