//! Per-packet offload flags (`ol_flags`), bit-compatible in meaning (not in position) with DPDK's
//! `RTE_MBUF_F_*`. The TX flags ask the port to do something at transmit time; software ports do it
//! in software (see `crate::offload`). The TX bits plugins may request come from `wasmdp_abi`, so
//! the host and the SDK cannot disagree on them.

/// The buffer is attached to another buffer's data (kept across engines, as testpmd does).
pub const ATTACHED_INDIRECT: u64 = 1 << 0;
/// The buffer's data is external memory (kept across engines, as testpmd does).
pub const ATTACHED_EXTERNAL: u64 = 1 << 1;
/// Flags that describe the buffer itself, not the packet: engines keep these and reset the rest.
pub const ATTACH_MASK: u64 = ATTACHED_INDIRECT | ATTACHED_EXTERNAL;

/// RX: the packet carried a VLAN tag (informational).
pub const RX_VLAN: u64 = 1 << 8;
/// RX: a tunnel engine decapsulated the packet; its `FlowMeta` holds the outer lengths, the tunnel
/// type and the VNI it had.
pub const RX_TUNNEL: u64 = 1 << 9;

/// TX: insert an 802.1Q tag with `vlan_tci`.
pub const TX_VLAN: u64 = wasmdp_abi::flags::TX_VLAN;
/// TX: insert an 802.1ad outer tag with `vlan_tci_outer` and an 802.1Q inner tag with `vlan_tci`.
pub const TX_QINQ: u64 = wasmdp_abi::flags::TX_QINQ;
/// TX: insert a MACsec SecTAG (software ports refuse it at configuration time).
pub const TX_MACSEC: u64 = wasmdp_abi::flags::TX_MACSEC;
/// TX: fill the IPv4 header checksum.
pub const TX_IP_CKSUM: u64 = wasmdp_abi::flags::TX_IP_CKSUM;
/// TX: fill the UDP checksum.
pub const TX_UDP_CKSUM: u64 = wasmdp_abi::flags::TX_UDP_CKSUM;
/// TX: fill the TCP checksum.
pub const TX_TCP_CKSUM: u64 = wasmdp_abi::flags::TX_TCP_CKSUM;
/// The packet is IPv4 (set with the checksum flags, as DPDK requires).
pub const TX_IPV4: u64 = 1 << 46;
/// The packet is IPv6 (set with the checksum flags).
pub const TX_IPV6: u64 = 1 << 47;

/// Every flag that asks a software port to change the packet at transmit time.
pub const TX_SW_MASK: u64 = TX_VLAN | TX_QINQ | TX_IP_CKSUM | TX_UDP_CKSUM | TX_TCP_CKSUM;
