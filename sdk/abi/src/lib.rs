//! The wasmdp plugin ABI, version 1: what a policy module exports, what it may import, and the
//! numbers that cross the boundary. Shared by the host (`wasmdp`) and the SDK (`wasmdp-sdk`) so the
//! two cannot disagree. The prose description is `docs/ABI.md`.
#![no_std]

/// ABI major version: a module of another major version is refused.
pub const ABI_MAJOR: u32 = 1;
/// ABI minor version: additions that old plugins do not need.
pub const ABI_MINOR: u32 = 0;
/// The value `wasmdp_abi_version` returns: `major << 16 | minor`.
pub const ABI_VERSION: u32 = ABI_MAJOR << 16 | ABI_MINOR;

/// Module name of every host import.
pub const IMPORT_MODULE: &str = "wasmdp";

/// Names of the exports a plugin provides.
pub mod export {
    /// `() -> i32`: the ABI version the module was built for.
    pub const ABI_VERSION: &str = "wasmdp_abi_version";
    /// `(port: i32, instance: i32) -> i32`: 0 accepts the configuration, anything else refuses it.
    pub const INIT: &str = "wasmdp_init";
    /// `(port: i32, burst_len: i32) -> i32`: decide for the current burst; 0 is success, anything else
    /// is treated as a plugin failure (with the port's failure policy).
    pub const ON_BURST: &str = "wasmdp_on_burst";
    /// `(now_ns: i64)`: optional, called periodically (about every `tick_ms`).
    pub const TICK: &str = "wasmdp_tick";
    /// The module's linear memory.
    pub const MEMORY: &str = "memory";
}

/// Names of the host functions (module [`IMPORT_MODULE`]) with their signatures. Packet indexes are
/// positions in the current burst; every index, offset, length and guest pointer is checked and a
/// bad one returns an [`err`] code, never touching memory outside the burst or the plugin's memory.
pub mod import {
    /// `() -> i32`: packets in the current burst.
    pub const BURST_LEN: &str = "burst_len";
    /// `(idx: i32) -> i32`: length of packet `idx`.
    pub const PKT_LEN: &str = "pkt_len";
    /// `(idx, off, ptr, len: i32) -> i32`: copies packet bytes `off..off+len` to guest memory at `ptr`
    /// (native SIMD memcpy); returns `len`.
    pub const PKT_READ: &str = "pkt_read";
    /// `(idx, off, ptr, len: i32) -> i32`: copies guest bytes into the packet; returns `len`.
    pub const PKT_WRITE: &str = "pkt_write";
    /// `(dst_idx, dst_off, src_idx, src_off, len: i32) -> i32`: copies between two packets of the
    /// burst (native SIMD memcpy); returns `len`.
    pub const PKT_COPY: &str = "pkt_copy";
    /// `(engine, start, count: i32) -> i32`: runs a native engine on packets `start..start+count`.
    pub const RUN_ENGINE: &str = "run_engine";
    /// `(start, count: i32) -> i32`: the native SIMD MAC swap on packets `start..start+count`.
    pub const MACSWAP: &str = "macswap";
    /// `(idx: i32, flags: i64, vlan_tci: i32, vlan_tci_outer: i32) -> i32`: sets TX offload flags and
    /// TCIs of one packet, or of all with [`ALL_PACKETS`](crate::ALL_PACKETS).
    pub const SET_OFFLOADS: &str = "set_offloads";
    /// `(idx: i32) -> i32`: drops the packet (counted as an engine drop) after the call returns.
    pub const DROP_PKT: &str = "drop_pkt";
    /// `(idx, port: i32) -> i32`: sends the packet out of `port` instead of the stream's TX port.
    pub const SEND_TO: &str = "send_to";
    /// `(engine: i32, flags: i64, vlan_tci, vlan_tci_outer, bursts: i32) -> i32`: for the next
    /// `bursts` bursts (-1: until `clear_sticky`), do not call `wasmdp_on_burst`; run `engine` with
    /// these offloads natively instead.
    pub const SET_STICKY: &str = "set_sticky";
    /// `() -> i32`: ends a sticky decision (from `wasmdp_tick`, typically).
    pub const CLEAR_STICKY: &str = "clear_sticky";
    /// `(name_ptr, name_len: i32) -> i32`: registers a plugin counter (init only); returns its id.
    pub const COUNTER_REGISTER: &str = "counter_register";
    /// `(id: i32, value: i64) -> i32`: adds to a counter; shown in the stats.
    pub const COUNTER_ADD: &str = "counter_add";
    /// `(key_ptr, key_len, out_ptr, out_cap: i32) -> i32`: copies the `params:` value of `key` (as
    /// text) to `out`; returns its length, `NOT_FOUND` or `TOO_SMALL`.
    pub const PARAM_GET: &str = "param_get";
    /// `() -> i64`: monotonic nanoseconds.
    pub const NOW_NS: &str = "now_ns";
    /// `(level, ptr, len: i32)`: logs a UTF-8 message through the host's tracing, tagged with the
    /// plugin and port.
    pub const LOG: &str = "log";
}

/// Engine ids for `run_engine` and `set_sticky`: the order of the host's engine table.
pub mod engine {
    /// Forward unchanged.
    pub const IO: u32 = 0;
    /// Set MACs from the TX port.
    pub const MAC: u32 = 1;
    /// Swap MACs (SIMD).
    pub const MACSWAP: u32 = 2;
    /// Swap MACs, IPs, L4 ports.
    pub const FIVETSWAP: u32 = 3;
    /// Copy into fresh buffers (SIMD memcpy).
    pub const COPY: u32 = 4;
    /// Drop (counted as engine drops).
    pub const RXONLY: u32 = 5;
    /// Number of engine ids a plugin may name (txonly is not for received bursts).
    pub const COUNT: u32 = 6;
}

/// `ol_flags` bits a plugin may request (same bits as the host's `mbuf::flags`).
pub mod flags {
    /// Insert an 802.1Q tag with the inner TCI.
    pub const TX_VLAN: u64 = 1 << 40;
    /// Insert an 802.1ad outer and an 802.1Q inner tag.
    pub const TX_QINQ: u64 = 1 << 41;
    /// MACsec SecTAG (ports without MACsec refuse to carry it out).
    pub const TX_MACSEC: u64 = 1 << 42;
    /// Fill the IPv4 header checksum.
    pub const TX_IP_CKSUM: u64 = 1 << 43;
    /// Fill the UDP checksum.
    pub const TX_UDP_CKSUM: u64 = 1 << 44;
    /// Fill the TCP checksum.
    pub const TX_TCP_CKSUM: u64 = 1 << 45;
    /// Every flag a plugin may set.
    pub const ALLOWED: u64 = TX_VLAN | TX_QINQ | TX_MACSEC | TX_IP_CKSUM | TX_UDP_CKSUM | TX_TCP_CKSUM;
}

/// Negative return codes of host functions (non-negative values are results).
pub mod err {
    /// A packet index outside the burst.
    pub const BAD_INDEX: i32 = -1;
    /// An offset/length outside the packet.
    pub const BAD_RANGE: i32 = -2;
    /// A pointer/length outside the plugin's memory.
    pub const BAD_MEMORY: i32 = -3;
    /// An engine id that does not exist.
    pub const BAD_ENGINE: i32 = -4;
    /// A port id that does not exist.
    pub const BAD_PORT: i32 = -5;
    /// A flag outside `flags::ALLOWED`.
    pub const BAD_FLAGS: i32 = -6;
    /// No such parameter / counter.
    pub const NOT_FOUND: i32 = -7;
    /// A buffer too small; the value needed is not returned, call with a larger one.
    pub const TOO_SMALL: i32 = -8;
    /// Called outside a burst (e.g. from init).
    pub const NO_BURST: i32 = -9;
    /// The packet was already dropped or sent this burst.
    pub const GONE: i32 = -10;
}

/// Log levels for `log`.
pub mod level {
    /// Error.
    pub const ERROR: u32 = 1;
    /// Warning.
    pub const WARN: u32 = 2;
    /// Information.
    pub const INFO: u32 = 3;
    /// Debug.
    pub const DEBUG: u32 = 4;
}

/// Index meaning "every packet of the burst" for `set_offloads`.
pub const ALL_PACKETS: i32 = -1;

/// Most plugin counters a module may register.
pub const MAX_COUNTERS: u32 = 16;
