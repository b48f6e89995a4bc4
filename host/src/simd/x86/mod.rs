//! x86-64 kernels: SSE (SSSE3), AVX2 and AVX-512 (F + BW).
//!
//! Layout:
//! - `sse.rs`, `avx2.rs`, `avx512.rs`: MAC swap, after DPDK testpmd `macswap_sse.h` /
//!   `macswap.h`: load the 16-byte headers, `pshufb` with [`MACSWAP_MASK`], store.
//! - `memcpy_small.rs`: copies of at most 32 bytes, shared by every variant.
//! - `memcpy_vec.rs`: the shape of memcpy after DPDK `rte_memcpy` (x86), written once as a macro;
//!   `memcpy_sse.rs`, `memcpy_avx2.rs`, `memcpy_avx512.rs` instantiate it with 16-, 32- and 64-byte
//!   vectors and their size classes.
//!
//! The functions that use the instructions are `#[target_feature] unsafe fn`s; the [`Kernel`]
//! methods are thin `#[inline(always)]` forwarders, so a loop instantiated for one variant calls
//! them directly.

mod avx2;
mod avx512;
mod memcpy_avx2;
mod memcpy_avx512;
mod memcpy_small;
mod memcpy_sse;
mod memcpy_vec;
mod sse;

use super::{Kernel, Variant};

/// `pshufb` control for one 16-byte header: bytes 0..6 (destination MAC) and 6..12 (source MAC)
/// trade places, 12..16 (EtherType / VLAN TPID and what follows) stay.
const MACSWAP_MASK: [i8; 16] = [6, 7, 8, 9, 10, 11, 0, 1, 2, 3, 4, 5, 12, 13, 14, 15];

/// SSE up to SSSE3: 16-byte vectors.
#[derive(Debug, Clone, Copy)]
pub struct Sse;

impl Kernel for Sse {
    const SIMD: Variant = Variant::Sse;

    #[inline(always)]
    unsafe fn macswap4(frames: [*mut u8; 4]) {
        // SAFETY: forwarded contract (16 valid bytes per frame, no overlap, SSSE3 present).
        unsafe { sse::macswap4(frames) }
    }

    #[inline(always)]
    unsafe fn macswap1(frame: *mut u8) {
        // SAFETY: forwarded contract.
        unsafe { sse::macswap1(frame) }
    }

    #[inline(always)]
    unsafe fn memcpy(dst: *mut u8, src: *const u8, n: usize) {
        // SAFETY: forwarded contract (ranges valid, disjoint; SSE2 is x86-64 baseline).
        unsafe { memcpy_sse::memcpy(dst, src, n) }
    }

    #[inline(always)]
    unsafe fn scope<R>(f: impl FnOnce() -> R) -> R {
        // SAFETY: forwarded contract (the CPU has the variant's features).
        unsafe { sse::scope(f) }
    }
}

/// AVX2: 32-byte vectors.
#[derive(Debug, Clone, Copy)]
pub struct Avx2;

impl Kernel for Avx2 {
    const SIMD: Variant = Variant::Avx2;

    #[inline(always)]
    unsafe fn macswap4(frames: [*mut u8; 4]) {
        // SAFETY: forwarded contract (16 valid bytes per frame, no overlap, AVX2 present).
        unsafe { avx2::macswap4(frames) }
    }

    #[inline(always)]
    unsafe fn macswap1(frame: *mut u8) {
        // SAFETY: forwarded contract.
        unsafe { avx2::macswap1(frame) }
    }

    #[inline(always)]
    unsafe fn memcpy(dst: *mut u8, src: *const u8, n: usize) {
        // SAFETY: forwarded contract (ranges valid, disjoint, AVX2 present).
        unsafe { memcpy_avx2::memcpy(dst, src, n) }
    }

    #[inline(always)]
    unsafe fn scope<R>(f: impl FnOnce() -> R) -> R {
        // SAFETY: forwarded contract (the CPU has the variant's features).
        unsafe { avx2::scope(f) }
    }
}

/// AVX-512 (F + BW): 64-byte vectors.
#[derive(Debug, Clone, Copy)]
pub struct Avx512;

impl Kernel for Avx512 {
    const SIMD: Variant = Variant::Avx512;

    #[inline(always)]
    unsafe fn macswap4(frames: [*mut u8; 4]) {
        // SAFETY: forwarded contract (16 valid bytes per frame, no overlap, AVX-512 F+BW present).
        unsafe { avx512::macswap4(frames) }
    }

    #[inline(always)]
    unsafe fn macswap1(frame: *mut u8) {
        // SAFETY: forwarded contract.
        unsafe { avx512::macswap1(frame) }
    }

    #[inline(always)]
    unsafe fn memcpy(dst: *mut u8, src: *const u8, n: usize) {
        // SAFETY: forwarded contract (ranges valid, disjoint, AVX-512 F present).
        unsafe { memcpy_avx512::memcpy(dst, src, n) }
    }

    #[inline(always)]
    unsafe fn scope<R>(f: impl FnOnce() -> R) -> R {
        // SAFETY: forwarded contract (the CPU has the variant's features).
        unsafe { avx512::scope(f) }
    }
}
