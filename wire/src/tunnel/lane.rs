//! [`Lane`]: 16 bytes in a vector register where there is one, for the tunnel fast paths: the
//! decapsulation's masked compare of the outer headers and the encapsulation's copy of its
//! template, both in whole lanes at constant offsets. On x86-64, [`Wide`]: 32 bytes for code
//! compiled with AVX2.

/// Bytes in a lane.
pub(super) const CHUNK: usize = 16;

/// How many lanes of `width` bytes cover bytes `from..n` (at least a lane's worth): at `from`,
/// `from + width`, ... and the last ending exactly at `n` (overlapping the one before).
pub(super) const fn lanes(width: usize, from: usize, n: usize) -> usize {
    (n - from - width).div_ceil(width) + 1
}

/// Where lane `i` of the [`lanes`] of `width` bytes covering `from..n` starts.
pub(super) const fn lane_at(width: usize, from: usize, n: usize, i: usize) -> usize {
    if i + 1 == lanes(width, from, n) {
        n - width
    } else {
        from + i * width
    }
}

/// 16 bytes, in a vector register where there is one.
#[cfg(target_arch = "x86_64")]
pub(super) type Lane = core::arch::x86_64::__m128i;
#[cfg(not(target_arch = "x86_64"))]
pub(super) type Lane = u128;

#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) fn lane(b: &[u8; CHUNK]) -> Lane {
    // SAFETY: `b` is 16 readable bytes; an unaligned load has no other requirement.
    unsafe { core::arch::x86_64::_mm_loadu_si128(b.as_ptr().cast()) }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
pub(super) fn lane(b: &[u8; CHUNK]) -> Lane {
    u128::from_ne_bytes(*b)
}

/// Whether `h` equals `v` wherever `m` is set, with SSE2 (part of every x86-64 CPU): and, compare,
/// one mask.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) fn masked_eq(h: Lane, m: Lane, v: Lane) -> bool {
    use core::arch::x86_64::{_mm_and_si128, _mm_cmpeq_epi8, _mm_movemask_epi8};
    // SAFETY: SSE2 is part of the x86-64 baseline, enabled for every x86-64 build.
    unsafe { _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_and_si128(h, m), v)) == 0xFFFF }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
pub(super) fn masked_eq(h: Lane, m: Lane, v: Lane) -> bool {
    h & m == v
}

/// Stores `l` over `b`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) fn store(b: &mut [u8; CHUNK], l: Lane) {
    // SAFETY: `b` is 16 writable bytes; an unaligned store has no other requirement.
    unsafe { core::arch::x86_64::_mm_storeu_si128(b.as_mut_ptr().cast(), l) }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
pub(super) fn store(b: &mut [u8; CHUNK], l: Lane) {
    *b = l.to_ne_bytes();
}

/// 32 bytes in an AVX2 register.
#[cfg(target_arch = "x86_64")]
pub(super) type Wide = core::arch::x86_64::__m256i;

/// Bytes in a [`Wide`] lane.
pub(super) const WIDE: usize = 32;

/// The 32 bytes of `b` as a [`Wide`] lane (a value: no instruction needs AVX to make it).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) fn wide_of(b: [u8; WIDE]) -> Wide {
    // SAFETY: `__m256i` is 32 bytes of plain data, every bit pattern a value, as `[u8; 32]`.
    unsafe { core::mem::transmute::<[u8; WIDE], Wide>(b) }
}

/// The bits of `m` where `h` and `v` differ: zero when `h` equals `v` wherever `m` is set.
///
/// # Safety
/// The CPU has AVX2.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) unsafe fn wide_diff(h: Wide, m: Wide, v: Wide) -> Wide {
    use core::arch::x86_64::{_mm256_and_si256, _mm256_xor_si256};
    // SAFETY: AVX2 is the caller's contract.
    unsafe { _mm256_and_si256(_mm256_xor_si256(h, v), m) }
}

/// Both lanes' differences in one.
///
/// # Safety
/// The CPU has AVX2.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) unsafe fn wide_or(a: Wide, b: Wide) -> Wide {
    // SAFETY: AVX2 is the caller's contract.
    unsafe { core::arch::x86_64::_mm256_or_si256(a, b) }
}

/// Whether every bit of `d` is zero (`vptest`).
///
/// # Safety
/// The CPU has AVX.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) unsafe fn wide_is_zero(d: Wide) -> bool {
    // SAFETY: AVX is the caller's contract.
    unsafe { core::arch::x86_64::_mm256_testz_si256(d, d) == 1 }
}
