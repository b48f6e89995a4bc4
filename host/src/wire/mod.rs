//! Zero-copy header access on frame bytes: parse once, then work on known offsets.
//!
//! PLACEHOLDER signatures; bodies land with the wire module.
#![allow(clippy::unimplemented)]

/// Ethernet header length without tags.
pub const ETH_HLEN: usize = 14;

/// EtherTypes the dataplane understands.
pub mod ethertype {
    /// IPv4.
    pub const IPV4: u16 = 0x0800;
    /// IPv6.
    pub const IPV6: u16 = 0x86DD;
    /// ARP.
    pub const ARP: u16 = 0x0806;
    /// 802.1Q VLAN tag.
    pub const VLAN: u16 = 0x8100;
    /// 802.1ad service tag (QinQ outer).
    pub const QINQ: u16 = 0x88A8;
}

/// The network layer of a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum L3 {
    /// Not IP, or truncated.
    #[default]
    Other,
    /// IPv4 with a valid IHL that fits the frame.
    Ipv4,
    /// IPv6 with a complete fixed header.
    Ipv6,
}

/// Where the headers of a frame are, found by [`parse`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Headers {
    /// Ethernet header plus VLAN tags; 0 when the frame is shorter than 14 bytes.
    pub l2_len: u16,
    /// Number of VLAN/QinQ tags skipped (at most 2).
    pub vlans: u8,
    /// The network layer found.
    pub l3: L3,
    /// IPv4 header with options, or 40 for IPv6; 0 for `L3::Other`.
    pub l3_len: u16,
    /// IP protocol / IPv6 next header (6 TCP, 17 UDP, ...), 0 when unknown.
    pub l4_proto: u8,
    /// TCP header length (data offset) or 8 for UDP, when the whole L4 header is in the frame; else 0.
    pub l4_len: u8,
}

/// Finds the headers of an Ethernet frame. Never panics; anything truncated or unknown stops the walk.
pub fn parse(frame: &[u8]) -> Headers {
    let _ = frame;
    unimplemented!()
}

/// Swaps MACs, then IPv4/IPv6 addresses, then TCP/UDP ports (testpmd's 5tswap), skipping VLAN/QinQ
/// tags. Swaps as much as the frame validly holds; frames shorter than 14 bytes are left unchanged.
pub fn swap_five_tuple(frame: &mut [u8]) {
    let _ = frame;
    unimplemented!()
}

/// Writes the IPv4 header checksum. Returns false (frame unchanged) unless `h.l3 == Ipv4`.
pub fn fill_ipv4_cksum(frame: &mut [u8], h: &Headers) -> bool {
    let _ = (frame, h);
    unimplemented!()
}

/// Writes the TCP or UDP checksum (with the IPv4/IPv6 pseudo-header) when `h.l4_proto` is TCP or UDP
/// and the whole segment is in the frame (per the IP length field, clamped to the frame). Returns
/// false (frame unchanged) otherwise.
pub fn fill_l4_cksum(frame: &mut [u8], h: &Headers) -> bool {
    let _ = (frame, h);
    unimplemented!()
}

/// Turns `frame`, whose first 4 bytes were just prepended (garbage), into the same frame with a tag
/// `tpid`/`tci` inserted after the MAC addresses: moves the 12 MAC bytes to the front and writes the
/// tag at 12..16. Does nothing if `frame` is shorter than 16 bytes.
pub fn insert_tag(frame: &mut [u8], tpid: u16, tci: u16) {
    let _ = (frame, tpid, tci);
    unimplemented!()
}

/// What a generated UDP frame looks like (the null/ring port template and the txonly engine).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameSpec {
    /// Frame length in bytes without FCS, 60..=9000 (tags included).
    pub size: usize,
    /// Destination MAC.
    pub dst_mac: [u8; 6],
    /// Source MAC.
    pub src_mac: [u8; 6],
    /// Source IPv4 address.
    pub src_ip: [u8; 4],
    /// Destination IPv4 address.
    pub dst_ip: [u8; 4],
    /// UDP source port (the first flow's).
    pub src_port: u16,
    /// UDP destination port.
    pub dst_port: u16,
    /// 802.1Q TCI to tag the frame with, if any.
    pub vlan: Option<u16>,
}

/// Builds a valid Ethernet/[802.1Q]/IPv4/UDP frame of exactly `spec.size` bytes, with correct IPv4
/// header checksum and UDP checksum, payload bytes counting up from 0.
pub fn build_udp(spec: &FrameSpec) -> Vec<u8> {
    let _ = spec;
    unimplemented!()
}

/// Offset of the UDP source port in a frame built by [`build_udp`] with this spec.
pub fn udp_src_port_offset(spec: &FrameSpec) -> usize {
    ETH_HLEN + if spec.vlan.is_some() { 4 } else { 0 } + 20
}
