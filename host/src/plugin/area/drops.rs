//! The verdict bytes of `area::DROPS` (heads, copied or direct, with a verdict a packet): set to
//! `PASS` before the call, read and checked after it, eight at a time.

use super::Area;
use crate::mbuf::{Marks, MAX_BURST};
use wasmdp_abi::area::verdict;
use wasmdp_abi::err;

/// Sets the burst's verdict bytes (at least the first `n`) to `PASS`; nothing without `DROPS`. A
/// burst of up to 32 packets (and an area of at least 32) in one 32-byte store, where a fill of
/// exactly `n` bytes was a call of `memset` (so was a loop of such stores: LLVM knows the idiom).
/// The longer fill out of line: in line, LLVM merged the two into one `memset` of a computed length.
#[inline(always)]
pub(super) fn reset(a: &Area, region: &mut [u8], n: usize) {
    if a.drops() {
        let v = a.verdicts(region);
        match v.first_chunk_mut::<32>() {
            Some(first) if n <= 32 => *first = [verdict::PASS; 32],
            _ => reset_long(v, n),
        }
    }
}

/// [`reset`] of a burst of more than 32 packets (or an area of fewer verdicts).
#[cold]
#[inline(never)]
fn reset_long(v: &mut [u8], n: usize) {
    let n = n.min(v.len());
    v[..n].fill(verdict::PASS);
}

/// Each byte `PASS` (0) or `DROP` (1) in every byte of the word.
const ONES: u64 = 0x0101_0101_0101_0101;
/// Gathers bit 0 of each of a word's bytes into its top byte: byte `k` (bit `8k`) times
/// `2^(56 - 7k)` lands on bit `56 + k`, and no two products of the multiplication share a bit, so
/// nothing carries into the top byte.
const GATHER: u64 = 0x0102_0408_1020_4080;

/// Whether the first `n` verdict bytes are all `PASS`: eight at a time, ORed.
#[inline(always)]
pub(super) fn all_pass(verdicts: &[u8], n: usize) -> Result<bool, i32> {
    let v = verdicts.get(..n.min(MAX_BURST)).ok_or(err::BAD_MEMORY)?;
    // Thirty-two bytes a turn (a burst of 32 in one, with no loop set up for a remainder of
    // eights), then the eights and bytes left.
    let (quads, rest) = v.as_chunks::<32>();
    let (eights, rest) = rest.as_chunks::<8>();
    let word = |any: u64, e: &[u8; 8]| any | u64::from_le_bytes(*e);
    let any = quads.iter().fold(0, |any, q| q.as_chunks::<8>().0.iter().fold(any, word));
    let any = eights.iter().fold(any, word);
    Ok(any == 0 && rest.iter().all(|&b| b == verdict::PASS))
}

/// The drops that the first `n` verdict bytes ask for, every byte checked before any is used:
/// `BAD_RANGE` at a byte that is neither `PASS` nor `DROP` (the ABI's rule,
/// `wasmdp_abi::decision::drop_verdict`, eight bytes at a time: tested equal to it).
pub(super) fn read(verdicts: &[u8], n: usize) -> Result<Marks, i32> {
    const _: () = assert!(verdict::PASS == 0 && verdict::DROP == 1);
    let v = verdicts.get(..n.min(MAX_BURST)).ok_or(err::BAD_MEMORY)?;
    let mut words = [0u64; MAX_BURST / 64];
    let mut bad = 0u64;
    // Each word's bits gathered in a register, from its eights at fixed places, and stored once:
    // gathered into the array eight bytes at a time, each eight cost a read-modify-write of the
    // array and its word's index computed.
    let (groups, tail) = v.as_chunks::<64>();
    let mut gather = |eights: &[[u8; 8]]| {
        let mut bits = 0u64;
        for (k, e) in eights.iter().enumerate() {
            let w = u64::from_le_bytes(*e);
            bad |= w & !ONES;
            bits |= (w.wrapping_mul(GATHER) >> 56) << (k * 8);
        }
        bits
    };
    for (word, g) in words.iter_mut().zip(groups) {
        *word = gather(g.as_chunks::<8>().0);
    }
    let (eights, rest) = tail.as_chunks::<8>();
    let mut bits = gather(eights);
    for (j, &b) in rest.iter().enumerate() {
        bad |= u64::from(b & !1);
        bits |= u64::from(b & 1) << (eights.len() * 8 + j);
    }
    if let Some(word) = words.get_mut(groups.len()) {
        *word = bits;
    }
    if bad != 0 {
        return Err(err::BAD_RANGE);
    }
    Ok(Marks::from_words(words))
}

#[cfg(test)]
mod tests {
    use super::{all_pass, read, reset};
    use crate::mbuf::MAX_BURST;
    use crate::plugin::area::record::Area;
    use proptest::prelude::*;
    use wasmdp_abi::decision::drop_verdict;

    /// Direct heads with drops for 70 packets: for every burst size (one store up to 32, a fill
    /// past), the verdict bytes of its packets are `PASS` after the reset, and nothing before them
    /// (the heads) changed.
    #[test]
    fn reset_passes_every_packet_of_any_burst_and_touches_nothing_else() {
        let shape = wasmdp_abi::area::parse_window(
            wasmdp_abi::area::HEADS | wasmdp_abi::area::DIRECT | wasmdp_abi::area::DROPS,
        )
        .unwrap();
        let a = Area::new(0, 70, shape).unwrap();
        for n in 0..=70 {
            let mut region = vec![0xAA; a.end()];
            reset(&a, &mut region, n);
            let at = region.len() - a.verdicts(&mut region).len();
            assert_eq!(region.len() - at, 70);
            assert!(region[at..at + n].iter().all(|&b| b == super::verdict::PASS), "burst of {n}");
            assert!(region[..at].iter().all(|&b| b == 0xAA), "burst of {n}: the heads untouched");
        }
    }

    proptest! {
        /// Every byte `PASS` but at most one, of any other value, at any place: the bytes are all
        /// `PASS` exactly when that one is past the first `n` (whatever the alignment, and with
        /// the bytes past the burst's ignored).
        #[test]
        fn all_pass_sees_any_other_byte_in_the_burst(
            n in 0usize..=MAX_BURST, other in proptest::option::of((0usize..MAX_BURST, 1u8..=255)),
        ) {
            let mut bytes = vec![0u8; MAX_BURST];
            if let Some((at, b)) = other {
                bytes[at] = b;
            }
            prop_assert_eq!(all_pass(&bytes, n), Ok(other.is_none_or(|(at, _)| at >= n)));
            // Fewer bytes than the burst: the area is not what it was made as.
            let short = if n == 0 { Ok(true) } else { Err(wasmdp_abi::err::BAD_MEMORY) };
            prop_assert_eq!(all_pass(&bytes[..n / 2], n), short);
        }

        /// On bytes of 0 and 1 the drops are the ones, at every length up to the largest burst; a
        /// byte of anything else anywhere among the first `n` refuses the whole read, and one past
        /// them changes nothing.
        #[test]
        fn drops_are_the_ones_and_anything_else_refuses(
            bytes in proptest::collection::vec(0u8..=1, MAX_BURST), n in 0usize..=MAX_BURST,
            other in proptest::option::of((0usize..MAX_BURST, 2u8..=255)),
        ) {
            let mut bytes = bytes;
            if let Some((at, b)) = other {
                bytes[at] = b;
            }
            // The quick test agrees with the bytes, whatever they hold.
            prop_assert_eq!(all_pass(&bytes, n), Ok(bytes[..n].iter().all(|&b| b == 0)));
            let got = read(&bytes, n);
            // The ABI's rule, a byte at a time.
            let want: Result<Vec<bool>, i32> = bytes[..n].iter().map(|&b| drop_verdict(b)).collect();
            match want {
                Err(code) => prop_assert_eq!(got, Err(code)),
                Ok(want) => {
                    let got = got.unwrap();
                    for i in 0..MAX_BURST {
                        prop_assert_eq!(got.has(i), want.get(i) == Some(&true), "byte {}", i);
                    }
                }
            }
        }
    }
}
