//! AVX2 MAC swap: two frames' 16-byte headers per ymm register (one per 128-bit lane), so four
//! frames take two loads-pairs, two in-lane `vpshufb` and two store-pairs.

use core::arch::x86_64::{
    __m128i, _mm256_broadcastsi128_si256, _mm256_loadu2_m128i, _mm256_shuffle_epi8, _mm256_storeu2_m128i,
    _mm_loadu_si128, _mm_shuffle_epi8, _mm_storeu_si128,
};

use super::sse::mask128;

/// Swaps the MACs of four frames: frames 0 and 1 in one ymm, 2 and 3 in another.
///
/// # Safety
/// Each frame is valid for reads and writes of 16 bytes, the four ranges do not overlap, and the
/// CPU has AVX2.
#[inline]
#[target_feature(enable = "avx2")]
pub(super) unsafe fn macswap4(frames: [*mut u8; 4]) {
    let mask = _mm256_broadcastsi128_si256(mask128());
    let [f0, f1, f2, f3] = frames;
    // SAFETY: the caller guarantees 16 readable bytes at each frame; the loads are unaligned
    // (`loadu2` = two `vmovdqu` xmm loads joined with `vinserti128`).
    let (v01, v23) = unsafe {
        (
            _mm256_loadu2_m128i(f1.cast::<__m128i>(), f0.cast::<__m128i>()),
            _mm256_loadu2_m128i(f3.cast::<__m128i>(), f2.cast::<__m128i>()),
        )
    };
    // `vpshufb` shuffles within each 128-bit lane: the mask is the 16-byte one in both lanes.
    let v01 = _mm256_shuffle_epi8(v01, mask);
    let v23 = _mm256_shuffle_epi8(v23, mask);
    // SAFETY: the caller guarantees 16 writable, non-overlapping bytes at each frame.
    unsafe {
        _mm256_storeu2_m128i(f1.cast::<__m128i>(), f0.cast::<__m128i>(), v01);
        _mm256_storeu2_m128i(f3.cast::<__m128i>(), f2.cast::<__m128i>(), v23);
    }
}

/// Swaps the MACs of one frame (a VEX-encoded xmm load, shuffle, store).
///
/// # Safety
/// `frame` is valid for reads and writes of 16 bytes and the CPU has AVX2.
#[inline]
#[target_feature(enable = "avx2")]
pub(super) unsafe fn macswap1(frame: *mut u8) {
    // SAFETY: the caller guarantees 16 readable bytes at `frame`.
    let v = unsafe { _mm_loadu_si128(frame.cast::<__m128i>()) };
    let v = _mm_shuffle_epi8(v, mask128());
    // SAFETY: the caller guarantees 16 writable bytes at `frame`.
    unsafe { _mm_storeu_si128(frame.cast::<__m128i>(), v) }
}

/// Calls `f` in a function compiled with this variant's features, so that the kernels inline into it
/// ([`Kernel::scope`](crate::simd::Kernel::scope)).
///
/// # Safety
/// The CPU has the features.
#[inline]
#[target_feature(enable = "avx2")]
pub(super) unsafe fn scope<R>(f: impl FnOnce() -> R) -> R {
    f()
}
