//! [`Matcher`]: [`check()`] with a fast path for the common packet: untagged, IPv4 without options,
//! IPv6 without extension headers, Geneve without options. Its fixed bytes (EtherType, IP version,
//! no fragment bits, protocol, our address, our port, the tunnel flags, our VNI) are compared with a
//! prebuilt pattern, 16 bytes at a time under a mask; then the lengths and the checksums. Anything the fast path does not accept goes
//! to [`check()`], which decides (and says why): the fast path never accepts what `check` refuses.

use super::check::udp_sum_ok;
use super::lane::{lane, lane_at, lanes, masked_eq, Lane, CHUNK, WIDE};
#[cfg(target_arch = "x86_64")]
use super::lane::{wide_diff, wide_is_zero, wide_of, wide_or, Wide};
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
    /// The same in 32-byte chunks.
    #[cfg(target_arch = "x86_64")]
    wide: WidePattern,
    v6: bool,
}

impl Matcher {
    /// The matcher for `expect`.
    pub fn new(expect: Expect) -> Matcher {
        let v6 = expect.local.is_ipv6();
        let mut bytes = PatternBytes { mask: [0; ROOM], value: [0; ROOM] };
        bytes.build(&expect);
        let n = if v6 { OUTER_LEN_V6 } else { OUTER_LEN_V4 };
        Matcher {
            expect,
            pattern: Pattern::new(&bytes, n),
            #[cfg(target_arch = "x86_64")]
            wide: WidePattern::new(&bytes, n),
            v6,
        }
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

    /// The fast path for outer headers of `N` bytes with an IP header of `L3` bytes, their fixed
    /// bytes compared with `fixed`: every offset a constant, so the compiler checks the frame's length
    /// once.
    ///
    /// It takes frames that the IP packet fills exactly (no Ethernet padding or trailer: an
    /// encapsulated frame has 64 bytes or more, so it never needs padding), and so compares each
    /// length field with what the frame's length makes it, in the header's byte order (a swap of a
    /// register, no load of a field to swap). Others take [`check()`].
    #[inline(always)]
    fn fast_n<const N: usize, const L3: usize>(&self, fixed: &impl Fixed, frame: &[u8]) -> Option<Found> {
        let len = frame.len();
        // An inner frame of 14 bytes or more, and every length below fits its 16-bit field.
        if !(N + ETH_HLEN..=ETH_HLEN + usize::from(u16::MAX)).contains(&len) {
            return None;
        }
        let head = frame.first_chunk::<N>()?;
        let ip_len = len - ETH_HLEN;
        let l4 = ETH_HLEN + L3;
        let udp_len = ip_len - L3;
        // IPv6 gives the payload's length (the UDP datagram), IPv4 the whole packet's.
        let (at, ip_field) = if L3 == ipv6::LEN { (ipv6::PAYLOAD_LEN, udp_len) } else { (ipv4::TOTAL_LEN, ip_len) };
        // The fields read one by one come first: after the wide loads of the fixed bytes, the
        // compiler would take them out of those vector registers (more instructions than a load).
        let udp_sum = ne16(head, l4 + udp::CHECKSUM);
        let ok = ne16(head, ETH_HLEN + at) == (ip_field as u16).to_be()
            && ne16(head, l4 + udp::LENGTH) == (udp_len as u16).to_be()
            && (L3 != ipv4::MIN_LEN || ipv4_sum_ok(head))
            && fixed.matches(head);
        if !ok {
            return None;
        }
        let sum_ok = match udp_sum {
            0 => L3 == ipv4::MIN_LEN || self.expect.zero_csum_v6,
            _ => udp_sum_ok(&head[ETH_HLEN..l4], &frame[l4..]),
        };
        // The VNI is the top three bytes of the header's second word.
        let t = N - TUNNEL_HLEN;
        let vni = u32::from_be_bytes([head[t + 4], head[t + 5], head[t + 6], head[t + 7]]) >> 8;
        sum_ok.then_some(Found {
            outer_len: N,
            inner_len: len - N,
            outer_l2: ETH_HLEN as u16,
            outer_l3: L3 as u16,
            vni,
        })
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
/// its patterns by value, so that a loop keeps them in registers rather than loading them from the
/// matcher for every packet (which the compiler must, as packet stores might alias it).
#[derive(Debug, Clone, Copy)]
pub struct FastPath<'a, const V6: bool> {
    matcher: &'a Matcher,
    pattern: Pattern,
    #[cfg(target_arch = "x86_64")]
    wide: WidePattern,
}

impl<'a, const V6: bool> FastPath<'a, V6> {
    #[inline(always)]
    fn new(matcher: &'a Matcher) -> Self {
        FastPath {
            matcher,
            pattern: matcher.pattern,
            #[cfg(target_arch = "x86_64")]
            wide: matcher.wide,
        }
    }

    /// As [`Matcher::fast`].
    #[inline(always)]
    pub fn fast(&self, frame: &[u8]) -> Option<Found> {
        self.fast_with(&self.pattern, frame)
    }

    /// As [`FastPath::fast`], the fixed bytes compared 32 at a time (two loads, compares and
    /// tests fewer a packet than 16 at a time), for code compiled with AVX2.
    ///
    /// # Safety
    /// The CPU has AVX2.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    pub unsafe fn fast_avx2(&self, frame: &[u8]) -> Option<Found> {
        self.fast_with(&Avx2(&self.wide), frame)
    }

    #[inline(always)]
    fn fast_with(&self, fixed: &impl Fixed, frame: &[u8]) -> Option<Found> {
        if V6 {
            self.matcher.fast_n::<{ OUTER_LEN_V6 }, { ipv6::LEN }>(fixed, frame)
        } else {
            self.matcher.fast_n::<{ OUTER_LEN_V4 }, { ipv4::MIN_LEN }>(fixed, frame)
        }
    }
}

/// Where a pattern's fixed bytes begin: the EtherType (no MAC is compared), so that the chunks
/// start there and one fewer covers the outer headers (three of 16 bytes for IPv4's 50, not four).
const FIRST: usize = eth::ETHERTYPE;

/// The u16 at `at` of a header whose length is known, in the header's byte order.
#[inline(always)]
fn ne16<const N: usize>(head: &[u8; N], at: usize) -> u16 {
    u16::from_ne_bytes([head[at], head[at + 1]])
}

/// How many chunks of `width` bytes cover bytes `FIRST..n` ([`lanes`]).
const fn chunks(width: usize, n: usize) -> usize {
    lanes(width, FIRST, n)
}

/// Where chunk `i` of `width` bytes of a pattern of `n` bytes starts.
const fn chunk_at(width: usize, n: usize, i: usize) -> usize {
    lane_at(width, FIRST, n, i)
}

/// Chunk `i` of `W` bytes of a pattern of `n` bytes, out of `b` (the unused chunks of a shorter
/// pattern: any bytes of `b`).
fn chunk_bytes<const W: usize>(b: &[u8; ROOM], n: usize, i: usize) -> [u8; W] {
    b[chunk_at(W, n, i).min(ROOM - W)..].first_chunk::<W>().map_or([0; W], |c| *c)
}

/// The `W` bytes of `head` at `at`, an offset the caller's constants keep inside it.
#[inline(always)]
fn head_chunk<const W: usize, const N: usize>(head: &[u8; N], at: usize) -> [u8; W] {
    head[at..].first_chunk::<W>().map_or([0xA5; W], |c| *c)
}

/// A comparison of a frame's fixed bytes with a pattern.
trait Fixed {
    /// Whether `head` (the `N` bytes the pattern was made for) equals the pattern's value wherever
    /// its mask is set. Every offset is a constant.
    fn matches<const N: usize>(&self, head: &[u8; N]) -> bool;
}

/// Most 16-byte chunks a pattern has: the longest outer headers'.
const CHUNKS: usize = chunks(CHUNK, OUTER_LEN_V6);

/// A matcher's mask and value for outer headers of one length, in 16-byte [`chunks`]; the chunks
/// past that length are unused.
#[derive(Debug, Clone, Copy)]
struct Pattern {
    mask: [Lane; CHUNKS],
    value: [Lane; CHUNKS],
}

impl Pattern {
    fn new(bytes: &PatternBytes, n: usize) -> Pattern {
        let chunk = |b: &[u8; ROOM], i: usize| lane(&chunk_bytes::<CHUNK>(b, n, i));
        Pattern {
            mask: core::array::from_fn(|i| chunk(&bytes.mask, i)),
            value: core::array::from_fn(|i| chunk(&bytes.value, i)),
        }
    }
}

impl Fixed for Pattern {
    #[inline(always)]
    fn matches<const N: usize>(&self, head: &[u8; N]) -> bool {
        let mut all = true;
        for i in 0..chunks(CHUNK, N).min(CHUNKS) {
            all &= masked_eq(lane(&head_chunk(head, chunk_at(CHUNK, N, i))), self.mask[i], self.value[i]);
        }
        all
    }
}

/// Most 32-byte chunks a pattern has (two, for either family).
#[cfg(target_arch = "x86_64")]
const WIDE_CHUNKS: usize = chunks(WIDE, OUTER_LEN_V6);

/// A [`Pattern`] in 32-byte chunks, for AVX2.
#[cfg(target_arch = "x86_64")]
#[derive(Debug, Clone, Copy)]
struct WidePattern {
    mask: [Wide; WIDE_CHUNKS],
    value: [Wide; WIDE_CHUNKS],
}

#[cfg(target_arch = "x86_64")]
impl WidePattern {
    fn new(bytes: &PatternBytes, n: usize) -> WidePattern {
        let chunk = |b: &[u8; ROOM], i: usize| wide_of(chunk_bytes::<WIDE>(b, n, i));
        WidePattern {
            mask: core::array::from_fn(|i| chunk(&bytes.mask, i)),
            value: core::array::from_fn(|i| chunk(&bytes.value, i)),
        }
    }
}

/// A [`WidePattern`] that may be used: made only by [`FastPath::fast_avx2`], whose caller
/// guarantees AVX2.
#[cfg(target_arch = "x86_64")]
struct Avx2<'p>(&'p WidePattern);

#[cfg(target_arch = "x86_64")]
impl Fixed for Avx2<'_> {
    /// The differences under the mask of every chunk ORed, then one test (`vptest`).
    #[inline(always)]
    fn matches<const N: usize>(&self, head: &[u8; N]) -> bool {
        let p = self.0;
        let diff = |i: usize| {
            let h = wide_of(head_chunk(head, chunk_at(WIDE, N, i)));
            // SAFETY: an `Avx2` exists only inside `fast_avx2`, whose caller guarantees AVX2.
            unsafe { wide_diff(h, p.mask[i], p.value[i]) }
        };
        let mut acc = diff(0);
        for i in 1..chunks(WIDE, N).min(WIDE_CHUNKS) {
            // SAFETY: as above.
            acc = unsafe { wide_or(acc, diff(i)) };
        }
        // SAFETY: as above.
        unsafe { wide_is_zero(acc) }
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
    let last = ip[16..].first_chunk::<4>().map_or(0, |b| u64::from(u32::from_ne_bytes(*b)));
    folds_to_ones(add_carry(add_carry(w64(0), w64(8)), last))
}
