//! The portable reference kernels.

use super::{Kernel, Variant};

/// Portable kernels: plain Rust, the reference for every other variant.
#[derive(Debug, Clone, Copy)]
pub struct Scalar;

impl Kernel for Scalar {
    const SIMD: Variant = Variant::Scalar;

    #[inline(always)]
    unsafe fn macswap4(frames: [*mut u8; 4]) {
        for f in frames {
            // SAFETY: forwarded contract: valid for 16 bytes.
            unsafe { Self::macswap1(f) };
        }
    }

    #[inline(always)]
    unsafe fn macswap1(frame: *mut u8) {
        // SAFETY: the caller guarantees 16 valid bytes; we touch 12.
        let hdr = unsafe { &mut *frame.cast::<[u8; 12]>() };
        let mut swapped = [0u8; 12];
        swapped[..6].copy_from_slice(&hdr[6..12]);
        swapped[6..].copy_from_slice(&hdr[..6]);
        *hdr = swapped;
    }

    #[inline(always)]
    unsafe fn memcpy(dst: *mut u8, src: *const u8, n: usize) {
        // SAFETY: forwarded contract.
        unsafe { core::ptr::copy_nonoverlapping(src, dst, n) }
    }

    #[inline(always)]
    unsafe fn scope<R>(f: impl FnOnce() -> R) -> R {
        f()
    }
}

/// Byte-at-a-time copy: the obviously-correct reference the tests compare every memcpy against.
#[cfg(test)]
pub(crate) fn reference_copy(dst: &mut [u8], src: &[u8]) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d = *s;
    }
}
