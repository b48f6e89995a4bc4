//! SSE (SSSE3) MAC swap, after DPDK testpmd `macswap_sse.h`: four frames interleaved, one
//! 16-byte header per xmm register.

use core::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_shuffle_epi8, _mm_storeu_si128};

use super::MACSWAP_MASK;

/// Loads [`MACSWAP_MASK`] into an xmm register.
#[inline(always)]
pub(super) fn mask128() -> __m128i {
    // SAFETY: MACSWAP_MASK is 16 readable bytes; `movdqu` (SSE2) is x86-64 baseline.
    unsafe { _mm_loadu_si128(MACSWAP_MASK.as_ptr().cast()) }
}

/// Swaps the MACs of four frames: four loads, four shuffles, four stores.
///
/// # Safety
/// Each frame is valid for reads and writes of 16 bytes, the four ranges do not overlap, and the
/// CPU has SSSE3.
#[inline]
#[target_feature(enable = "ssse3")]
pub(super) unsafe fn macswap4(frames: [*mut u8; 4]) {
    let mask = mask128();
    let [f0, f1, f2, f3] = frames;
    // SAFETY: the caller guarantees 16 readable bytes at each frame; `loadu` has no alignment
    // requirement.
    let (v0, v1, v2, v3) = unsafe {
        (
            _mm_loadu_si128(f0.cast::<__m128i>()),
            _mm_loadu_si128(f1.cast::<__m128i>()),
            _mm_loadu_si128(f2.cast::<__m128i>()),
            _mm_loadu_si128(f3.cast::<__m128i>()),
        )
    };
    let v0 = _mm_shuffle_epi8(v0, mask);
    let v1 = _mm_shuffle_epi8(v1, mask);
    let v2 = _mm_shuffle_epi8(v2, mask);
    let v3 = _mm_shuffle_epi8(v3, mask);
    // SAFETY: the caller guarantees 16 writable, non-overlapping bytes at each frame.
    unsafe {
        _mm_storeu_si128(f0.cast::<__m128i>(), v0);
        _mm_storeu_si128(f1.cast::<__m128i>(), v1);
        _mm_storeu_si128(f2.cast::<__m128i>(), v2);
        _mm_storeu_si128(f3.cast::<__m128i>(), v3);
    }
}

/// Swaps the MACs of one frame: one load, shuffle, store.
///
/// # Safety
/// `frame` is valid for reads and writes of 16 bytes and the CPU has SSSE3.
#[inline]
#[target_feature(enable = "ssse3")]
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
#[target_feature(enable = "ssse3")]
pub(super) unsafe fn scope<R>(f: impl FnOnce() -> R) -> R {
    f()
}
