//! [`Matcher`]: [`check()`] with a fast path for the common packet: untagged, IPv4 without options,
//! IPv6 without extension headers, Geneve without options. Its fixed bytes (EtherType, IP version,
//! no fragment bits, protocol, our address, our port, the tunnel flags, our VNI) are compared with a
//! prebuilt pattern, 16 bytes at a time under a mask; then the lengths and the checksums. Anything the fast path does not accept goes
//! to [`check()`], which decides (and says why): the fast path never accepts what `check` refuses.

use super::check::udp_sum_ok;
use super::lane::{lane, lane_at, lanes, masked_eq, Lane, CHUNK};
use super::{
    check, Expect, Found, Kind, Reject, Underlay, GENEVE_ETHERNET, OUTER_LEN_V4, OUTER_LEN_V6, TUNNEL_HLEN, VXLAN_I,
};
use crate::cksum::wide::{add_carry, folds_to_ones};
use crate::field::{eth, ipv4, ipv6, udp};
use crate::proto;
use crate::{ethertype, ETH_HLEN};
use core::net::IpAddr;

/// Room for the longest pattern rounded up to whole chunks.
const ROOM: usize = OUTER_LEN_V6.div_ceil(CHUNK) * CHUNK;

/// A decapsulation's check, fast path first.
#[derive(Debug, Clone)]
pub struct Matcher {
    expect: Expect,
    /// The fast path's pattern, made once (a [`FastPath`] copies it).
    pattern: Pattern,
    v6: bool,
}

impl Matcher {
    /// The matcher for `expect`.
    pub fn new(expect: Expect) -> Matcher {
        let v6 = expect.local.is_ipv6();
        let mut bytes = PatternBytes { mask: [0; ROOM], value: [0; ROOM] };
        bytes.build(&expect);
        let pattern = Pattern::new(&bytes.mask, &bytes.value, if v6 { OUTER_LEN_V6 } else { OUTER_LEN_V4 });
        Matcher { expect, pattern, v6 }
    }

    /// What it accepts.
    pub fn expect(&self) -> &Expect {
        &self.expect
    }

    /// Where the inner frame of `frame` is, or why it is not ours.
    #[inline(always)]
    pub fn check(&self, frame: &[u8]) -> Result<Found, Reject> {
        match self.fast(frame) {
            Some(found) => Ok(found),
            None => check(frame, &self.expect),
        }
    }

    /// The fast path alone: `Some` only for packets [`check()`] accepts, with the same result; `None`
    /// says nothing (ask [`Matcher::check`]).
    #[inline(always)]
    pub fn fast(&self, frame: &[u8]) -> Option<Found> {
        match self.family() {
            Underlay::V4(v4) => v4.fast(frame),
            Underlay::V6(v6) => v6.fast(frame),
        }
    }

    /// The fast path with the underlay family fixed at compile time, for a loop that asks once per
    /// burst rather than once per packet.
    #[inline(always)]
    pub fn family(&self) -> Underlay<FastPath<'_, false>, FastPath<'_, true>> {
        Underlay::pick(self.v6, || FastPath::new(self), || FastPath::new(self))
    }

    /// The fast path for outer headers of `N` bytes with an IP header of `L3` bytes: every offset a
    /// constant, so the compiler checks the frame's length once.
    #[inline(always)]
    fn fast_n<const N: usize, const L3: usize>(&self, pattern: &Pattern, frame: &[u8]) -> Option<Found> {
        let head = frame.first_chunk::<N>()?;
        let l4 = ETH_HLEN + L3;
        let ip_len = if L3 == ipv6::LEN {
            L3 + be16(head, ETH_HLEN + ipv6::PAYLOAD_LEN)
        } else {
            be16(head, ETH_HLEN + ipv4::TOTAL_LEN)
        };
        let inner_len = ip_len.wrapping_sub(N - ETH_HLEN);
        let ok = pattern.matches(head)
            && ETH_HLEN + ip_len <= frame.len()
            // In the header's byte order: one swap (of the expected length), not two. Truncated to
            // 16 bits, a wrapped difference could match, but only for an IP length too short for
            // the inner frame, which the next test refuses.
            && ne16(head, l4 + udp::LENGTH) == (ip_len.wrapping_sub(L3) as u16).to_be()
            && (ETH_HLEN..=usize::from(u16::MAX)).contains(&inner_len)
            && (L3 != ipv4::MIN_LEN || ipv4_sum_ok(head));
        if !ok {
            return None;
        }
        let sum_ok = match be16(head, l4 + udp::CHECKSUM) {
            0 => L3 == ipv4::MIN_LEN || self.expect.zero_csum_v6,
            _ => udp_sum_ok(&head[ETH_HLEN..l4], &frame[l4..ETH_HLEN + ip_len]),
        };
        // The VNI is the top three bytes of the header's second word.
        let t = N - TUNNEL_HLEN;
        let vni = u32::from_be_bytes([head[t + 4], head[t + 5], head[t + 6], head[t + 7]]) >> 8;
        sum_ok.then_some(Found { outer_len: N, inner_len, outer_l2: ETH_HLEN as u16, outer_l3: L3 as u16, vni })
    }
}

/// A pattern's bytes while it is made: which bits are fixed (`mask`) and their `value`.
struct PatternBytes {
    mask: [u8; ROOM],
    value: [u8; ROOM],
}

impl PatternBytes {
    fn fix(&mut self, at: usize, mask: &[u8], value: &[u8]) {
        debug_assert!(at >= FIRST, "the chunks compare nothing before byte {FIRST}");
        self.mask[at..at + mask.len()].copy_from_slice(mask);
        self.value[at..at + value.len()].copy_from_slice(value);
    }

    /// The fixed bytes of a frame `e` accepts on the fast path.
    fn build(&mut self, e: &Expect) {
        let l3 = ETH_HLEN;
        let l4 = match e.local {
            IpAddr::V4(a) => {
                self.fix(eth::ETHERTYPE, &[0xFF; 2], &ethertype::IPV4.to_be_bytes());
                self.fix(l3 + ipv4::VER_IHL, &[0xFF], &[0x45]);
                // Reserved and DF bits are free; More Fragments and the offset must be 0.
                self.fix(l3 + ipv4::FLAGS_FRAG, &[0x3F, 0xFF], &[0, 0]);
                self.fix(l3 + ipv4::PROTOCOL, &[0xFF], &[proto::UDP]);
                self.fix(l3 + ipv4::DST, &[0xFF; 4], &a.octets());
                l3 + ipv4::MIN_LEN
            }
            IpAddr::V6(a) => {
                self.fix(eth::ETHERTYPE, &[0xFF; 2], &ethertype::IPV6.to_be_bytes());
                self.fix(l3 + ipv6::VER, &[0xF0], &[0x60]);
                self.fix(l3 + ipv6::NEXT_HEADER, &[0xFF], &[proto::UDP]);
                self.fix(l3 + ipv6::SRC + ipv6::ADDR_LEN, &[0xFF; 16], &a.octets());
                l3 + ipv6::LEN
            }
        };
        self.fix(l4 + 2, &[0xFF; 2], &e.dst_port.to_be_bytes());
        let t = l4 + udp::LEN;
        match e.kind {
            Kind::Vxlan => self.fix(t, &[VXLAN_I], &[VXLAN_I]),
            // Version 0 and no options; neither control nor critical.
            Kind::Geneve => {
                let p = GENEVE_ETHERNET.to_be_bytes();
                self.fix(t, &[0xFF, 0xC0, 0xFF, 0xFF], &[0, 0, p[0], p[1]]);
            }
        }
        if let Some(vni) = e.vni {
            self.fix(t + 4, &[0xFF; 3], &vni.to_be_bytes()[1..]);
        }
    }
}

/// [`Matcher::fast`] for one underlay family (`V6`), which only [`Matcher::family`] makes. It holds
/// its pattern by value, so that a loop keeps it in registers rather than loading it from the
/// matcher for every packet (which the compiler must, as packet stores might alias it).
#[derive(Debug, Clone, Copy)]
pub struct FastPath<'a, const V6: bool> {
    matcher: &'a Matcher,
    pattern: Pattern,
}

impl<'a, const V6: bool> FastPath<'a, V6> {
    #[inline(always)]
    fn new(matcher: &'a Matcher) -> Self {
        FastPath { matcher, pattern: matcher.pattern }
    }

    /// As [`Matcher::fast`].
    #[inline(always)]
    pub fn fast(&self, frame: &[u8]) -> Option<Found> {
        if V6 {
            self.matcher.fast_n::<{ OUTER_LEN_V6 }, { ipv6::LEN }>(&self.pattern, frame)
        } else {
            self.matcher.fast_n::<{ OUTER_LEN_V4 }, { ipv4::MIN_LEN }>(&self.pattern, frame)
        }
    }
}

/// The big-endian u16 at `at` of a header whose length is known.
#[inline(always)]
fn be16<const N: usize>(head: &[u8; N], at: usize) -> usize {
    usize::from(u16::from_be_bytes([head[at], head[at + 1]]))
}

/// Where a pattern's fixed bytes begin: the EtherType (no MAC is compared), so that the chunks
/// start there and one fewer covers the outer headers (three for IPv4's 50 bytes, not four).
const FIRST: usize = eth::ETHERTYPE;

/// The u16 at `at` of a header whose length is known, in the header's byte order.
#[inline(always)]
fn ne16<const N: usize>(head: &[u8; N], at: usize) -> u16 {
    u16::from_ne_bytes([head[at], head[at + 1]])
}

/// Most chunks a pattern has: the longest outer headers' (see [`chunks`]).
const CHUNKS: usize = chunks(OUTER_LEN_V6);

/// How many chunks cover bytes `FIRST..n` ([`lanes`]).
const fn chunks(n: usize) -> usize {
    lanes(FIRST, n)
}

/// Where chunk `i` of `n` bytes starts: the last lane first (its load also checks the length),
/// then the others in order.
const fn chunk_at(n: usize, i: usize) -> usize {
    let k = chunks(n);
    lane_at(FIRST, n, (i + k - 1) % k)
}

/// A matcher's mask and value for outer headers of one length, in [`chunks`]; the chunks past
/// that length are unused.
#[derive(Debug, Clone, Copy)]
struct Pattern {
    mask: [Lane; CHUNKS],
    value: [Lane; CHUNKS],
}

impl Pattern {
    #[inline(always)]
    fn new(mask: &[u8; ROOM], value: &[u8; ROOM], n: usize) -> Pattern {
        let chunk = |b: &[u8; ROOM], i: usize| {
            let c = b[chunk_at(n, i).min(ROOM - CHUNK)..].first_chunk::<CHUNK>().map_or([0; CHUNK], |c| *c);
            lane(&c)
        };
        Pattern { mask: core::array::from_fn(|i| chunk(mask, i)), value: core::array::from_fn(|i| chunk(value, i)) }
    }

    /// Whether `head` (the `N` bytes the pattern was made for) equals the value wherever the mask
    /// is set. Every offset is a constant.
    #[inline(always)]
    fn matches<const N: usize>(&self, head: &[u8; N]) -> bool {
        let mut all = true;
        for i in 0..chunks(N).min(CHUNKS) {
            let h = head[chunk_at(N, i)..].first_chunk::<CHUNK>().map_or([0xA5; CHUNK], |c| *c);
            all &= masked_eq(lane(&h), self.mask[i], self.value[i]);
        }
        all
    }
}

/// Whether a 20-byte IPv4 header's checksum is right: its one's complement sum is 0xFFFF. Summed
/// in native byte order: a one's complement sum in swapped order is the swapped sum, and 0xFFFF
/// reads the same both ways. A header of zeros would pass ([`folds_to_ones`]); the pattern's
/// version byte refuses it first.
#[inline(always)]
fn ipv4_sum_ok<const N: usize>(head: &[u8; N]) -> bool {
    let ip = &head[ETH_HLEN..];
    let w64 = |at: usize| ip[at..].first_chunk::<8>().map_or(0, |b| u64::from_ne_bytes(*b));
    // The last four bytes as the top half of the word at 12 (its bottom half summed already).
    #[cfg(target_endian = "little")]
    let last = w64(12) >> 32;
    #[cfg(target_endian = "big")]
    let last = w64(12) & 0xFFFF_FFFF;
    folds_to_ones(add_carry(add_carry(w64(0), w64(8)), last))
}
