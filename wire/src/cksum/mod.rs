//! The Internet checksum (RFC 1071): the ones' complement of the ones' complement sum of 16-bit
//! big-endian words, its incremental update (RFC 1624), and the IPv4/IPv6 pseudo-header sums that
//! UDP, TCP and ICMPv6 checksums start from.
//!
//! A checksum is computed in two steps so that pieces can be chained: [`sum`] adds bytes to a running
//! sum, [`fold`] turns the sum into the 16-bit value that goes on the wire. To check a received header,
//! sum it *with* its checksum field: the result folds to 0 when it is intact.
//!
//! ```
//! use wasmdp_wire::cksum;
//! let hdr = [0x45, 0, 0, 0x73, 0, 0, 0x40, 0, 0x40, 0x11, 0xb8, 0x61, 192, 168, 0, 1, 192, 168, 0, 199];
//! assert_eq!(cksum::fold(cksum::sum(&hdr, 0)), 0);
//! // The TTL/protocol word changes from 0x4011 to 0x3f11: patch the checksum without re-reading.
//! assert_eq!(cksum::update16(0xb861, 0x4011, 0x3f11), 0xb961);
//! ```
//!
//! The UDP/TCP checksums of whole segments are methods of the views [`Udp`](crate::view::Udp) and
//! [`Tcp`](crate::view::Tcp), and the host's software offloads fill them on a parsed frame
//! ([`fill_l4_cksum`]).
//!
//! One rule, one function per step, with the summing loop chosen for the target: WebAssembly has no
//! 128-bit loads and no byte-swap instruction, a 64-bit CPU has both (`narrow.rs` and `wide.rs` say
//! how each works). Both loops are built and checked against RFC 1071's word-at-a-time sum on every
//! test run, whatever the target.

mod fill;
mod narrow;
pub(crate) mod wide;

pub use fill::{fill_ipv4_cksum, fill_l4_cksum, finish_partial_l4, L4Checksum};

/// Folds the carries of `acc` back into its low 16 bits (end-around carry), leaving a value of at most
/// 0xFFFF that is congruent to `acc` modulo 0xFFFF, which is what ones' complement addition is. Zero
/// only when `acc` is zero, as the loop of RFC 1071 gives.
///
/// Four fixed steps rather than a loop until no carry is left: 2^32 and 2^16 are both 1 modulo
/// 0xFFFF, so adding the high part to the low part keeps the value, and the bounds below show four
/// steps always suffice. No loop means no branch and, in WebAssembly, no interruption check per
/// iteration; on a `u32` argument the compiler drops the first two steps.
#[inline(always)]
pub(crate) fn fold_carries(acc: u64) -> u32 {
    // At most 2^33 - 2.
    let a = (acc & 0xFFFF_FFFF) + (acc >> 32);
    // At most 2^32 - 1: with a carry, the low half is at most 2^32 - 2.
    let a = (a & 0xFFFF_FFFF) + (a >> 32);
    // At most 0x1FFFE.
    let a = (a & 0xFFFF) + (a >> 16);
    // At most 0xFFFF: with a carry, the low half is at most 0xFFFE. The cast keeps every bit.
    let a = (a & 0xFFFF) + (a >> 16);
    a as u32
}

/// Adds `data`, read as big-endian 16-bit words (an odd last byte is padded with a zero byte), to the
/// running sum `initial`, and returns the new running sum, carries folded so that it is at most 0xFFFF.
///
/// `initial` may be any value (0 to start, or a previous result, or a pseudo-header sum). Chaining
/// `sum(b, sum(a, 0))` equals `sum(a ++ b, 0)` only when `a` has an even length, as the words of `b`
/// would otherwise straddle.
pub fn sum(data: &[u8], initial: u32) -> u32 {
    if cfg!(target_arch = "wasm32") {
        narrow::sum(data, initial)
    } else {
        fold_carries(wide::add_carry(u64::from(initial), wide::sum(data)))
    }
}

/// Finishes a running sum: folds its carries and complements it, giving the checksum field's value.
/// Over data that includes a correct checksum field, the result is 0.
#[inline(always)]
pub fn fold(sum: u32) -> u16 {
    !(fold32(sum) as u16)
}

/// [`fold_carries`] for a `u32`, in one step: in `sum + sum.rotate_left(16)` the high half is the
/// two halves' sum with the low halves' carry added back in (end-around), which is the fold, at most
/// 0xFFFF. A rotate, an add and a shift, where two steps of adding the halves took seven operations
/// in wasmtime's code of a checksum update.
#[inline(always)]
fn fold32(sum: u32) -> u32 {
    sum.wrapping_add(sum.rotate_left(16)) >> 16
}

/// The checksum of `data` alone: `fold(sum(data, 0))`.
pub fn checksum(data: &[u8]) -> u16 {
    fold(sum(data, 0))
}

/// The new checksum after one 16-bit word of the covered data changes from `old` to `new`
/// (RFC 1624, eqn. 3: `HC' = ~(~HC + ~m + m')`), without reading the rest of the data.
///
/// The word must sit at an even offset of the summed data (every header field does). Equation 3,
/// unlike RFC 1141's, never produces the 0xFFFF ("-0") that a full recomputation cannot produce.
#[inline(always)]
pub fn update16(cksum: u16, old: u16, new: u16) -> u16 {
    adjust(cksum, u32::from(!old) + u32::from(new))
}

/// RFC 1624's equation 3 with the change summed by the caller: `delta` is the sum of `!old + new`
/// over the changed 16-bit words (each at an even offset), for updates of several fields at once.
/// `delta` must not overflow a `u32`: up to 65,536 words.
#[inline(always)]
pub fn adjust(cksum: u16, delta: u32) -> u16 {
    fold(u32::from(!cksum) + delta)
}

/// A computed UDP checksum of 0 is sent as 0xFFFF (its ones' complement twin), since 0 in the field
/// means "no checksum" (RFC 768).
#[inline(always)]
pub fn udp_nonzero(c: u16) -> u16 {
    if c == 0 {
        0xFFFF
    } else {
        c
    }
}

/// [`update16`] for a 32-bit field (an IPv4 address, a TCP sequence number) at an even offset.
#[inline(always)]
pub fn update32(cksum: u16, old: u32, new: u32) -> u16 {
    let (old_hi, old_lo) = ((old >> 16) as u16, old as u16);
    let (new_hi, new_lo) = ((new >> 16) as u16, new as u16);
    fold(u32::from(!cksum) + u32::from(!old_hi) + u32::from(!old_lo) + u32::from(new_hi) + u32::from(new_lo))
}

/// [`update32`] on bytes as they lie in the packet: the checksum field, and the 4 bytes that were
/// there and replace them. Summed in the machine's byte order rather than swapped to big-endian
/// words and back: the ones' complement sum of byte-swapped words is the byte-swapped sum (RFC
/// 1071, 2(B)), and so is its complement. The same result as [`update32`] on the big-endian values,
/// without a byte swap, which WebAssembly has no instruction for (each costs a dozen operations).
#[inline(always)]
pub fn update32_bytes(field: [u8; 2], old: [u8; 4], new: [u8; 4]) -> [u8; 2] {
    update32(u16::from_ne_bytes(field), u32::from_ne_bytes(old), u32::from_ne_bytes(new)).to_ne_bytes()
}

/// [`update16`] on bytes as they lie in the packet: the checksum field, and the 2 bytes that were
/// there and replace them; summed in the machine's byte order, as [`update32_bytes`] is.
#[inline(always)]
pub fn update16_bytes(field: [u8; 2], old: [u8; 2], new: [u8; 2]) -> [u8; 2] {
    update16(u16::from_ne_bytes(field), u16::from_ne_bytes(old), u16::from_ne_bytes(new)).to_ne_bytes()
}

/// [`update16`] for a run of bytes (an IPv6 address, a MAC) replaced by another of the same length.
///
/// Both slices must start at an even offset of the summed data; an odd length is taken as padded
/// with a zero byte, which is right only at the end of the data. Slices of different lengths are
/// summed as they are (the old one's contribution removed, the new one's added).
pub fn update_bytes(cksum: u16, old: &[u8], new: &[u8]) -> u16 {
    // `sum` returns at most 0xFFFF; its complement is the ones' complement negation of the old bytes.
    let minus_old = !(sum(old, 0) as u16);
    fold(sum(new, u32::from(!cksum) + u32::from(minus_old)))
}

/// The running sum of the IPv4 pseudo-header (RFC 768, RFC 9293): source and destination addresses,
/// a zero byte, the protocol, and the upper-layer length (the UDP or TCP header plus data).
pub fn pseudo_v4(src: [u8; 4], dst: [u8; 4], proto: u8, len: u16) -> u32 {
    sum(&dst, sum(&src, u32::from(proto) + u32::from(len)))
}

/// The running sum of the IPv6 pseudo-header (RFC 8200, 8.1): source and destination addresses, the
/// 32-bit upper-layer length, three zero bytes and the next header value of the upper layer (after
/// the extension headers). With a Routing header, `dst` is the final destination.
pub fn pseudo_v6(src: &[u8; 16], dst: &[u8; 16], proto: u8, len: u32) -> u32 {
    sum(&len.to_be_bytes(), sum(dst, sum(src, u32::from(proto))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// What each of the two loops gives, whichever one this target's [`sum`] uses.
    fn both_loops(data: &[u8], initial: u32) -> [u32; 2] {
        [narrow::sum(data, initial), fold_carries(wide::add_carry(u64::from(initial), wide::sum(data)))]
    }

    proptest! {
        #[test]
        fn both_loops_give_rfc1071s_sum(data in prop::collection::vec(any::<u8>(), 0..600), initial in any::<u32>()) {
            let want = fold_carries(u64::from(initial) + u64::from(!naive(&data)));
            prop_assert_eq!(both_loops(&data, initial), [want, want]);
            prop_assert_eq!(sum(&data, initial), want);
        }
    }

    #[test]
    fn both_loops_on_long_and_saturated_data() {
        for data in [&[0xffu8; 200_001][..], &[0u8; 70_000][..], &[0x80; 262_147][..]] {
            let want = fold_carries(u64::from(!naive(data)));
            assert_eq!(both_loops(data, 0), [want, want], "{} bytes", data.len());
        }
    }

    #[test]
    fn fold_carries_matches_the_rfc1071_loop() {
        fn looped(mut acc: u64) -> u32 {
            while acc >> 16 != 0 {
                acc = (acc & 0xFFFF) + (acc >> 16);
            }
            acc as u32
        }
        let edges = [0, 1, 0xFFFE, 0xFFFF, 0x1_0000, 0x1_FFFE, 0x1_FFFF, 0xFFFF_FFFF, 0x1_0000_0000, 0x1_FFFF_FFFE];
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let random = core::iter::repeat_with(|| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x >> (x % 64)
        });
        for acc in edges.into_iter().chain([u64::MAX, u64::MAX - 1, 0xFFFF << 48]).chain(random.take(100_000)) {
            assert_eq!(fold_carries(acc), looped(acc), "{acc:#x}");
        }
    }

    #[test]
    fn the_one_step_fold_of_a_u32_is_the_rfc1071_loop() {
        // Every value below 2^20 (every sum of up to 16 words), every value whose halves are
        // near the edges, and random ones.
        let edge = |h: u32| [h, h + 1, h + 2, 0x7FFF - h, 0x8000 + h, 0xFFFF - h, 0xFFFE - h];
        let edges = (0..3).flat_map(edge).flat_map(|hi| (0..3).flat_map(edge).map(move |lo| hi << 16 | lo));
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let random = core::iter::repeat_with(|| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u32
        });
        for sum in (0..1 << 20).chain(edges).chain([u32::MAX, u32::MAX - 1]).chain(random.take(1_000_000)) {
            assert_eq!(fold32(sum), fold_carries(u64::from(sum)), "{sum:#x}");
        }
    }

    #[test]
    fn updates_on_bytes_are_the_updates_on_big_endian_values() {
        let mut x = 0x1234_5678_9abc_def0u64;
        for _ in 0..10_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let (c, old, new) = ((x >> 48) as u16, (x >> 16) as u32, x.rotate_left(29) as u32);
            let want = update32(c, old, new).to_be_bytes();
            assert_eq!(update32_bytes(c.to_be_bytes(), old.to_be_bytes(), new.to_be_bytes()), want, "{x:x}");
            let (old, new) = (old as u16, new as u16);
            let want = update16(c, old, new).to_be_bytes();
            assert_eq!(update16_bytes(c.to_be_bytes(), old.to_be_bytes(), new.to_be_bytes()), want, "{x:x}");
        }
    }

    /// The IPv4 header example of RFC 1071's successors and Wikipedia, checksum 0xb861.
    const HDR: [u8; 20] =
        [0x45, 0, 0, 0x73, 0, 0, 0x40, 0, 0x40, 0x11, 0xb8, 0x61, 0xc0, 0xa8, 0, 1, 0xc0, 0xa8, 0, 0xc7];

    /// A word-at-a-time reference sum, the way RFC 1071 writes it.
    fn naive(data: &[u8]) -> u16 {
        let mut acc: u32 = 0;
        let mut i = 0;
        while i < data.len() {
            let hi = u32::from(data[i]) << 8;
            let lo = data.get(i + 1).copied().map_or(0, u32::from);
            acc += hi | lo;
            acc = (acc & 0xFFFF) + (acc >> 16);
            i += 2;
        }
        !(acc as u16)
    }

    #[test]
    fn rfc1071_example() {
        // RFC 1071, 3: the words 0001 f203 f4f5 f6f7 sum to 0xddf2.
        let data = [0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7];
        assert_eq!(sum(&data, 0), 0xddf2);
        assert_eq!(checksum(&data), !0xddf2);
        // Byte-swapped data sums to the byte-swapped result (RFC 1071, 2.B).
        let swapped = [0x01, 0x00, 0x03, 0xf2, 0xf5, 0xf4, 0xf7, 0xf6];
        assert_eq!(sum(&swapped, 0), 0xf2dd);
    }

    #[test]
    fn ipv4_header_example() {
        assert_eq!(fold(sum(&HDR, 0)), 0);
        let mut h = HDR;
        h[10..12].fill(0);
        assert_eq!(checksum(&h), 0xb861);
        // Chained over pieces of even length.
        assert_eq!(fold(sum(&h[12..], sum(&h[..12], 0))), 0xb861);
    }

    #[test]
    fn odd_lengths_and_long_data_match_reference() {
        let mut data = [0u8; 1001];
        let mut x: u32 = 12345;
        for b in data.iter_mut() {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            *b = (x >> 16) as u8;
        }
        for len in [0, 1, 2, 3, 4, 5, 7, 8, 9, 63, 64, 65, 1000, 1001] {
            assert_eq!(checksum(&data[..len]), naive(&data[..len]), "len {len}");
        }
        assert_eq!(checksum(&[0xff; 200_001]), naive(&[0xff; 200_001]));
        assert_eq!(checksum(&[]), 0xFFFF);
        assert_eq!(fold(u32::MAX), naive(&[0xff; 4]));
    }

    #[test]
    fn any_initial_sum_chains_as_ones_complement_addition() {
        let data: [u8; 23] = core::array::from_fn(|i| (i as u8).wrapping_mul(37).wrapping_add(200));
        for init in [0u32, 1, 0xFF, 0xFFFF, 0x1_0000, 0x2_FFFE, 0x8000_0001, u32::MAX] {
            for len in [0, 1, 2, 5, 20, 23] {
                let want = fold(fold_carries(u64::from(init)) + u32::from(!naive(&data[..len])));
                assert_eq!(fold(sum(&data[..len], init)), want, "initial {init:#x}, {len} bytes");
            }
        }
    }

    #[test]
    fn incremental_matches_full() {
        let mut h = HDR;
        for ttl in [0u8, 1, 63, 64, 128, 255] {
            for proto in [0u8, 1, 6, 17, 255] {
                let old_word = u16::from_be_bytes([h[8], h[9]]);
                let new_word = u16::from_be_bytes([ttl, proto]);
                let old_ck = u16::from_be_bytes([h[10], h[11]]);
                h[8] = ttl;
                h[9] = proto;
                let inc = update16(old_ck, old_word, new_word);
                h[10..12].fill(0);
                assert_eq!(inc, checksum(&h), "ttl {ttl} proto {proto}");
                h[10..12].copy_from_slice(&inc.to_be_bytes());
            }
        }
        for addr in [[0u8; 4], [255; 4], [10, 0, 0, 1], [0x3f, 0x57, 0xff, 0x00], [192, 168, 0, 199]] {
            let old = u32::from_be_bytes([h[16], h[17], h[18], h[19]]);
            let old_ck = u16::from_be_bytes([h[10], h[11]]);
            h[16..20].copy_from_slice(&addr);
            let inc32 = update32(old_ck, old, u32::from_be_bytes(addr));
            let incb = update_bytes(old_ck, &old.to_be_bytes(), &addr);
            h[10..12].fill(0);
            let full = checksum(&h);
            assert_eq!((inc32, incb), (full, full), "addr {addr:?}");
            h[10..12].copy_from_slice(&full.to_be_bytes());
        }
    }

    #[test]
    fn pseudo_headers() {
        // The pseudo-header sums equal the sums of the pseudo-header bytes laid out.
        let (s4, d4) = ([10, 0, 0, 1], [192, 168, 1, 2]);
        let mut ph4 = [0u8; 12];
        ph4[..4].copy_from_slice(&s4);
        ph4[4..8].copy_from_slice(&d4);
        ph4[9] = 17;
        ph4[10..].copy_from_slice(&1234u16.to_be_bytes());
        assert_eq!(fold(pseudo_v4(s4, d4, 17, 1234)), checksum(&ph4));

        let s6 = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
        let d6 = [0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe];
        let mut ph6 = [0u8; 40];
        ph6[..16].copy_from_slice(&s6);
        ph6[16..32].copy_from_slice(&d6);
        ph6[32..36].copy_from_slice(&0x0001_0203u32.to_be_bytes());
        ph6[39] = 6;
        assert_eq!(fold(pseudo_v6(&s6, &d6, 6, 0x0001_0203)), checksum(&ph6));
    }
}
