//! The wasmdp plugin ABI, version 1.1: what a policy module exports, what it may import, and the
//! numbers that cross the boundary. Shared by the host (`wasmdp`) and the SDK (`wasmdp-sdk`) so the
//! two cannot disagree. The prose description is `docs/ABI.md`.
#![no_std]

/// ABI major version: a module of another major version is refused.
pub const ABI_MAJOR: u32 = 1;
/// ABI minor version: additions that old plugins do not need. 1.1 added the burst area
/// ([`area`]), length changes, maps, the context, gauges and the tunnel engine ids.
pub const ABI_MINOR: u32 = 1;
/// The value `wasmdp_abi_version` returns: `major << 16 | minor`.
pub const ABI_VERSION: u32 = ABI_MAJOR << 16 | ABI_MINOR;

/// Module name of every host import.
pub const IMPORT_MODULE: &str = "wasmdp";

/// The exports a plugin provides: their names, and [`EXPORTS`](export::EXPORTS), the table the host
/// checks a module's exports against and the C header's prototypes and docs/ABI.md's export table
/// are generated from.
pub mod export {
    use crate::import::Ty::{self, I32, I64};

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

    /// One exported function.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Export {
        /// Its name.
        pub name: &'static str,
        /// Parameter names.
        pub names: &'static [&'static str],
        /// Parameter types.
        pub params: &'static [Ty],
        /// Result types (none or one).
        pub results: &'static [Ty],
        /// Whether a module without it is refused.
        pub required: bool,
        /// When the host calls it.
        pub called: &'static str,
        /// What it returns and means.
        pub doc: &'static str,
    }

    /// Every exported function (and `memory`, a memory, required as well).
    pub const EXPORTS: &[Export] = &[
        Export {
            name: ABI_VERSION,
            names: &[],
            params: &[],
            results: &[I32],
            required: true,
            called: "at load, before init",
            doc: "`ABI_MAJOR << 16 | ABI_MINOR`; must not call imports.",
        },
        Export {
            name: INIT,
            names: &["port", "instance"],
            params: &[I32, I32],
            results: &[I32],
            required: true,
            called: "once per instance",
            doc: "0 accepts the configuration; anything else refuses it.",
        },
        Export {
            name: ON_BURST,
            names: &["port", "burst_len"],
            params: &[I32, I32],
            results: &[I32],
            required: true,
            called: "per burst",
            doc: "Decide for packets `0..burst_len`; 0 is success, `RUN_ENGINE | id` (1.1) success with an \
                  engine to run, anything else a plugin failure.",
        },
        Export {
            name: TICK,
            names: &["now_ns"],
            params: &[I64],
            results: &[],
            required: false,
            called: "about every `tick_ms`",
            doc: "Periodic work (end a sticky decision, age state); optional.",
        },
    ];
}

pub mod import;

/// Engine ids for `run_engine`, `set_sticky` and the burst area's `engine` and `ENGINE` verdicts.
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
    /// Encapsulate in the TX port's VXLAN tunnel (1.1).
    pub const VXLAN_ENCAP: u32 = 6;
    /// Decapsulate the RX port's VXLAN tunnel (1.1).
    pub const VXLAN_DECAP: u32 = 7;
    /// Encapsulate in the TX port's Geneve tunnel (1.1).
    pub const GENEVE_ENCAP: u32 = 8;
    /// Decapsulate the RX port's Geneve tunnel (1.1).
    pub const GENEVE_DECAP: u32 = 9;
    /// Number of engine ids a plugin may name (txonly and icmpecho are not for plugins).
    pub const COUNT: u32 = 10;
    /// Engine names by id, as the host's configuration spells them.
    pub const NAMES: [&str; COUNT as usize] = [
        "io",
        "mac",
        "macswap",
        "5tswap",
        "copy",
        "rxonly",
        "vxlan_encap",
        "vxlan_decap",
        "geneve_encap",
        "geneve_decap",
    ];
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
    /// A map is full (1.1).
    pub const FULL: i32 = -11;
    /// A length change that does not fit the packet's buffer (1.1).
    pub const NO_ROOM: i32 = -12;
    /// A 1.1 import that may only be called from `wasmdp_init` was called later
    /// (`counter_register` keeps answering `NO_BURST`, as in 1.0).
    pub const NOT_INIT: i32 = -13;
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

/// Most packets in a burst.
pub const MAX_BURST: u32 = 512;

/// Index meaning "every packet of the burst" for `set_offloads`.
pub const ALL_PACKETS: i32 = -1;

/// What `wasmdp_on_burst` may return besides 0 (1.1): a decision the host carries out after the
/// call, without a call back into it.
pub mod verdict {
    /// `RUN_ENGINE | id`: success, and then run engine `id` ([`crate::engine`]) on every packet
    /// still in the burst, as `run_engine(id, 0, ALL_PACKETS)` as the call's last import would. An
    /// unknown id is `BAD_ENGINE`, a failure of the call.
    pub const RUN_ENGINE: i32 = 0x0001_0000;

    /// The return value that asks for engine `id`.
    pub const fn run_engine(id: u32) -> i32 {
        RUN_ENGINE | (id & 0xFFFF) as i32
    }

    /// The engine a return value asks for, if it is a [`RUN_ENGINE`] verdict.
    pub const fn engine_of(rc: i32) -> Option<u32> {
        if rc & !0xFFFF == RUN_ENGINE {
            Some((rc & 0xFFFF) as u32)
        } else {
            None
        }
    }
}

/// Most plugin counters a module may register.
pub const MAX_COUNTERS: u32 = 16;

pub mod area;
pub mod context;
pub mod decision;
pub mod layout;
pub mod map;

/// [`flow_hash`](hash::flow_hash): the wire crate's, so that the host and a plugin hashing a window
/// agree.
pub use wasmdp_wire::hash;
