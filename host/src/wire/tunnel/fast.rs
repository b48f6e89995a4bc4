//! [`Matcher`]: [`check`] with a fast path for the common packet: untagged, IPv4 without options,
//! IPv6 without extension headers, Geneve without options. Its fixed bytes (EtherType, IP version,
//! no fragment bits, protocol, our address, our port, the tunnel flags, our VNI) are compared with a
//! prebuilt pattern, 16 bytes at a time under a mask; then the lengths and the checksums. Anything the fast path does not accept goes
//! to [`check`], which decides (and says why): the fast path never accepts what `check` refuses.

use super::check::udp_sum_ok;
use super::{
    check, Expect, Found, Kind, Reject, Underlay, GENEVE_ETHERNET, OUTER_LEN_V4, OUTER_LEN_V6, TUNNEL_HLEN, VXLAN_I,
};
use crate::wire::cksum::{add_carry, fold};
use crate::wire::field::{eth, ipv4, ipv6, proto, udp};
use crate::wire::{ethertype, ETH_HLEN};
use std::net::IpAddr;

/// Bytes compared at a time.
const CHUNK: usize = 16;
/// Room for the longest pattern rounded up to whole chunks.
const ROOM: usize = OUTER_LEN_V6.div_ceil(CHUNK) * CHUNK;

/// A decapsulation's check, fast path first.
#[derive(Debug, Clone)]
pub struct Matcher {
    expect: Expect,
    mask: [u8; ROOM],
    value: [u8; ROOM],
    v6: bool,
}

impl Matcher {
    /// The matcher for `expect`.
    pub fn new(expect: Expect) -> Matcher {
        let mut m = Matcher { mask: [0; ROOM], value: [0; ROOM], v6: expect.local.is_ipv6(), expect };
        m.build();
        m
    }

    /// What it accepts.
    pub fn expect(&self) -> &Expect {
        &self.expect
    }

    fn fix(&mut self, at: usize, mask: &[u8], value: &[u8]) {
        self.mask[at..at + mask.len()].copy_from_slice(mask);
        self.value[at..at + value.len()].copy_from_slice(value);
    }

    fn build(&mut self) {
        let e = self.expect.clone();
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

    /// Where the inner frame of `frame` is, or why it is not ours.
    #[inline(always)]
    pub fn check(&self, frame: &[u8]) -> Result<Found, Reject> {
        match self.fast(frame) {
            Some(found) => Ok(found),
            None => check(frame, &self.expect),
        }
    }

    /// The fast path alone: `Some` only for packets [`check`] accepts, with the same result; `None`
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
        Underlay::pick(self.v6, || FastPath(self), || FastPath(self))
    }

    /// The fast path for outer headers of `N` bytes with an IP header of `L3` bytes: every offset a
    /// constant, so the compiler checks the frame's length once.
    #[inline(always)]
    fn fast_n<const N: usize, const L3: usize>(&self, frame: &[u8]) -> Option<Found> {
        let head = frame.first_chunk::<N>()?;
        let l4 = ETH_HLEN + L3;
        let ip_len = if L3 == ipv6::LEN {
            L3 + be16(head, ETH_HLEN + ipv6::PAYLOAD_LEN)
        } else {
            be16(head, ETH_HLEN + ipv4::TOTAL_LEN)
        };
        let inner_len = ip_len.wrapping_sub(N - ETH_HLEN);
        let ok = pattern_ok(head, &self.mask, &self.value)
            && ETH_HLEN + ip_len <= frame.len()
            && be16(head, l4 + udp::LENGTH) == ip_len.wrapping_sub(L3)
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

/// [`Matcher::fast`] for one underlay family (`V6`), which only [`Matcher::family`] makes.
#[derive(Debug, Clone, Copy)]
pub struct FastPath<'a, const V6: bool>(&'a Matcher);

impl<const V6: bool> FastPath<'_, V6> {
    /// As [`Matcher::fast`].
    #[inline(always)]
    pub fn fast(self, frame: &[u8]) -> Option<Found> {
        if V6 {
            self.0.fast_n::<{ OUTER_LEN_V6 }, { ipv6::LEN }>(frame)
        } else {
            self.0.fast_n::<{ OUTER_LEN_V4 }, { ipv4::MIN_LEN }>(frame)
        }
    }
}

/// The big-endian u16 at `at` of a header whose length is known.
#[inline(always)]
fn be16<const N: usize>(head: &[u8; N], at: usize) -> usize {
    usize::from(u16::from_be_bytes([head[at], head[at + 1]]))
}

/// Whether `head` equals `value` wherever `mask` is set: compared in 16-byte chunks at 0, 16, ...
/// and one ending exactly at `N` (overlapping the one before).
#[inline(always)]
fn pattern_ok<const N: usize>(head: &[u8; N], mask: &[u8; ROOM], value: &[u8; ROOM]) -> bool {
    let mut all = chunk_eq(head, mask, value, N - CHUNK);
    let mut at = 0;
    while at + CHUNK < N {
        all &= chunk_eq(head, mask, value, at);
        at += CHUNK;
    }
    all
}

/// One chunk of [`pattern_ok`], with SSE2 (part of every x86-64 CPU): load, and, compare, one mask.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn chunk_eq<const N: usize>(head: &[u8; N], mask: &[u8; ROOM], value: &[u8; ROOM], at: usize) -> bool {
    use core::arch::x86_64::{__m128i, _mm_and_si128, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8};
    let load = |b: &[u8]| -> __m128i {
        let c: &[u8; CHUNK] = b[at..].first_chunk().unwrap_or(&[0xA5; CHUNK]);
        // SAFETY: `c` is 16 readable bytes; an unaligned load has no other requirement.
        unsafe { _mm_loadu_si128(c.as_ptr().cast()) }
    };
    let (h, m, v) = (load(head), load(mask), load(value));
    // SAFETY: SSE2 is part of the x86-64 baseline, enabled for every x86-64 build.
    unsafe { _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_and_si128(h, m), v)) == 0xFFFF }
}

/// One chunk of [`pattern_ok`], portably.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn chunk_eq<const N: usize>(head: &[u8; N], mask: &[u8; ROOM], value: &[u8; ROOM], at: usize) -> bool {
    let word = |b: &[u8]| b[at..].first_chunk::<CHUNK>().map_or(u128::MAX, |c| u128::from_ne_bytes(*c));
    word(head) & word(mask) == word(value)
}

/// Whether a 20-byte IPv4 header's checksum is right: its one's complement sum is 0xFFFF. Summed
/// in native byte order: a one's complement sum in swapped order is the swapped sum, and 0xFFFF
/// reads the same both ways.
#[inline(always)]
fn ipv4_sum_ok<const N: usize>(head: &[u8; N]) -> bool {
    let ip = &head[ETH_HLEN..];
    let w64 = |at: usize| ip[at..].first_chunk::<8>().map_or(0, |b| u64::from_ne_bytes(*b));
    let w32 = ip[16..].first_chunk::<4>().map_or(0, |b| u32::from_ne_bytes(*b));
    fold(add_carry(add_carry(w64(0), w64(8)), u64::from(w32))) == 0xFFFF
}
