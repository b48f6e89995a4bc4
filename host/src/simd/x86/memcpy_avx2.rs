//! AVX2 memcpy (32-byte vectors), after DPDK `rte_memcpy` (x86, AVX2 path).
//!
//! | n        | how                                                                      |
//! |----------|--------------------------------------------------------------------------|
//! | 0..=32   | `memcpy_small`: overlapping 1/2/4/8/16-byte moves                        |
//! | 33..=256 | 1, 2 or 4 vectors from the start and as many ending at `n` (overlapping) |
//! | > 256    | align the destination, 128-byte blocks, overlapping tail                 |

use core::arch::x86_64::{__m256i, _mm256_loadu_si256, _mm256_store_si256, _mm256_storeu_si256};

super::memcpy_vec::vector_memcpy! {
    feature: "avx2", vector: __m256i, width: 32,
    loadu: _mm256_loadu_si256, storeu: _mm256_storeu_si256, store: _mm256_store_si256,
    arms: {
        0..=32 => small,
        33..=64 => head_tail(1),
        65..=128 => head_tail(2),
        129..=256 => head_tail(4),
    }
}
