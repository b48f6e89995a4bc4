//! [`Lane`]: 16 bytes in a vector register where there is one, for the tunnel fast paths: the
//! decapsulation's masked compare of the outer headers and the encapsulation's copy of its
//! template, both in whole lanes at constant offsets.

/// Bytes in a lane.
pub(super) const CHUNK: usize = 16;

/// How many lanes cover bytes `from..n` (at least a lane's worth): at `from`, `from + 16`, ... and
/// the last ending exactly at `n` (overlapping the one before).
pub(super) const fn lanes(from: usize, n: usize) -> usize {
    (n - from - CHUNK).div_ceil(CHUNK) + 1
}

/// Where lane `i` of the [`lanes`] covering `from..n` starts.
pub(super) const fn lane_at(from: usize, n: usize, i: usize) -> usize {
    if i + 1 == lanes(from, n) {
        n - CHUNK
    } else {
        from + i * CHUNK
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
