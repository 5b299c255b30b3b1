//! Sets glibc's mmap threshold to the value its dynamic adjustment converges to, once per
//! process, before the first compiled graph runs.
//!
//! Host calls such as convolutions return tensors that torch allocates on every call. glibc
//! serves a request at or above its mmap threshold (initially 128 KiB) that the heap's top cannot
//! hold with a fresh `mmap`, and frees it with `munmap`; freeing such a block raises the
//! threshold to that block's size, up to 32 MiB on 64-bit systems, and the trim threshold to
//! twice that (`mallopt(3)`, "M_MMAP_THRESHOLD"). A program that allocates the same large size on
//! every call therefore gets a fresh mapping each time, and every 4 KiB page of it faults when
//! the convolution first writes it: resnet18 at batch 8 took about 12,500 page faults per call
//! (about 20 ms of 185 ms), until something else happened to free a larger block.
//!
//! Setting both thresholds to their adapted maximum (32 MiB, 64 MiB) makes blocks up to 32 MiB
//! come from the heap from the start. Values never change; the process may keep up to 64 MiB
//! of freed heap memory instead of returning it, as it would after adapting on its own. A
//! process that chose its own settings (glibc's environment variables or tunables) is left alone.

use std::sync::Once;

static SET: Once = Once::new();

pub fn raise_mmap_threshold() {
    SET.call_once(|| {
        #[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
        {
            let chosen = [
                "MALLOC_MMAP_THRESHOLD_",
                "MALLOC_TRIM_THRESHOLD_",
                "GLIBC_TUNABLES",
            ]
            .iter()
            .any(|v| std::env::var_os(v).is_some());
            if chosen {
                return;
            }
            // <malloc.h>: M_TRIM_THRESHOLD is -1, M_MMAP_THRESHOLD is -3.
            const M_TRIM_THRESHOLD: i32 = -1;
            const M_MMAP_THRESHOLD: i32 = -3;
            extern "C" {
                fn mallopt(param: i32, value: i32) -> i32;
            }
            // SAFETY: mallopt only changes allocator parameters; glibc serializes it with
            // allocation through its arena lock, so concurrent mallocs in other threads are
            // fine. Both values are within glibc's accepted ranges.
            unsafe {
                mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
                mallopt(M_TRIM_THRESHOLD, 64 * 1024 * 1024);
            }
        }
    });
}
