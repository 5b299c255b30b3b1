//! Transparent-huge-page hints for large buffers written from scratch.
//!
//! glibc maps a block of 32 MiB or more afresh for every allocation (see the tracer's
//! `alloc_threshold.rs`), and each 4 KiB page of it then faults on its first write: a 100 MiB
//! GEMM output takes 25,000 faults, about a quarter of GPT-2's lm_head call here. Asking for
//! huge pages (where the system leaves it to `madvise`) makes that one fault per 2 MiB. Smaller
//! buffers come from glibc's heap, already faulted in, and get no hint (a hint there would split
//! the heap's mapping on every call). Generated kernels give the same hint in C (`tf_hugepage`).

/// Buffers at least this large get the hint: glibc's mmap threshold once raised.
pub const MIN_BYTES: i64 = 32 << 20;

/// Hints that `[ptr, ptr + bytes)` be backed by huge pages. Only whole 2 MiB pages inside the
/// range are named, so the call never touches memory outside the buffer; values are unaffected.
pub fn advise(ptr: *mut u8, bytes: i64) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        const MADV_HUGEPAGE: i32 = 14;
        extern "C" {
            fn madvise(addr: *mut std::ffi::c_void, len: usize, advice: i32) -> i32;
        }
        if bytes < MIN_BYTES || ptr.is_null() {
            return;
        }
        let start = (ptr as usize).div_ceil(HUGE) * HUGE;
        let end = (ptr as usize + bytes as usize) / HUGE * HUGE;
        if end > start {
            // SAFETY: the range lies inside the live allocation of `bytes` bytes at `ptr`;
            // MADV_HUGEPAGE changes how the kernel backs those pages, never their contents, and
            // a failure (an unsupported kernel) leaves the memory as it was.
            unsafe {
                madvise(start as *mut std::ffi::c_void, end - start, MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (ptr, bytes);
    }
}
