//! The two metadata cache lines at the start of every buffer.

/// Bytes of metadata in front of the headroom: two cache lines.
pub const META_SIZE: usize = 128;

/// First cache line: everything the forwarding path reads or writes per packet.
#[repr(C, align(64))]
#[derive(Debug, Clone, Copy)]
pub struct Meta {
    /// Offload flags, see [`crate::mbuf::flags`].
    pub ol_flags: u64,
    /// Total packet length (single-segment buffers: equal to `data_len`).
    pub pkt_len: u32,
    /// Bytes of data in this buffer.
    pub data_len: u16,
    /// Offset of the first data byte from the start of the headroom.
    pub data_off: u16,
    /// Headroom plus data room: the bytes available after the metadata. Fixed per pool.
    pub buf_len: u16,
    /// Port the packet was received on.
    pub port: u16,
    /// Queue the packet was received on.
    pub queue: u16,
    /// Inner (or only) VLAN TCI to insert on TX with `TX_VLAN`/`TX_QINQ`.
    pub vlan_tci: u16,
    /// Outer VLAN TCI to insert on TX with `TX_QINQ`.
    pub vlan_tci_outer: u16,
    /// L2 header length (Ethernet plus VLAN tags).
    pub l2_len: u8,
    /// L4 header length, when known.
    pub l4_len: u8,
    /// L3 header length (IPv4 with options, IPv6 fixed header).
    pub l3_len: u16,
    /// Packet type as parsed by the last engine that looked (see `crate::wire::L3`), 0 if unknown.
    pub packet_type: u32,
    /// Flow hash (RSS-like), 0 if not computed.
    pub hash: u32,
    /// The packet's index in the burst a plugin sees, while a plugin runs an engine on part of a
    /// burst: engines that replace or reorder packets carry it, so the host can keep the plugin's
    /// indexes stable.
    pub slot: u16,
}

/// Second cache line: tunnel and flow metadata, touched only by engines and plugins that use it.
///
/// Not reset when a buffer is reused (that would touch the line for every packet): the tunnel fields
/// are meaningful when `ol_flags` has `RX_TUNNEL` (a decapsulation recorded them) or, after an
/// encapsulation, until the packet is transmitted.
#[repr(C, align(64))]
#[derive(Debug, Clone, Copy, Default)]
pub struct FlowMeta {
    /// Outer L2 length of a tunnelled packet.
    pub outer_l2_len: u16,
    /// Outer L3 length of a tunnelled packet.
    pub outer_l3_len: u16,
    /// Tunnel type, 0 for none (`wire::tunnel::Kind::tunnel_type`: 1 VXLAN, 2 Geneve).
    pub tunnel_type: u32,
    /// Tunnel network identifier (VNI).
    pub tunnel_id: u32,
    /// Flow identifier assigned by a classifier.
    pub flow_id: u32,
    /// Mark set by a policy.
    pub mark: u32,
    /// RX timestamp in nanoseconds, 0 if not taken.
    pub timestamp_ns: u64,
    /// Free for engines and plugins.
    pub user: u64,
}

/// The bytes of a [`Meta`] its fields lie in (`slot` is the last), rounded up to 16: a receive
/// path that makes a header a fresh packet's from a template writes these, not the padding after.
pub const META_FIELDS: usize = (std::mem::offset_of!(Meta, slot) + std::mem::size_of::<u16>()).next_multiple_of(16);
const _: () = assert!(META_FIELDS <= std::mem::size_of::<Meta>());

impl Meta {
    /// Metadata of a freshly allocated, empty buffer.
    pub const fn empty(buf_len: u16, headroom: u16) -> Self {
        Meta {
            ol_flags: 0,
            pkt_len: 0,
            data_len: 0,
            data_off: headroom,
            buf_len,
            port: 0,
            queue: 0,
            vlan_tci: 0,
            vlan_tci_outer: 0,
            l2_len: 0,
            l4_len: 0,
            l3_len: 0,
            packet_type: 0,
            hash: 0,
            slot: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_metadata_block_is_one_cache_line() {
        assert_eq!(core::mem::size_of::<Meta>(), 64);
        assert_eq!(core::mem::size_of::<FlowMeta>(), 64);
        assert_eq!(core::mem::size_of::<Meta>() + core::mem::size_of::<FlowMeta>(), META_SIZE);
    }
}
