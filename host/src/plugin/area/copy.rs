//! Copies of windows between packets and the plugin's memory: a few dozen bytes each, in fixed
//! moves rather than calls into memcpy.

use crate::simd::Simd;

/// A window's bytes, in `W` bytes of fixed moves when there are `W` (a whole window of a size
/// `fill` and `copy_back` instantiate, which is most packets': cheaper than [`copy_small`]'s tests
/// of the length; BENCHMARKS.md has the figures).
#[inline(always)]
pub(super) fn copy_window<const W: usize>(simd: Simd, dst: &mut [u8], src: &[u8]) {
    if W != 0 && dst.len() == W {
        return dst.copy_from_slice(&src[..W]);
    }
    copy_small(simd, dst, src)
}

/// A window's bytes: most are a few dozen, where fixed-size moves that may overlap (for 17..=32
/// bytes: 0..16 and n-16..n) beat a call into memcpy and the SIMD copy's dispatch (measured with
/// the VXLAN encapsulation plugin's 50..64-byte windows: BENCHMARKS.md).
#[inline(always)]
pub(super) fn copy_small(simd: Simd, dst: &mut [u8], src: &[u8]) {
    let n = dst.len();
    let src = &src[..n];
    if n > 32 {
        if n > 64 {
            return crate::simd::copy_dyn(simd, dst, src);
        }
        dst[16..32].copy_from_slice(&src[16..32]);
        dst[n - 32..n - 16].copy_from_slice(&src[n - 32..n - 16]);
    }
    if n >= 16 {
        dst[..16].copy_from_slice(&src[..16]);
        dst[n - 16..].copy_from_slice(&src[n - 16..]);
    } else if n >= 8 {
        dst[..8].copy_from_slice(&src[..8]);
        dst[n - 8..].copy_from_slice(&src[n - 8..]);
    } else {
        dst.copy_from_slice(src);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn small_copies_are_exact_at_every_length() {
        let simd = crate::simd::Simd::detect();
        let src: Vec<u8> = (0..200u8).collect();
        for n in 0..=130 {
            let mut dst = vec![0xEEu8; n + 8];
            super::copy_small(simd, &mut dst[4..4 + n], &src[1..1 + n]);
            assert_eq!(&dst[4..4 + n], &src[1..1 + n], "length {n}");
            assert!(dst[..4].iter().chain(&dst[4 + n..]).all(|&b| b == 0xEE), "length {n}: outside touched");
        }
    }

    #[test]
    fn window_copies_are_exact_for_whole_and_partial_windows() {
        fn each_length<const W: usize>() {
            let simd = crate::simd::Simd::detect();
            let src: Vec<u8> = (0..200u8).collect();
            for n in 0..=W + 2 {
                let mut dst = vec![0xEEu8; n + 8];
                super::copy_window::<W>(simd, &mut dst[4..4 + n], &src[1..1 + n]);
                assert_eq!(&dst[4..4 + n], &src[1..1 + n], "window {W}, length {n}");
                assert!(
                    dst[..4].iter().chain(&dst[4 + n..]).all(|&b| b == 0xEE),
                    "window {W}, length {n}: outside touched"
                );
            }
        }
        each_length::<16>();
        each_length::<32>();
        each_length::<64>();
        each_length::<0>();
    }
}
