//! The virtio-net header that precedes each frame of a socket with PACKET_VNET_HDR (linux
//! `struct virtio_net_hdr`, in the host's byte order; libc does not define it): what the sender's
//! kernel left to the device, a checksum to finish or a super-frame to segment.

/// Bytes of the header.
pub(super) const LEN: usize = 10;

/// The checksum from `csum_start` on is partial: the field at `csum_start + csum_offset` holds the
/// pseudo-header sum.
pub(super) const F_NEEDS_CSUM: u8 = 1;
/// No segmentation.
pub(super) const GSO_NONE: u8 = 0;
/// TCP over IPv4, segment to `gso_size`.
pub(super) const GSO_TCPV4: u8 = 1;
/// UDP fragmentation offload (IPv4 fragments): not segmentable into datagrams.
pub(super) const GSO_UDP: u8 = 3;
/// TCP over IPv6.
pub(super) const GSO_TCPV6: u8 = 4;
/// UDP segmentation (UDP GSO): datagrams of `gso_size` payload bytes.
pub(super) const GSO_UDP_L4: u8 = 5;
/// The ECN bit that may be set along a TCP GSO type.
pub(super) const GSO_ECN: u8 = 0x80;

/// A parsed header.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct VnetHdr {
    pub flags: u8,
    pub gso_type: u8,
    pub gso_size: u16,
    pub csum_start: u16,
    pub csum_offset: u16,
}

impl VnetHdr {
    /// Reads the header from its 10 bytes.
    pub fn read(b: &[u8; LEN]) -> VnetHdr {
        let u16_at = |i: usize| u16::from_ne_bytes([b[i], b[i + 1]]);
        VnetHdr { flags: b[0], gso_type: b[1], gso_size: u16_at(4), csum_start: u16_at(6), csum_offset: u16_at(8) }
    }
}

/// The header sent in front of every frame: nothing for the device to do.
pub(super) const NONE: [u8; LEN] = [0; LEN];
