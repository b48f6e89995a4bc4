//! x86-64 kernels. PLACEHOLDER: delegates to scalar until the SIMD variants land.

use super::{Kernel, Scalar, Simd};

macro_rules! delegate {
    ($name:ident, $simd:expr) => {
        /// Kernel variant (currently delegating to scalar).
        #[derive(Debug, Clone, Copy)]
        pub struct $name;
        impl Kernel for $name {
            const SIMD: Simd = $simd;
            #[inline(always)]
            unsafe fn macswap4<F: FnOnce()>(frames: [*mut u8; 4], between: F) {
                // SAFETY: forwarded contract.
                unsafe { Scalar::macswap4(frames, between) }
            }
            #[inline(always)]
            unsafe fn macswap1(frame: *mut u8) {
                // SAFETY: forwarded contract.
                unsafe { Scalar::macswap1(frame) }
            }
            #[inline(always)]
            unsafe fn memcpy(dst: *mut u8, src: *const u8, n: usize) {
                // SAFETY: forwarded contract.
                unsafe { Scalar::memcpy(dst, src, n) }
            }
        }
    };
}
delegate!(Sse, Simd::Sse);
delegate!(Avx2, Simd::Avx2);
delegate!(Avx512, Simd::Avx512);
