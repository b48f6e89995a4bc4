//! AVX-512 memcpy (64-byte vectors), after DPDK `rte_memcpy` (x86, AVX-512 path). Sizes up to 64
//! use 16- and 32-byte moves; only AVX-512F is needed.
//!
//! | n          | how                                                                      |
//! |------------|--------------------------------------------------------------------------|
//! | 0..=32     | [`copy_le32`]: overlapping 1/2/4/8/16-byte moves                         |
//! | 33..=64    | two overlapping 32-byte moves                                            |
//! | 65..=256   | 1 or 2 vectors from the start and as many ending at `n` (overlapping)    |
//! | > 256      | [`copy_big`]: align the destination, 128-byte blocks, overlapping tail   |

use core::arch::x86_64::{
    __m256i, __m512i, _mm256_loadu_si256, _mm256_storeu_si256, _mm512_loadu_si512, _mm512_store_si512,
    _mm512_storeu_si512,
};

use super::memcpy_small::copy_le32;

/// Vector width in bytes.
const W: usize = 64;
/// Vectors per 128-byte block.
const BLOCK: usize = 128 / W;

/// Copies `n` bytes from `src` to `dst`.
///
/// # Safety
/// `src` valid for reads of `n` bytes, `dst` for writes of `n` bytes, no overlap, and the CPU has
/// AVX-512F.
#[inline]
#[target_feature(enable = "avx512f")]
pub(super) unsafe fn memcpy(dst: *mut u8, src: *const u8, n: usize) {
    // SAFETY: forwarded contract in every arm; each helper's size precondition is the arm's range.
    unsafe {
        match n {
            0..=32 => copy_le32(dst, src, n),
            33..=64 => copy_33_64(dst, src, n),
            65..=128 => copy_head_tail::<1>(dst, src, n),
            129..=256 => copy_head_tail::<2>(dst, src, n),
            _ => copy_big(dst, src, n),
        }
    }
}

/// Copies `33 <= n <= 64` bytes: two overlapping 32-byte moves.
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

/// Loads `N` vectors from `src`, unaligned.
///
/// # Safety
/// `src` valid for reads of `N * W` bytes; AVX-512F.
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn load<const N: usize>(src: *const u8) -> [__m512i; N] {
    // SAFETY: all-zero bytes are a valid `__m512i`.
    let mut v: [__m512i; N] = unsafe { core::mem::zeroed() };
    let mut i = 0;
    while i < N {
        // SAFETY: `[i * W, (i + 1) * W)` lies in the `N * W` readable bytes.
        v[i] = unsafe { _mm512_loadu_si512(src.add(i * W).cast()) };
        i += 1;
    }
    v
}

/// Stores `N` vectors to `dst`, unaligned.
///
/// # Safety
/// `dst` valid for writes of `N * W` bytes; AVX-512F.
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn store<const N: usize>(dst: *mut u8, v: [__m512i; N]) {
    let mut i = 0;
    while i < N {
        // SAFETY: `[i * W, (i + 1) * W)` lies in the `N * W` writable bytes.
        unsafe { _mm512_storeu_si512(dst.add(i * W).cast(), v[i]) };
        i += 1;
    }
}

/// Stores `N` vectors to `dst`, aligned.
///
/// # Safety
/// `dst` is `W`-aligned and valid for writes of `N * W` bytes; AVX-512F.
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn store_aligned<const N: usize>(dst: *mut u8, v: [__m512i; N]) {
    debug_assert_eq!(dst.addr() % W, 0, "store_aligned: misaligned destination");
    let mut i = 0;
    while i < N {
        // SAFETY: `[i * W, (i + 1) * W)` lies in the `N * W` writable bytes, and `dst + i * W` is
        // `W`-aligned.
        unsafe { _mm512_store_si512(dst.add(i * W).cast(), v[i]) };
        i += 1;
    }
}

/// Copies `N * W <= n <= 2 * N * W` bytes: `N` vectors from the start and `N` ending at `n`,
/// overlapping in the middle. All loads before the stores.
///
/// # Safety
/// As for [`memcpy`], and `N * W <= n <= 2 * N * W`.
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn copy_head_tail<const N: usize>(dst: *mut u8, src: *const u8, n: usize) {
    debug_assert!(N * W <= n && n <= 2 * N * W);
    let last = n - N * W;
    // SAFETY: `[0, N * W)` and `[last, n)` lie in `[0, n)` of both ranges, and together cover it.
    unsafe {
        let head = load::<N>(src);
        let tail = load::<N>(src.add(last));
        store(dst, head);
        store(dst.add(last), tail);
    }
}

/// Copies `n > 256` bytes: the first vector unaligned, then from the next `W`-aligned destination
/// address 128-byte blocks (unaligned loads, aligned stores), then the rest (< 128 bytes) with
/// unaligned vectors ending exactly at `n`, overlapping what was already copied.
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
            store(d, load::<1>(s));
            let skip = W - misalign;
            (d, s, left) = (d.add(skip), s.add(skip), left - skip);
        }
        while left >= 128 {
            // `[d, d + 128)` ends at or before `dst_end`; `d` is W-aligned.
            let v = load::<BLOCK>(s);
            store_aligned(d, v);
            (d, s, left) = (d.add(128), s.add(128), left - 128);
        }
        // `left < 128` bytes remain; the vectors `[n - i * W, n - (i - 1) * W)` for
        // `i <= ceil(left / W) <= 2` start at or after `n - left - (W - 1) >= 0` as `n > 256`.
        for i in 1..=left.div_ceil(W) {
            store(dst_end.sub(i * W), load::<1>(src_end.sub(i * W)));
        }
    }
}
