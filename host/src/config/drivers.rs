//! Options of the drivers that talk to the outside world (`pcap:`, `af_packet:`, `af_xdp:`) and of
//! the icmpecho engine (`icmpecho:`).

use super::Bounded;
use serde::de::{self, Deserializer};
use serde::Deserialize;
use std::path::PathBuf;

/// `pcap:` options.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PcapCfg {
    /// Capture to replay on RX (pcap or pcapng, Ethernet link type); none: RX receives nothing.
    #[serde(default)]
    pub rx: Option<PathBuf>,
    /// File to record TX to (pcap, nanosecond timestamps); none: TX frees.
    #[serde(default)]
    pub tx: Option<PathBuf>,
    /// How many times to replay the capture: a number, or `forever`.
    #[serde(default)]
    pub repeat: Repeat,
    /// Replay at this many packets per second (0: as fast as possible).
    #[serde(default)]
    pub rate_pps: Bounded<0, 1_000_000_000>,
    /// Replay at the capture's own timing (overrides `rate_pps`).
    #[serde(default)]
    pub timing: bool,
}

/// `repeat:` a count or `forever`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Repeat {
    /// This many passes over the capture.
    Times(u64),
    /// Until the dataplane stops.
    Forever,
}

impl Default for Repeat {
    fn default() -> Self {
        Repeat::Times(1)
    }
}

impl<'de> Deserialize<'de> for Repeat {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match serde_yaml::Value::deserialize(d)? {
            serde_yaml::Value::Number(n) if n.as_u64().is_some_and(|v| v >= 1) => {
                Ok(Repeat::Times(n.as_u64().unwrap_or(1)))
            }
            serde_yaml::Value::String(s) if s == "forever" => Ok(Repeat::Forever),
            other => Err(de::Error::custom(format!("invalid repeat {other:?}: allowed a count >= 1 or `forever`"))),
        }
    }
}

/// `af_packet:` options.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct AfPacketCfg {
    /// Linux interface name.
    pub iface: String,
    /// Put the interface in promiscuous mode.
    #[serde(default = "yes")]
    pub promisc: bool,
    /// Bypass the kernel's qdisc on TX (PACKET_QDISC_BYPASS).
    #[serde(default = "yes")]
    pub qdisc_bypass: bool,
    /// RX ring: block size in bytes (a power of two, multiple of the page size).
    #[serde(default = "block_size")]
    pub block_size: Bounded<4096, 4_194_304>,
    /// RX ring: number of blocks.
    #[serde(default = "block_count")]
    pub block_count: Bounded<1, 65536>,
}

fn yes() -> bool {
    true
}
// A block reaches wasmdp when full or after 1 ms: at low rates each block carries about a
// millisecond of traffic, so the count bounds the stall a ring survives (256 blocks: 256 ms); at
// 1 Mpps of 64-byte frames a 128 KiB block holds about 1000 of them (256 blocks: 256 ms). A block
// also bounds the largest frame, a 64 KiB GSO super-frame included. 32 MiB per queue.
fn block_size() -> Bounded<4096, 4_194_304> {
    Bounded(128 << 10)
}
fn block_count() -> Bounded<1, 65536> {
    Bounded(256)
}

/// `af_xdp:` options.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct AfXdpCfg {
    /// Linux interface name.
    pub iface: String,
    /// First of the interface's queues the port binds (`queues:` sockets on queue_start..).
    #[serde(default)]
    pub queue_start: Bounded<0, 4095>,
    /// How the XDP program that redirects to the sockets is attached.
    #[serde(default)]
    pub mode: XdpMode,
    /// Whether the sockets share their memory with the driver (zero copy) or the kernel copies.
    #[serde(default)]
    pub zero_copy: ZeroCopy,
    /// Where frames live: `pool` (the dataplane's packet pool is the UMEM: no copies), `queue` (a
    /// UMEM per queue, frames copied to and from pool buffers), `auto` (pool when the pool allows:
    /// pool.headroom >= 128, pool.data_room <= 3840, enough buffers; else queue).
    #[serde(default)]
    pub umem: UmemMode,
    /// Bytes of one UMEM frame (2048 or 4096) with `umem: queue`: the largest frame is this minus
    /// the kernel's 256 B of XDP headroom.
    #[serde(default = "xdp_frame_size")]
    pub frame_size: Bounded<2048, 4096>,
    /// Descriptors of each of the four rings (a power of two); with `umem: queue` the UMEM holds
    /// twice this many frames per queue (one half for RX, one for TX), with the pool as the UMEM
    /// each queue lends this many pool buffers to its fill ring and posts at most this many.
    #[serde(default = "xdp_ring_size")]
    pub ring_size: Bounded<64, 16384>,
    /// Busy polling (SO_PREFER_BUSY_POLL, SO_BUSY_POLL, SO_BUSY_POLL_BUDGET): the driver's NAPI runs
    /// in our RX calls instead of in interrupts.
    #[serde(default)]
    pub busy_poll: bool,
    /// Whether RX completes TCP and UDP checksums a local sender's kernel left partial (AF_XDP
    /// carries no metadata saying so): `auto` does on virtual interfaces (veth, no device behind
    /// them) and in generic mode, where local senders' frames arrive.
    #[serde(default)]
    pub complete_checksums: Switch,
    /// What the XDP program leaves to the kernel instead of redirecting it to the port (the host's
    /// own ARP, neighbour discovery, management traffic); empty: every frame of the bound queues.
    #[serde(default)]
    pub pass: super::PassList,
}

/// `af_xdp.umem`.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum UmemMode {
    /// The pool when it allows, else a UMEM per queue.
    #[default]
    Auto,
    /// The packet pool is the UMEM (or the port does not open).
    Pool,
    /// A UMEM per queue; frames are copied.
    Queue,
}

/// `af_xdp.mode`.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum XdpMode {
    /// Native if the driver has it, else generic.
    #[default]
    Auto,
    /// In the driver (XDP_FLAGS_DRV_MODE).
    Native,
    /// In the kernel's generic path, after the driver built an skb (XDP_FLAGS_SKB_MODE).
    Generic,
}

/// A setting that is `auto` (decided from the interface), `on` or `off`: `af_xdp.zero_copy` (on:
/// zero copy, or the port does not open) and `af_xdp.complete_checksums`.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum Switch {
    /// Decided from the interface.
    #[default]
    Auto,
    /// On.
    On,
    /// Off.
    Off,
}

/// `af_xdp.zero_copy`.
pub type ZeroCopy = Switch;

fn xdp_frame_size() -> Bounded<2048, 4096> {
    Bounded(2048)
}
// 2048 descriptors hold 2 ms of traffic at 1 Mpps; the UMEM is then 8 MiB per queue (2 x 2048
// frames of 2048 B).
fn xdp_ring_size() -> Bounded<64, 16384> {
    Bounded(2048)
}

/// `icmpecho:` of a port: the addresses it answers for, and what happens to everything else.
#[derive(Debug, Clone, Deserialize, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct IcmpEchoCfg {
    /// IPv4 addresses the port answers ARP and ICMP echo requests for.
    #[serde(default)]
    pub ipv4: Vec<std::net::Ipv4Addr>,
    /// IPv6 addresses the port answers neighbour solicitations and ICMPv6 echo requests for.
    #[serde(default)]
    pub ipv6: Vec<std::net::Ipv6Addr>,
    /// Engine for every other packet (`drop`: drop them, counted as engine drops).
    #[serde(default = "drop_others")]
    pub others: String,
}

fn drop_others() -> String {
    "drop".into()
}
