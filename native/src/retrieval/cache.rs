//! Cache hints shared by the kernels.

/// Asks for the cache line holding `value` ahead of its use; a hint only, it never faults.
#[inline(always)]
pub fn prefetch<T>(value: *const T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: SSE is part of every x86_64 CPU, and a prefetch of any address never faults.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(value.cast::<i8>()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}
