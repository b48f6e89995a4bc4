//! AVX-512 MAC swap: the four frames' 16-byte headers in the four 128-bit lanes of one zmm
//! register, one `vpshufb` (AVX-512BW), four lane stores.

use core::arch::x86_64::{
    __m128i, _mm512_broadcast_i32x4, _mm512_castsi128_si512, _mm512_castsi512_si128, _mm512_extracti32x4_epi32,
    _mm512_inserti32x4, _mm512_shuffle_epi8, _mm_loadu_si128, _mm_shuffle_epi8, _mm_storeu_si128,
};

use super::sse::mask128;

/// Swaps the MACs of four frames, all in one zmm register.
///
/// # Safety
/// Each frame is valid for reads and writes of 16 bytes, the four ranges do not overlap, and the
/// CPU has AVX-512 F and BW.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
pub(super) unsafe fn macswap4(frames: [*mut u8; 4]) {
    let mask = _mm512_broadcast_i32x4(mask128());
    let [f0, f1, f2, f3] = frames;
    // SAFETY: the caller guarantees 16 readable bytes at each frame; the loads are unaligned.
    let (x0, x1, x2, x3) = unsafe {
        (
            _mm_loadu_si128(f0.cast::<__m128i>()),
            _mm_loadu_si128(f1.cast::<__m128i>()),
            _mm_loadu_si128(f2.cast::<__m128i>()),
            _mm_loadu_si128(f3.cast::<__m128i>()),
        )
    };
    let z = _mm512_castsi128_si512(x0);
    let z = _mm512_inserti32x4::<1>(z, x1);
    let z = _mm512_inserti32x4::<2>(z, x2);
    let z = _mm512_inserti32x4::<3>(z, x3);
    // In-lane shuffle: the 16-byte mask repeated in all four lanes.
    let z = _mm512_shuffle_epi8(z, mask);
    // SAFETY: the caller guarantees 16 writable, non-overlapping bytes at each frame.
    unsafe {
        _mm_storeu_si128(f0.cast::<__m128i>(), _mm512_castsi512_si128(z));
        _mm_storeu_si128(f1.cast::<__m128i>(), _mm512_extracti32x4_epi32::<1>(z));
        _mm_storeu_si128(f2.cast::<__m128i>(), _mm512_extracti32x4_epi32::<2>(z));
        _mm_storeu_si128(f3.cast::<__m128i>(), _mm512_extracti32x4_epi32::<3>(z));
    }
}

/// Swaps the MACs of one frame (an EVEX/VEX xmm load, shuffle, store).
///
/// # Safety
/// `frame` is valid for reads and writes of 16 bytes and the CPU has AVX-512 F and BW.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
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
#[target_feature(enable = "avx512f,avx512bw")]
pub(super) unsafe fn scope<R>(f: impl FnOnce() -> R) -> R {
    f()
}
