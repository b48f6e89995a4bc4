//! [`Outer`]: the outer headers of one tunnel, built once from the config, then copied in front of
//! each packet with its lengths, source port and checksums patched.

use super::lane::{lane, lane_at, lanes, store, Lane, CHUNK};
use super::{Kind, Underlay, GENEVE_ETHERNET, OUTER_LEN_V4, OUTER_LEN_V6, TUNNEL_HLEN, VXLAN_I};
use crate::cksum::wide::{add_carry, fold, sum};
use crate::field::{eth, ipv4, ipv6, put_be16, put_bytes, udp};
use crate::proto;
use crate::{ethertype, ETH_HLEN};
#[cfg(feature = "alloc")]
use alloc::{format, string::String};
use core::net::IpAddr;

/// What the outer headers say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OuterSpec {
    /// VXLAN or Geneve.
    pub kind: Kind,
    /// Outer source MAC (the TX port's).
    pub src_mac: [u8; 6],
    /// Outer destination MAC (the next hop: the TX port's peer).
    pub dst_mac: [u8; 6],
    /// Outer source address (our end).
    pub src_ip: IpAddr,
    /// Outer destination address (the far end); the same family as `src_ip`.
    pub dst_ip: IpAddr,
    /// UDP destination port.
    pub dst_port: u16,
    /// Network identifier, 24 bits.
    pub vni: u32,
    /// IPv4 TTL / IPv6 hop limit.
    pub ttl: u8,
    /// Whether to compute the UDP checksum (else 0, allowed over IPv4 and, for tunnels, over IPv6
    /// by RFC 6935).
    pub udp_checksum: bool,
}

/// Prebuilt outer headers.
#[derive(Debug, Clone)]
pub struct Outer {
    bytes: [u8; OUTER_LEN_V6],
    v6: bool,
    /// IPv4: one's complement sum of the header with length and checksum zero, folded to 16 bits
    /// (so that adding a 16-bit length is one add with its end-around carry), in the header's byte order (the
    /// value its two bytes read natively), as the length is added to it.
    ip_sum: u16,
    /// Sum of the UDP pseudo-header without its length field.
    pseudo: u64,
    udp_checksum: bool,
    kind: Kind,
    vni: u32,
}

impl Outer {
    /// Builds the headers; fails when the addresses are of different families or the VNI does not
    /// fit 24 bits.
    #[cfg(feature = "alloc")]
    pub fn new(s: &OuterSpec) -> Result<Outer, String> {
        if s.vni >= 1 << 24 {
            return Err(format!("vni {} does not fit 24 bits (0..=16777215)", s.vni));
        }
        let mut b = [0u8; OUTER_LEN_V6];
        put_bytes(&mut b, eth::DST, &s.dst_mac);
        put_bytes(&mut b, eth::SRC, &s.src_mac);
        let (l3_len, v6, addrs) = match (s.src_ip, s.dst_ip) {
            (IpAddr::V4(src), IpAddr::V4(dst)) => {
                put_be16(&mut b, eth::ETHERTYPE, ethertype::IPV4);
                let ip = &mut b[ETH_HLEN..];
                ip[ipv4::VER_IHL] = 0x45;
                put_be16(ip, ipv4::FLAGS_FRAG, DONT_FRAGMENT);
                ip[ipv4::TTL] = s.ttl;
                ip[ipv4::PROTOCOL] = proto::UDP;
                put_bytes(ip, ipv4::SRC, &src.octets());
                put_bytes(ip, ipv4::DST, &dst.octets());
                (ipv4::MIN_LEN, false, [&src.octets()[..], &dst.octets()[..]].concat())
            }
            (IpAddr::V6(src), IpAddr::V6(dst)) => {
                put_be16(&mut b, eth::ETHERTYPE, ethertype::IPV6);
                let ip = &mut b[ETH_HLEN..];
                ip[ipv6::VER] = 0x60;
                ip[ipv6::NEXT_HEADER] = proto::UDP;
                ip[ipv6::HOP_LIMIT] = s.ttl;
                put_bytes(ip, ipv6::SRC, &src.octets());
                put_bytes(ip, ipv6::SRC + ipv6::ADDR_LEN, &dst.octets());
                (ipv6::LEN, true, [&src.octets()[..], &dst.octets()[..]].concat())
            }
            _ => {
                return Err(format!(
                    "local and remote addresses {} and {} are of different families",
                    s.src_ip, s.dst_ip
                ))
            }
        };
        let at = ETH_HLEN + l3_len;
        put_be16(&mut b, at + 2, s.dst_port);
        write_tunnel_header(&mut b[at + udp::LEN..], s.kind, s.vni);
        let ip_sum = if v6 { 0 } else { fold(sum(&b[ETH_HLEN..ETH_HLEN + ipv4::MIN_LEN])).to_be() };
        let pseudo = add_carry(sum(&addrs), u64::from(proto::UDP));
        Ok(Outer { bytes: b, v6, ip_sum, pseudo, udp_checksum: s.udp_checksum, kind: s.kind, vni: s.vni })
    }

    /// Bytes the encapsulation adds: 50 over IPv4, 70 over IPv6.
    #[inline(always)]
    pub fn len(&self) -> usize {
        if self.v6 {
            OUTER_LEN_V6
        } else {
            OUTER_LEN_V4
        }
    }

    /// Always false: there are always headers.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Outer IP header length: 20 or 40.
    #[inline(always)]
    pub fn l3_len(&self) -> usize {
        if self.v6 {
            ipv6::LEN
        } else {
            ipv4::MIN_LEN
        }
    }

    /// Whether the underlay is IPv6.
    pub fn is_v6(&self) -> bool {
        self.v6
    }

    /// The tunnel.
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// The network identifier.
    pub fn vni(&self) -> u32 {
        self.vni
    }

    /// The headers as built (lengths, source port and checksums zero).
    pub fn bytes(&self) -> &[u8] {
        &self.bytes[..self.len()]
    }

    /// The writer with the underlay family fixed at compile time, for a loop that asks once per
    /// burst rather than once per packet.
    #[inline(always)]
    pub fn family(&self) -> Underlay<OuterWriter<'_, false>, OuterWriter<'_, true>> {
        Underlay::pick(self.v6, || OuterWriter::new(self), || OuterWriter::new(self))
    }

    /// Writes the outer headers over the first [`Outer::len`] bytes of `frame`, whose rest is the
    /// inner frame: lengths from `frame.len()`, the UDP source port, the IPv4 header checksum unless
    /// `ip_cksum_later` (a TX offload fills it), the UDP checksum when configured. Does nothing when
    /// `frame` is shorter than the headers or longer than IP allows.
    #[inline(always)]
    pub fn write(&self, frame: &mut [u8], src_port: u16, ip_cksum_later: bool) {
        if self.v6 {
            self.write_n::<{ OUTER_LEN_V6 }, { ipv6::LEN }>(frame, src_port, ip_cksum_later);
        } else {
            self.write_n::<{ OUTER_LEN_V4 }, { ipv4::MIN_LEN }>(frame, src_port, ip_cksum_later);
        }
    }

    /// [`Outer::write`] for `N` bytes of headers with an IP header of `L3` bytes: constant offsets,
    /// one length check, the copy a few vector moves.
    #[inline(always)]
    fn write_n<const N: usize, const L3: usize>(&self, frame: &mut [u8], src_port: u16, ip_cksum_later: bool) {
        let copy = |h: &mut [u8; N]| h.copy_from_slice(&self.bytes[..N]);
        self.patch_n::<N, L3>(frame, src_port, ip_cksum_later, self.ip_sum, self.udp_checksum, copy);
    }

    /// [`Outer::write_n`] with the headers' bytes put in place by `copy`, and the IPv4 header's
    /// partial sum and whether to fill the UDP checksum given (a writer's copies of them, which a
    /// loop keeps in registers).
    #[inline(always)]
    fn patch_n<const N: usize, const L3: usize>(
        &self,
        frame: &mut [u8],
        src_port: u16,
        ip_cksum_later: bool,
        ip_sum: u16,
        udp_checksum: bool,
        copy: impl FnOnce(&mut [u8; N]),
    ) {
        let Ok(ip_len) = u16::try_from(frame.len().wrapping_sub(ETH_HLEN)) else { return };
        let Some(h) = frame.first_chunk_mut::<N>() else { return };
        copy(h);
        // Cannot underflow: the frame holds the whole outer header.
        let udp_len = ip_len - L3 as u16;
        let set = |h: &mut [u8; N], at: usize, v: u16| [h[at], h[at + 1]] = v.to_be_bytes();
        if L3 == ipv6::LEN {
            set(h, ETH_HLEN + ipv6::PAYLOAD_LEN, udp_len);
        } else {
            // The length and the checksum in the header's byte order (the values their bytes read
            // natively): a one's complement sum is the same whichever order its words' bytes are
            // in (RFC 1071), so the length is swapped once, for both, and the sum not at all.
            let len = ip_len.to_be();
            let set_ne = |h: &mut [u8; N], at: usize, v: u16| [h[at], h[at + 1]] = v.to_ne_bytes();
            set_ne(h, ETH_HLEN + ipv4::TOTAL_LEN, len);
            if !ip_cksum_later {
                // A 16-bit add with its end-around carry (`ip_sum` is the folded sum).
                let (s, carry) = ip_sum.overflowing_add(len);
                set_ne(h, ETH_HLEN + ipv4::CHECKSUM, !(s + u16::from(carry)));
            }
        }
        let u = ETH_HLEN + L3;
        // One 16-bit store: written as two bytes, the compiler kept them two.
        h[u..u + 2].copy_from_slice(&src_port.to_be_bytes());
        set(h, u + udp::LENGTH, udp_len);
        if udp_checksum {
            let seg = &frame[u..];
            let c = !fold(add_carry(add_carry(self.pseudo, u64::from(udp_len)), sum(seg)));
            let c = if c == 0 { 0xFFFF } else { c };
            if let Some(h) = frame.first_chunk_mut::<N>() {
                set(h, u + udp::CHECKSUM, c);
            }
        }
    }
}

/// [`Outer::write`] for one underlay family (`V6`), which only [`Outer::family`] makes. It holds
/// the headers' bytes in lanes and the IPv4 header's partial sum by value, so that a loop keeps
/// them in registers and stores them, rather than loading them from the [`Outer`] for every packet
/// (which the compiler must, as packet stores might alias it).
#[derive(Debug, Clone, Copy)]
pub struct OuterWriter<'a, const V6: bool> {
    outer: &'a Outer,
    head: [Lane; HEAD_LANES],
    ip_sum: u16,
    udp_checksum: bool,
}

/// Lanes that cover the longest outer headers, the last ending where they end.
const HEAD_LANES: usize = lanes(CHUNK, 0, OUTER_LEN_V6);

impl<'a, const V6: bool> OuterWriter<'a, V6> {
    #[inline(always)]
    fn new(outer: &'a Outer) -> Self {
        let n = if V6 { OUTER_LEN_V6 } else { OUTER_LEN_V4 };
        let k = lanes(CHUNK, 0, n);
        let head = core::array::from_fn(|i| {
            let at = lane_at(CHUNK, 0, n, i.min(k - 1));
            outer.bytes[at..].first_chunk::<CHUNK>().map_or(lane(&[0; CHUNK]), lane)
        });
        OuterWriter { outer, head, ip_sum: outer.ip_sum, udp_checksum: outer.udp_checksum }
    }

    /// Stores the headers' lanes over `h`, the `N` bytes of outer headers.
    #[inline(always)]
    fn copy<const N: usize>(&self, h: &mut [u8; N]) {
        for i in 0..lanes(CHUNK, 0, N).min(HEAD_LANES) {
            if let Some(c) = h[lane_at(CHUNK, 0, N, i)..].first_chunk_mut::<CHUNK>() {
                store(c, self.head[i]);
            }
        }
    }

    /// As [`Outer::len`], a constant: the bytes the encapsulation adds.
    #[inline(always)]
    pub fn added(self) -> usize {
        if V6 {
            OUTER_LEN_V6
        } else {
            OUTER_LEN_V4
        }
    }

    /// Whether [`OuterWriter::write`] fills the UDP checksum (the tunnel's `checksums`), for a loop
    /// that branches once on it rather than for every packet.
    #[inline(always)]
    pub fn udp_checksum(&self) -> bool {
        self.udp_checksum
    }

    /// As [`Outer::write`].
    #[inline(always)]
    pub fn write(self, frame: &mut [u8], src_port: u16, ip_cksum_later: bool) {
        const L6: usize = OUTER_LEN_V6;
        const L4: usize = OUTER_LEN_V4;
        let (later, sum, udp) = (ip_cksum_later, self.ip_sum, self.udp_checksum);
        if V6 {
            let copy = |h: &mut [u8; L6]| self.copy(h);
            self.outer.patch_n::<L6, { ipv6::LEN }>(frame, src_port, later, sum, udp, copy);
        } else {
            let copy = |h: &mut [u8; L4]| self.copy(h);
            self.outer.patch_n::<L4, { ipv4::MIN_LEN }>(frame, src_port, later, sum, udp, copy);
        }
    }
}

/// IPv4 flags: Don't Fragment. An encapsulated frame that does not fit the path is dropped, not
/// fragmented: the far end would have to reassemble at line rate (RFC 7348, section 4.3).
const DONT_FRAGMENT: u16 = 0x4000;

/// The 8-byte VXLAN or Geneve header (Geneve: version 0, no options, Ethernet payload).
fn write_tunnel_header(h: &mut [u8], kind: Kind, vni: u32) {
    let Some(h) = h.first_chunk_mut::<TUNNEL_HLEN>() else { return };
    match kind {
        Kind::Vxlan => h[0] = VXLAN_I,
        Kind::Geneve => put_be16(h, 2, GENEVE_ETHERNET),
    }
    put_bytes(h, 4, &vni.to_be_bytes()[1..]);
}
