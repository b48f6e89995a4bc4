//! AVX-512 memcpy (64-byte vectors), after DPDK `rte_memcpy` (x86, AVX-512 path). Sizes up to 64
//! use 16- and 32-byte moves; only AVX-512F is needed.
//!
//! | n          | how                                                                      |
//! |------------|--------------------------------------------------------------------------|
//! | 0..=32     | [`copy_le32`]: overlapping 1/2/4/8/16-byte moves                         |
//! | 33..=64    | two overlapping 32-byte moves                                            |
//! | 65..=512   | 1, 2 or 4 vectors from the start and as many ending at `n` (overlapping) |
//! | > 512      | [`copy_big`]: align the destination, 128-byte blocks, overlapping tail   |

use core::arch::x86_64::{
    __m256i, _mm256_loadu_si256, _mm256_storeu_si256, _mm512_loadu_si512, _mm512_store_si512, _mm512_storeu_si512,
};

use super::memcpy_small::copy_le32;

/// Vector width in bytes.
const W: usize = 64;

/// `mov!(store, dst, src; i...)`: loads the vectors `src + i * W` (unaligned), all before any
/// store, then stores them at `dst + i * W` with `store` (`_mm512_storeu_si512` or the aligned
/// `_mm512_store_si512`). Unsafe: the caller provides the `unsafe` block and its justification.
macro_rules! mov {
    ($store:ident, $dst:expr, $src:expr; $($i:literal)+) => {{
        let (d, s) = ($dst, $src);
        let v = [$(_mm512_loadu_si512(s.add($i * W).cast())),+];
        $($store(d.add($i * W).cast(), v[$i]);)+
    }};
}

/// `head_tail!(dst, src, n; i...)` with `k` indices copies `k * W <= n <= 2 * k * W` bytes: `k`
/// vectors from the start and `k` ending at `n`, overlapping in the middle; all loads before the
/// stores. Unsafe, as `mov!`.
macro_rules! head_tail {
    ($dst:expr, $src:expr, $n:expr; $($i:literal)+) => {{
        let (d, s, n) = ($dst, $src, $n);
        let last = n - [$($i),+].len() * W;
        let head = [$(_mm512_loadu_si512(s.add($i * W).cast())),+];
        let tail = [$(_mm512_loadu_si512(s.add(last + $i * W).cast())),+];
        $(_mm512_storeu_si512(d.add($i * W).cast(), head[$i]);)+
        $(_mm512_storeu_si512(d.add(last + $i * W).cast(), tail[$i]);)+
    }};
}

/// Copies `n` bytes from `src` to `dst`.
///
/// # Safety
/// `src` valid for reads of `n` bytes, `dst` for writes of `n` bytes, no overlap, and the CPU has
/// AVX-512F.
#[inline]
#[target_feature(enable = "avx512f")]
pub(super) unsafe fn memcpy(dst: *mut u8, src: *const u8, n: usize) {
    // SAFETY: forwarded contract in every arm. `head_tail!` with k indices touches `[0, k * W)`
    // and `[n - k * W, n)`, inside `[0, n)` as the arm's range has `k * W <= n`.
    unsafe {
        match n {
            0..=32 => copy_le32(dst, src, n),
            33..=64 => copy_33_64(dst, src, n),
            65..=128 => head_tail!(dst, src, n; 0),
            129..=256 => head_tail!(dst, src, n; 0 1),
            // Branch-free up to 512 (8 of the 32 zmm registers): the aligned block loop, which ran
            // only 1 to 3 times there, measured ~25% slower at 512 bytes.
            257..=512 => head_tail!(dst, src, n; 0 1 2 3),
            _ => copy_big(dst, src, n),
        }
    }
}

/// Copies `32 <= n <= 64` bytes: two overlapping 32-byte moves.
///
/// # Safety
/// As for [`memcpy`], and `32 <= n <= 64`.
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn copy_33_64(dst: *mut u8, src: *const u8, n: usize) {
    debug_assert!((32..=64).contains(&n));
    // SAFETY: `[0, 32)` and `[n - 32, n)` lie in `[0, n)` of both ranges; unaligned moves.
    unsafe {
        let a = _mm256_loadu_si256(src.cast::<__m256i>());
        let b = _mm256_loadu_si256(src.add(n - 32).cast::<__m256i>());
        _mm256_storeu_si256(dst.cast::<__m256i>(), a);
        _mm256_storeu_si256(dst.add(n - 32).cast::<__m256i>(), b);
    }
}

/// Copies `n > 256` bytes (called for `n > 512`): the first vector unaligned, then from the next `W`-aligned destination
/// address 128-byte blocks (unaligned loads, aligned stores), then the rest (< 128 bytes) with one
/// 64- or 128-byte unaligned move ending exactly at `n`, overlapping what was already copied.
///
/// # Safety
/// As for [`memcpy`], and `n > 256`.
#[target_feature(enable = "avx512f")]
unsafe fn copy_big(dst: *mut u8, src: *const u8, n: usize) {
    debug_assert!(n > 256);
    // SAFETY: every access below stays in `[0, n)` of both ranges, as each comment says.
    unsafe {
        let (dst_end, src_end) = (dst.add(n), src.add(n));
        let (mut d, mut s, mut left) = (dst, src, n);
        let misalign = d.addr() & (W - 1);
        if misalign != 0 {
            // `[0, W)`, W < n.
            mov!(_mm512_storeu_si512, d, s; 0);
            let skip = W - misalign;
            (d, s, left) = (d.add(skip), s.add(skip), left - skip);
        }
        while left >= 128 {
            // `[d, d + 128)` ends at or before `dst_end`; `d` is W-aligned.
            debug_assert_eq!(d.addr() % W, 0);
            mov!(_mm512_store_si512, d, s; 0 1);
            (d, s, left) = (d.add(128), s.add(128), left - 128);
        }
        // `left < 128` bytes remain: `[n - 64, n)` or `[n - 128, n)`, inside as `n > 256`.
        if left > 64 {
            mov!(_mm512_storeu_si512, dst_end.sub(128), src_end.sub(128); 0 1);
        } else if left > 0 {
            mov!(_mm512_storeu_si512, dst_end.sub(64), src_end.sub(64); 0);
        }
    }
}
