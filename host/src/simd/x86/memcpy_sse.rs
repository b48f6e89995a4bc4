//! SSE memcpy (16-byte vectors), after DPDK `rte_memcpy` (x86, SSE path).
//!
//! | n        | how                                                                      |
//! |----------|--------------------------------------------------------------------------|
//! | 0..=32   | `memcpy_small`: overlapping 1/2/4/8/16-byte moves                        |
//! | 33..=256 | 2, 4 or 8 vectors from the start and as many ending at `n` (overlapping) |
//! | > 256    | align the destination, 128-byte blocks, overlapping tail                 |

use core::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_store_si128, _mm_storeu_si128};

super::memcpy_vec::vector_memcpy! {
    feature: "sse2", vector: __m128i, width: 16,
    loadu: _mm_loadu_si128, storeu: _mm_storeu_si128, store: _mm_store_si128,
    arms: {
        0..=32 => small,
        33..=64 => head_tail(2),
        65..=128 => head_tail(4),
        129..=256 => head_tail(8),
    }
}
