//! AVX-512 memcpy (64-byte vectors), after DPDK `rte_memcpy` (x86, AVX-512 path). Only AVX-512F is
//! needed; sizes up to 64 use 16- and 32-byte moves.
//!
//! | n          | how                                                                      |
//! |------------|--------------------------------------------------------------------------|
//! | 0..=32     | `memcpy_small`: overlapping 1/2/4/8/16-byte moves                        |
//! | 33..=64    | two overlapping 32-byte moves                                            |
//! | 65..=512   | 1, 2 or 4 vectors from the start and as many ending at `n` (overlapping) |
//! | > 512      | align the destination, 128-byte blocks, overlapping tail                 |
//!
//! Branch-free up to 512 (8 of the 32 zmm registers): the aligned block loop, which ran only 1 to 3
//! times there, measured ~25% slower at 512 bytes.

use core::arch::x86_64::{
    __m256i, __m512i, _mm256_loadu_si256, _mm256_storeu_si256, _mm512_loadu_si512, _mm512_store_si512,
    _mm512_storeu_si512,
};

super::memcpy_vec::vector_memcpy! {
    feature: "avx512f", vector: __m512i, width: 64,
    loadu: _mm512_loadu_si512, storeu: _mm512_storeu_si512, store: _mm512_store_si512,
    arms: {
        0..=32 => small,
        33..=64 => half,
        65..=128 => head_tail(1),
        129..=256 => head_tail(2),
        257..=512 => head_tail(4),
    }
}

/// Copies `32 <= n <= 64` bytes: two overlapping 32-byte moves.
///
/// # Safety
/// As for [`memcpy`], and `32 <= n <= 64`.
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn copy_halves(dst: *mut u8, src: *const u8, n: usize) {
    debug_assert!((32..=64).contains(&n));
    // SAFETY: `[0, 32)` and `[n - 32, n)` lie in `[0, n)` of both ranges; unaligned moves.
    unsafe {
        let a = _mm256_loadu_si256(src.cast::<__m256i>());
        let b = _mm256_loadu_si256(src.add(n - 32).cast::<__m256i>());
        _mm256_storeu_si256(dst.cast::<__m256i>(), a);
        _mm256_storeu_si256(dst.add(n - 32).cast::<__m256i>(), b);
    }
}
