//! [`check`]: is this frame a tunnel packet for us, and where is its inner frame?
//!
//! Strict on purpose: a frame is decapsulated only when every outer header is well formed, whole,
//! addressed to our end and port, and consistent in its lengths. Anything else is not ours and the
//! caller drops or passes it whole; nothing is decapsulated on a guess.

use super::{Kind, GENEVE_C, GENEVE_ETHERNET, GENEVE_O, TUNNEL_HLEN, VXLAN_I};
use crate::cksum::wide::{add_carry, fold, sum};
use crate::field::{be16, eth, ipv4, ipv6, tag, udp};
use crate::proto;
use crate::{ethertype, ETH_HLEN};
use core::net::IpAddr;

/// What a frame must be for us to decapsulate it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expect {
    /// VXLAN or Geneve.
    pub kind: Kind,
    /// Our end: the outer destination address.
    pub local: IpAddr,
    /// Our UDP port: the outer destination port.
    pub dst_port: u16,
    /// Our network identifier; `None` accepts any.
    pub vni: Option<u32>,
    /// Whether an IPv6 packet with UDP checksum 0 is accepted (RFC 6935 allows it for tunnels;
    /// otherwise IPv6 requires a checksum). Over IPv4 a zero checksum is always accepted.
    pub zero_csum_v6: bool,
}

/// Where the inner frame of an accepted packet is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Found {
    /// Bytes of outer headers in front of the inner frame (tunnel options included).
    pub outer_len: usize,
    /// Length of the inner frame (Ethernet padding after the outer packet excluded).
    pub inner_len: usize,
    /// Outer Ethernet header with its tag, if any.
    pub outer_l2: u16,
    /// Outer IP header: 20 or 40.
    pub outer_l3: u16,
    /// The packet's network identifier.
    pub vni: u32,
}

/// Why a frame is not ours.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reject {
    /// Shorter than its headers.
    Truncated,
    /// Not IPv4 or IPv6 (after at most one 802.1Q tag).
    NotIp,
    /// IP version field not 4 (6), or IPv4 IHL below 5.
    BadIpHeader,
    /// IPv4 with options: tunnel endpoints do not send them, and we do not guess past them.
    IpOptions,
    /// IPv4 header checksum wrong.
    IpChecksum,
    /// IP length shorter than the headers it must hold, or longer than the frame.
    IpLength,
    /// An IPv4 fragment: the inner frame is not whole in this packet (reassembly is not done).
    Fragment,
    /// Not UDP (IPv6: an extension header before it counts as not UDP).
    NotUdp,
    /// Outer destination address is not our end, or of the other family.
    NotOurAddress,
    /// Outer UDP destination port is not ours.
    NotOurPort,
    /// UDP length differs from the IP payload length.
    UdpLength,
    /// UDP checksum present and wrong.
    UdpChecksum,
    /// IPv6 with UDP checksum 0 on a tunnel that requires checksums.
    ZeroChecksum,
    /// VXLAN without the I flag: no valid VNI.
    NoVni,
    /// Geneve version other than 0.
    GeneveVersion,
    /// Geneve control (OAM) packet: not data.
    GeneveControl,
    /// Geneve with critical options, which we do not process and so must not accept (RFC 8926,
    /// section 3.5).
    GeneveCritical,
    /// Geneve payload that is not Ethernet (protocol type other than 0x6558).
    NotEthernet,
    /// Another network identifier than ours.
    NotOurVni,
    /// The inner frame is shorter than an Ethernet header.
    InnerTooShort,
}

/// Checks `frame` against `e`; on success says where its inner frame is.
#[inline]
pub fn check(frame: &[u8], e: &Expect) -> Result<Found, Reject> {
    let (l2, etype) = outer_l2(frame)?;
    let ip = frame.get(l2..).ok_or(Reject::Truncated)?;
    let (l3, ip_len) = match (etype, e.local) {
        (ethertype::IPV4, IpAddr::V4(local)) => ipv4_ok(ip, local.octets())?,
        (ethertype::IPV6, IpAddr::V6(local)) => ipv6_ok(ip, local.octets())?,
        (ethertype::IPV4 | ethertype::IPV6, _) => return Err(Reject::NotOurAddress),
        _ => return Err(Reject::NotIp),
    };
    let seg = ip.get(l3..ip_len).ok_or(Reject::IpLength)?;
    udp_ok(seg, &ip[..l3], e)?;
    let t = &seg[udp::LEN..];
    let (hlen, vni) = match e.kind {
        Kind::Vxlan => vxlan_ok(t)?,
        Kind::Geneve => geneve_ok(t)?,
    };
    if e.vni.is_some_and(|v| v != vni) {
        return Err(Reject::NotOurVni);
    }
    let outer_len = l2 + l3 + udp::LEN + hlen;
    let inner_len = (l2 + ip_len).checked_sub(outer_len).filter(|&n| n >= ETH_HLEN).ok_or(Reject::InnerTooShort)?;
    Ok(Found { outer_len, inner_len, outer_l2: l2 as u16, outer_l3: l3 as u16, vni })
}

/// The outer L2 length (one 802.1Q tag at most) and the EtherType after it.
#[inline(always)]
fn outer_l2(frame: &[u8]) -> Result<(usize, u16), Reject> {
    let h = frame.first_chunk::<{ ETH_HLEN + tag::LEN }>().ok_or(Reject::Truncated)?;
    match be16(h, eth::ETHERTYPE) {
        ethertype::VLAN => Ok((ETH_HLEN + tag::LEN, be16(h, ETH_HLEN + tag::ETHERTYPE))),
        t => Ok((ETH_HLEN, t)),
    }
}

/// The IPv4 header length and the packet's total length, when it is a whole, unfragmented UDP
/// packet without options to `local` with a correct header checksum.
#[inline(always)]
fn ipv4_ok(ip: &[u8], local: [u8; 4]) -> Result<(usize, usize), Reject> {
    let h = ip.first_chunk::<{ ipv4::MIN_LEN }>().ok_or(Reject::Truncated)?;
    match h[ipv4::VER_IHL] {
        0x45 => {}
        0x46..=0x4F => return Err(Reject::IpOptions),
        _ => return Err(Reject::BadIpHeader),
    }
    if h[ipv4::DST..ipv4::DST + ipv4::ADDR_LEN] != local {
        return Err(Reject::NotOurAddress);
    }
    if h[ipv4::PROTOCOL] != proto::UDP {
        return Err(Reject::NotUdp);
    }
    if be16(h, ipv4::FLAGS_FRAG) & (ipv4::MORE_FRAGMENTS | ipv4::FRAG_OFFSET_MASK) != 0 {
        return Err(Reject::Fragment);
    }
    let total = usize::from(be16(h, ipv4::TOTAL_LEN));
    if total > ip.len() || total < ipv4::MIN_LEN + MIN_PAYLOAD {
        return Err(Reject::IpLength);
    }
    if fold(sum(h)) != 0xFFFF {
        return Err(Reject::IpChecksum);
    }
    Ok((ipv4::MIN_LEN, total))
}

/// The IPv6 header length and the packet's length, when it is a whole UDP packet (no extension
/// headers) to `local`.
#[inline(always)]
fn ipv6_ok(ip: &[u8], local: [u8; 16]) -> Result<(usize, usize), Reject> {
    let h = ip.first_chunk::<{ ipv6::LEN }>().ok_or(Reject::Truncated)?;
    if h[ipv6::VER] >> 4 != 6 {
        return Err(Reject::BadIpHeader);
    }
    let dst = ipv6::SRC + ipv6::ADDR_LEN;
    if h[dst..dst + ipv6::ADDR_LEN] != local {
        return Err(Reject::NotOurAddress);
    }
    if h[ipv6::NEXT_HEADER] != proto::UDP {
        return Err(Reject::NotUdp);
    }
    let total = ipv6::LEN + usize::from(be16(h, ipv6::PAYLOAD_LEN));
    if total > ip.len() || total < ipv6::LEN + MIN_PAYLOAD {
        return Err(Reject::IpLength);
    }
    Ok((ipv6::LEN, total))
}

/// Smallest IP payload that can be a tunnel packet: UDP, tunnel header, inner Ethernet header.
const MIN_PAYLOAD: usize = udp::LEN + TUNNEL_HLEN + ETH_HLEN;

/// Port, length and checksum of the UDP segment `seg` (the whole IP payload) behind `ip`.
#[inline(always)]
fn udp_ok(seg: &[u8], ip: &[u8], e: &Expect) -> Result<(), Reject> {
    let h = seg.first_chunk::<{ udp::LEN }>().ok_or(Reject::Truncated)?;
    if be16(h, 2) != e.dst_port {
        return Err(Reject::NotOurPort);
    }
    if usize::from(be16(h, udp::LENGTH)) != seg.len() {
        return Err(Reject::UdpLength);
    }
    if be16(h, udp::CHECKSUM) == 0 {
        let v6 = ip.len() == ipv6::LEN;
        return if v6 && !e.zero_csum_v6 { Err(Reject::ZeroChecksum) } else { Ok(()) };
    }
    if !udp_sum_ok(ip, seg) {
        return Err(Reject::UdpChecksum);
    }
    Ok(())
}

/// Whether the UDP checksum of `seg` (header and payload) behind the IP header `ip` (20 bytes of
/// IPv4 or the 40 of IPv6) is right.
#[inline(always)]
pub(super) fn udp_sum_ok(ip: &[u8], seg: &[u8]) -> bool {
    // The addresses end the IPv4 header and the IPv6 fixed header alike.
    let addr_len = if ip.len() == ipv6::LEN { ipv6::ADDR_LEN } else { ipv4::ADDR_LEN };
    let addrs = ip.get(ip.len().saturating_sub(2 * addr_len)..).unwrap_or_default();
    let pseudo = add_carry(add_carry(sum(addrs), u64::from(proto::UDP)), seg.len() as u64);
    fold(add_carry(pseudo, sum(seg))) == 0xFFFF
}

/// The VXLAN header's length and VNI.
#[inline(always)]
fn vxlan_ok(t: &[u8]) -> Result<(usize, u32), Reject> {
    let h = t.first_chunk::<TUNNEL_HLEN>().ok_or(Reject::Truncated)?;
    if h[0] & VXLAN_I == 0 {
        return Err(Reject::NoVni);
    }
    Ok((TUNNEL_HLEN, vni(h)))
}

/// The Geneve header's length (options included) and VNI.
#[inline(always)]
fn geneve_ok(t: &[u8]) -> Result<(usize, u32), Reject> {
    let h = t.first_chunk::<TUNNEL_HLEN>().ok_or(Reject::Truncated)?;
    if h[0] >> 6 != 0 {
        return Err(Reject::GeneveVersion);
    }
    if h[1] & GENEVE_O != 0 {
        return Err(Reject::GeneveControl);
    }
    if h[1] & GENEVE_C != 0 {
        return Err(Reject::GeneveCritical);
    }
    if be16(h, 2) != GENEVE_ETHERNET {
        return Err(Reject::NotEthernet);
    }
    Ok((TUNNEL_HLEN + usize::from(h[0] & 0x3F) * 4, vni(h)))
}

#[inline(always)]
fn vni(h: &[u8; TUNNEL_HLEN]) -> u32 {
    u32::from_be_bytes([0, h[4], h[5], h[6]])
}
