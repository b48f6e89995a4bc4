//! Copies of at most 32 bytes, shared by every variant (as in `rte_memcpy`): overlapping moves
//! of 1, 2, 4, 8 or 16 bytes, the first starting at 0 and the second ending at `n`.

use core::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_storeu_si128};
use core::ptr::{read_unaligned, write_unaligned};

/// Copies `n <= 32` bytes.
///
/// # Safety
/// `n <= 32`, `src` valid for reads of `n` bytes, `dst` for writes of `n` bytes, no overlap.
#[inline(always)]
pub(super) unsafe fn copy_le32(dst: *mut u8, src: *const u8, n: usize) {
    debug_assert!(n <= 32);
    if n >= 16 {
        // SAFETY: forwarded contract, 16 <= n <= 32.
        unsafe { copy_16_32(dst, src, n) }
    } else {
        // SAFETY: forwarded contract, n < 16.
        unsafe { copy_lt16(dst, src, n) }
    }
}

/// Copies `n < 16` bytes: two overlapping moves of the largest power of two `<= n` (or one byte).
///
/// # Safety
/// `n < 16`, `src` valid for reads of `n` bytes, `dst` for writes of `n` bytes, no overlap.
#[inline(always)]
unsafe fn copy_lt16(dst: *mut u8, src: *const u8, n: usize) {
    // SAFETY: in every arm, with `w <= n` the width of the moves, `[0, w)` and `[n - w, n)` lie in
    // `[0, n)` of both ranges, which the caller guarantees valid; accesses are unaligned.
    unsafe {
        if n >= 8 {
            let a = read_unaligned(src.cast::<u64>());
            let b = read_unaligned(src.add(n - 8).cast::<u64>());
            write_unaligned(dst.cast::<u64>(), a);
            write_unaligned(dst.add(n - 8).cast::<u64>(), b);
        } else if n >= 4 {
            let a = read_unaligned(src.cast::<u32>());
            let b = read_unaligned(src.add(n - 4).cast::<u32>());
            write_unaligned(dst.cast::<u32>(), a);
            write_unaligned(dst.add(n - 4).cast::<u32>(), b);
        } else if n >= 2 {
            let a = read_unaligned(src.cast::<u16>());
            let b = read_unaligned(src.add(n - 2).cast::<u16>());
            write_unaligned(dst.cast::<u16>(), a);
            write_unaligned(dst.add(n - 2).cast::<u16>(), b);
        } else if n == 1 {
            *dst = *src;
        }
    }
}

/// Copies `16 <= n <= 32` bytes: two overlapping 16-byte moves.
///
/// # Safety
/// `16 <= n <= 32`, `src` valid for reads of `n` bytes, `dst` for writes of `n` bytes, no overlap.
#[inline(always)]
unsafe fn copy_16_32(dst: *mut u8, src: *const u8, n: usize) {
    // SAFETY: `[0, 16)` and `[n - 16, n)` lie in `[0, n)` as n >= 16; unaligned SSE2 (baseline)
    // moves.
    unsafe {
        let a = _mm_loadu_si128(src.cast::<__m128i>());
        let b = _mm_loadu_si128(src.add(n - 16).cast::<__m128i>());
        _mm_storeu_si128(dst.cast::<__m128i>(), a);
        _mm_storeu_si128(dst.add(n - 16).cast::<__m128i>(), b);
    }
}
