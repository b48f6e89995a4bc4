//! The ones' complement sum on 64-bit words, for 64-bit CPUs: 16-byte loads, two accumulators,
//! unfolded results that callers combine with [`add_carry`] before one [`fold`]. The host's fills and
//! tunnel checks use it directly; [`super::sum`] is built on it off WebAssembly.

/// Adds with end-around carry (one's complement addition on 64-bit words).
#[inline(always)]
pub(crate) const fn add_carry(a: u64, b: u64) -> u64 {
    let (s, carry) = a.overflowing_add(b);
    // Cannot overflow: with a carry, `s <= u64::MAX - 1`.
    s + carry as u64
}

/// One's complement sum of `data` read as big-endian 16-bit words (an odd last byte padded with a
/// zero), not yet folded: combine sums with [`add_carry`] and finish with [`fold`].
///
/// Works on 8-byte words: since 2^16 ≡ 1 (mod 2^16 - 1), the 64-bit one's complement sum folds to
/// the same 16-bit one's complement sum. Two accumulators keep the carry chains independent.
#[inline]
pub(crate) fn sum(data: &[u8]) -> u64 {
    let (mut a, mut b) = (0u64, 0u64);
    let mut rest = data;
    while let Some((c, tail)) = rest.split_first_chunk::<16>() {
        let w = u128::from_be_bytes(*c);
        a = add_carry(a, (w >> 64) as u64);
        b = add_carry(b, w as u64);
        rest = tail;
    }
    if let Some((c, tail)) = rest.split_first_chunk::<8>() {
        a = add_carry(a, u64::from_be_bytes(*c));
        rest = tail;
    }
    // Fewer than 8 bytes left, at an even offset: place them as in a big-endian word padded with
    // zeros on the right (16-bit word boundaries stay where they were).
    let mut last = 0u64;
    if let Some((c, tail)) = rest.split_first_chunk::<4>() {
        last |= u64::from(u32::from_be_bytes(*c)) << 32;
        rest = tail;
    }
    if let Some((c, tail)) = rest.split_first_chunk::<2>() {
        last |= u64::from(u16::from_be_bytes(*c)) << 16;
        rest = tail;
    }
    if let Some(&c) = rest.first() {
        last |= u64::from(c) << 8;
    }
    b = add_carry(b, last);
    add_carry(a, b)
}

/// Folds a [`sum`] to 16 bits, with end-around carries.
#[inline]
pub(crate) const fn fold(sum: u64) -> u16 {
    let (s, carry) = (sum as u32).overflowing_add((sum >> 32) as u32);
    let s = s + carry as u32;
    let (s, carry) = (s as u16).overflowing_add((s >> 16) as u16);
    s + carry as u16
}

/// Whether an unfolded [`sum`] folds to 0xFFFF (a checksummed header verifies), without folding:
/// since 2^16 ≡ 1 (mod 0xFFFF), the sum and its fold are equal modulo 0xFFFF, and a fold of a
/// non-zero sum lies in 1..=0xFFFF, so it is 0xFFFF exactly when the sum is a multiple of 0xFFFF.
/// The compiler tests that divisibility with one multiply and one compare (0xFFFF is odd), where
/// the fold takes two rounds of shift, add and carry. A zero sum (data of zeros only) also passes:
/// callers check a byte that cannot be zero (an IPv4 header's version) before trusting it.
#[inline(always)]
pub(crate) const fn folds_to_ones(sum: u64) -> bool {
    sum.is_multiple_of(0xFFFF)
}

/// The Internet checksum of `data`: the complement of its folded one's complement sum.
#[inline]
pub(crate) fn checksum(data: &[u8]) -> u16 {
    !fold(sum(data))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn fold_carries() {
        assert_eq!(fold(0), 0);
        assert_eq!(fold(u64::MAX), 0xFFFF);
        assert_eq!(fold(0x0001_0000), 1);
        assert_eq!(fold(0xFFFF_0001), 1);
        assert_eq!(fold(0x8000_0000_8000_0000), 1); // 2^63 + 2^31 = 2^15 + 2^15 (mod 0xFFFF)
        assert_eq!(fold(0x0001_0001_0001_0001), 4);
    }

    #[test]
    fn folds_to_ones_at_the_edges() {
        for s in [0xFFFF, u64::MAX, 0xFFFF_0000, 0x8000_0000_7FFF_FFFF, 0xFFFE_0001] {
            assert!(folds_to_ones(s) && fold(s) == 0xFFFF, "{s:#x}");
        }
        for s in [1, 0xFFFE, 0x1_0000, u64::MAX - 1, 0x8000_0000_8000_0000] {
            assert!(!folds_to_ones(s) && fold(s) != 0xFFFF, "{s:#x}");
        }
    }

    proptest! {
        #[test]
        fn sums_of_even_splits_add_up(data in prop::collection::vec(any::<u8>(), 0..300), at in 0..150usize) {
            let at = (at * 2).min(data.len() & !1);
            let (a, b) = data.split_at(at);
            prop_assert_eq!(fold(add_carry(sum(a), sum(b))), fold(sum(&data)));
        }

        /// A header with its checksum filled in verifies, and one changed 16-bit word breaks it,
        /// through `folds_to_ones` exactly as through the fold.
        #[test]
        fn folds_to_ones_is_the_fold(mut hdr in prop::array::uniform20(any::<u8>()), at in 0..10usize, by in 1..=0xFFFEu16) {
            hdr[0] |= 0x40; // never all zeros, as no IPv4 header is
            hdr[10..12].fill(0);
            let c = checksum(&hdr).to_be_bytes();
            hdr[10..12].copy_from_slice(&c);
            prop_assert!(folds_to_ones(sum(&hdr)));
            let w = u16::from_be_bytes([hdr[2 * at], hdr[2 * at + 1]]);
            let w = ((u32::from(w) + u32::from(by)) % 0xFFFF) as u16; // another value mod 0xFFFF
            hdr[2 * at..2 * at + 2].copy_from_slice(&w.to_be_bytes());
            prop_assert_eq!(folds_to_ones(sum(&hdr)), fold(sum(&hdr)) == 0xFFFF);
            prop_assert!(!folds_to_ones(sum(&hdr)));
        }
        #[test]
        fn folds_to_ones_agrees_with_fold(s in 1..u64::MAX) {
            prop_assert_eq!(folds_to_ones(s), fold(s) == 0xFFFF);
        }
    }
}
