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
    /// `(idx: i32) -> i32`: drops the packet (counted as a `policy` drop) after the call returns.
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

    // ---- 1.1 ----
    /// `(ptr, max_pkts, window: i32) -> i32` (init only): registers the [burst area](crate::area)
    /// at `ptr`: a header, `max_pkts` descriptors and `max_pkts` windows of `window` bytes, filled
    /// before each `wasmdp_on_burst` and read back after it. Returns 0.
    pub const BURST_AREA: &str = "burst_area";
    /// `(idx, head, tail: i32) -> i32`: changes the length of packet `idx` now: `head > 0` prepends
    /// that many bytes (from the headroom; their content is unspecified until written), `head < 0`
    /// strips from the front, `tail > 0` appends (from the tailroom), `tail < 0` trims. Returns the
    /// new length; on `NO_ROOM` nothing changed.
    pub const PKT_ADJUST: &str = "pkt_adjust";
    /// `(idx: i32) -> i64`: `headroom << 32 | tailroom` of packet `idx` (or a negative error code).
    pub const PKT_ROOM: &str = "pkt_room";
    /// `(ptr, cap: i32) -> i32`: copies the [context](crate::context) to `ptr`; returns its size
    /// (`TOO_SMALL` and nothing written when `cap` is smaller).
    pub const CONTEXT: &str = "context";
    /// `(name_ptr, name_len, kind, key_size, value_size, capacity: i32) -> i32` (init only): declares
    /// a map ([`map`](crate::map)); returns its id.
    pub const MAP_DECLARE: &str = "map_declare";
    /// `(name_ptr, name_len, kind, key_size, value_size, capacity: i32, ttl_ms: i64) -> i32` (init
    /// only): `map_declare` of a hash kind whose entries expire `ttl_ms` milliseconds after their
    /// last use (lookup, update, add); 0 is no expiry.
    pub const MAP_DECLARE_TTL: &str = "map_declare_ttl";
    /// `(id, key_ptr, value_ptr: i32) -> i32`: copies the value of the key to `value_ptr`; 0 or
    /// `NOT_FOUND`.
    pub const MAP_LOOKUP: &str = "map_lookup";
    /// `(id, key_ptr, value_ptr: i32) -> i32`: inserts or replaces; 0 or `FULL`.
    pub const MAP_UPDATE: &str = "map_update";
    /// `(id, key_ptr: i32) -> i32`: removes the key (an array entry is zeroed); 0 or `NOT_FOUND`.
    pub const MAP_DELETE: &str = "map_delete";
    /// `(id, key_ptr, word: i32, delta: i64) -> i32`: atomically adds `delta` to the `u64` at word
    /// `word` (bytes `8*word..8*word+8`) of the key's value, inserting a zeroed value first when the
    /// key is absent; 0 or `FULL`.
    pub const MAP_ADD: &str = "map_add";
    /// `(id, keys_ptr, n, values_ptr, found_ptr: i32) -> i32`: looks up `n` keys laid end to end;
    /// writes each value (where found) and a byte 1/0 per key at `found_ptr`; returns how many were
    /// found.
    pub const MAP_LOOKUP_BATCH: &str = "map_lookup_batch";
    /// `(id, keys_ptr, values_ptr, n: i32) -> i32`: inserts or replaces `n` entries; returns how many
    /// were written before the map was full (`n` when all).
    pub const MAP_UPDATE_BATCH: &str = "map_update_batch";
    /// `(map: i32, cursor_ptr: i32, key_ptr: i32) -> i32`: the next key of a walk over the map's
    /// entries. The cursor is a `u64` in the plugin's memory, 0 to start; each call reads at most
    /// `map::NEXT_KEY_SLOTS` slots and moves it on. 1: a key was written at `key_ptr`; 0: none in
    /// this window, call again; `NOT_FOUND`: the walk is over. Deleting the key just returned is
    /// safe; see docs/ABI.md for what a walk sees of concurrent changes.
    pub const MAP_NEXT_KEY: &str = "map_next_key";
    /// `(name_ptr, name_len: i32) -> i32` (init only): registers a gauge; returns its id.
    pub const GAUGE_REGISTER: &str = "gauge_register";
    /// `(id: i32, value: i64) -> i32`: sets a gauge (a level, shown in the stats; not summed over time).
    pub const GAUGE_SET: &str = "gauge_set";

    /// The imports ABI 1.1 added: a module that declares 1.0 may not import them.
    pub const ADDED_IN_1_1: [&str; 15] = [
        BURST_AREA,
        PKT_ADJUST,
        PKT_ROOM,
        CONTEXT,
        MAP_DECLARE,
        MAP_DECLARE_TTL,
        MAP_LOOKUP,
        MAP_UPDATE,
        MAP_DELETE,
        MAP_ADD,
        MAP_LOOKUP_BATCH,
        MAP_UPDATE_BATCH,
        MAP_NEXT_KEY,
        GAUGE_REGISTER,
        GAUGE_SET,
    ];

    /// The minor ABI version that introduced import `name` (0 or 1; None: not an import).
    pub fn since(name: &str) -> Option<u32> {
        if ADDED_IN_1_1.contains(&name) {
            return Some(1);
        }
        const V1_0: [&str; 16] = [
            BURST_LEN,
            PKT_LEN,
            PKT_READ,
            PKT_WRITE,
            PKT_COPY,
            RUN_ENGINE,
            MACSWAP,
            SET_OFFLOADS,
            DROP_PKT,
            SEND_TO,
            SET_STICKY,
            CLEAR_STICKY,
            COUNTER_REGISTER,
            COUNTER_ADD,
            PARAM_GET,
            NOW_NS,
        ];
        (V1_0.contains(&name) || name == LOG).then_some(0)
    }
}

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

/// The burst area (1.1): a region of the plugin's memory, registered once with `burst_area`, that the
/// host fills before each `wasmdp_on_burst` and reads after it, so a plugin works on a whole burst
/// with plain loads and stores instead of one host call per packet.
///
/// Layout at the registered address (all fields little-endian): the [header](area::hdr)
/// ([`HEADER`](area::HEADER) bytes), then `max_pkts` [descriptors](area::desc) of
/// [`DESC`](area::DESC) bytes, then `max_pkts` windows of `window` bytes. Descriptor and window `i`
/// belong to packet `i` of the burst; packets past `max_pkts` get neither (they pass, with the
/// header's engine). Window `i` holds the first `min(len, window)` bytes of packet `i`. An area
/// registered with [`HEADS`](area::HEADS) has no descriptors: the header, the packets' lengths,
/// then the windows.
///
/// "in" fields are written by the host before the call; "out" fields are reset by the host before
/// the call and read after it. The host checks everything it reads: a bad value fails the call (the
/// port's failure policy applies), and nothing the plugin writes can make the host touch memory
/// outside the burst's buffers and the area.
pub mod area {
    /// Bytes of the header.
    pub const HEADER: usize = 64;
    /// Bytes of one descriptor.
    pub const DESC: usize = 32;
    /// Largest window (bytes per packet).
    pub const MAX_WINDOW: usize = 1024;
    /// The bits of `burst_area`'s `window` argument that give the window's bytes; the bits above
    /// are flags ([`FLOW_HASH`], [`HEADS`]), any other is refused (`BAD_RANGE`).
    pub const WINDOW_BYTES: u32 = 0xFFFF;
    /// `burst_area` flag: the host fills each descriptor's [`desc::HASH`] with
    /// [`hash::flow_hash`](crate::hash::flow_hash) of the whole packet, computed natively, so a
    /// plugin keying on flows need not hash in WebAssembly (as a NIC's RSS hash spares a DPDK
    /// application).
    pub const FLOW_HASH: u32 = 1 << 16;

    /// `burst_area` flag: **heads**, windows without descriptors. The area is the header, then
    /// `max_pkts` packet lengths (`u32` in, [`LEN_BYTES`] each), then `max_pkts` windows of `window`
    /// bytes back to back ([`heads_size`]); window `i` holds packet `i`'s first `min(len, window)`
    /// bytes, zeros after them. After the call, when the header's `CHANGED` is nonzero, every
    /// window's first `min(len, window)` bytes are copied into its packet; there are no per-packet
    /// verdicts or length changes. For policies that rewrite headers in place (MAC, VLAN, DSCP): no
    /// descriptor is written or read per packet. Needs a window of at least 1 byte; not with
    /// [`FLOW_HASH`] (there is no descriptor to hold it).
    pub const HEADS: u32 = 1 << 17;

    /// `burst_area` flag: **direct packet access**, descriptors without windows whose
    /// [`desc::DATA`] is where the packet's bytes are in the plugin's own memory: read and written
    /// in place, nothing copied in or out. At registration (in init) the host grows the memory by
    /// the stream's packet region (its buffers' data pages; counted in `memory_kib`) and maps it
    /// there; the region can be touched only while `wasmdp_on_burst` or `wasmdp_tick` runs (it is
    /// inaccessible, and traps, during init). A write anywhere in the region changes packet bytes
    /// only: lengths, offsets and the packets' metadata are the host's, outside it; the length
    /// changes of `HEAD` and `TAIL` are checked against the host's own view of the buffer. Needs a
    /// window of 0 bytes. With [`HEADS`] (and a window of 0 bytes, not with [`FLOW_HASH`]):
    /// **direct heads**, the header then `max_pkts` entries of [`DIRECT_HEAD`] bytes, each a
    /// packet's length, the bytes from its start to its buffer's end, and where it is
    /// ([`direct_head`]); no descriptors, no verdicts, nothing read back per packet
    /// ([`direct_heads_size`]). See docs/ABI.md, "Direct packet access", for what else the region
    /// shows.
    pub const DIRECT: u32 = 1 << 18;

    /// Bytes of one entry of a direct-heads area ([`DIRECT`] with [`HEADS`]).
    pub const DIRECT_HEAD: usize = 8;

    /// Fields of a direct-heads entry (all in).
    pub mod direct_head {
        /// `u16`: the packet's length.
        pub const LEN: usize = 0;
        /// `u16`: bytes from its first byte to its buffer's end (its length plus its tailroom): how
        /// many may be read or written from `DATA` (past the length, they are not the packet's).
        pub const END: usize = 2;
        /// `u32`: offset in the plugin's memory of its first byte.
        pub const DATA: usize = 4;
    }

    /// Bytes of a direct-heads area for `max_pkts` packets.
    pub const fn direct_heads_size(max_pkts: usize) -> usize {
        HEADER + max_pkts * DIRECT_HEAD
    }

    /// A registration's shape: `burst_area`'s `window` argument read.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Shape {
        /// Bytes per window.
        pub window: usize,
        /// [`FLOW_HASH`] set.
        pub flow_hash: bool,
        /// [`HEADS`] set.
        pub heads: bool,
        /// [`DIRECT`] set.
        pub direct: bool,
    }

    impl Shape {
        /// Bytes of the area for `max_pkts` packets.
        pub const fn size(&self, max_pkts: usize) -> usize {
            if self.heads && self.direct {
                direct_heads_size(max_pkts)
            } else if self.heads {
                heads_size(max_pkts, self.window)
            } else {
                size(max_pkts, self.window)
            }
        }
    }

    /// `burst_area`'s `window` argument read. None when the bytes pass [`MAX_WINDOW`], a flag
    /// other than [`FLOW_HASH`], [`HEADS`] and [`DIRECT`] is set, `HEADS` is set with `FLOW_HASH`
    /// or (without `DIRECT`) with a window of 0 bytes, or `DIRECT` with a window.
    pub const fn parse_window(arg: u32) -> Option<Shape> {
        let (window, flags) = ((arg & WINDOW_BYTES) as usize, arg & !WINDOW_BYTES);
        let (flow_hash, heads, direct) = (flags & FLOW_HASH != 0, flags & HEADS != 0, flags & DIRECT != 0);
        if window > MAX_WINDOW
            || flags & !(FLOW_HASH | HEADS | DIRECT) != 0
            || (heads && (flow_hash || (window == 0 && !direct)))
            || (direct && window != 0)
        {
            return None;
        }
        Some(Shape { window, flow_hash, heads, direct })
    }

    /// Header field offsets.
    pub mod hdr {
        /// `u32` in: packets in the burst.
        pub const LEN: usize = 0;
        /// `u16` in: the RX port (index in `ports:`).
        pub const PORT: usize = 4;
        /// `u16` in: the RX queue.
        pub const QUEUE: usize = 6;
        /// `u16` in: the stream's TX port.
        pub const TX_PORT: usize = 8;
        /// `u16` in: bytes per window.
        pub const WINDOW: usize = 10;
        /// `i32` out: engine id run natively on every packet whose verdict is `PASS` (-1: none).
        pub const ENGINE: usize = 12;
        /// `u32` out: nonzero when the plugin wrote any descriptor's out fields; 0 lets the host skip
        /// reading them (all `PASS`, nothing to write back).
        pub const CHANGED: usize = 16;
        /// `u64` out: TX offload flags (`flags::ALLOWED`) for every packet that is transmitted.
        pub const OFFLOADS: usize = 24;
        /// `u16` out: inner VLAN TCI for `TX_VLAN`/`TX_QINQ`.
        pub const VLAN_TCI: usize = 32;
        /// `u16` out: outer VLAN TCI for `TX_QINQ`.
        pub const VLAN_OUTER: usize = 34;
        /// `u64` in: the host's monotonic clock (nanoseconds, as `now_ns`) when the call began, to
        /// within the host's epoch tick (250 us): read once per burst, not per call.
        pub const NOW_NS: usize = 40;
    }

    /// Descriptor field offsets.
    pub mod desc {
        /// `u32` in: packet length.
        pub const LEN: usize = 0;
        /// `u16` in: bytes of the window that hold packet bytes (`min(len, window)`).
        pub const WIN: usize = 4;
        /// `u16` in: input port.
        pub const PORT: usize = 6;
        /// `u32` in: with [`FLOW_HASH`](super::FLOW_HASH) registered, the host's
        /// `hash::flow_hash` of the packet; else the RX port's hash (0: none).
        pub const HASH: usize = 8;
        /// `u32` in: RX flags (`rx::VLAN`, `rx::TUNNEL`).
        pub const RX_FLAGS: usize = 12;
        /// `u8` out: the [verdict](super::verdict).
        pub const VERDICT: usize = 16;
        /// `u16` out: the verdict's argument: the port for `SEND`, the engine id for `ENGINE`.
        pub const ARG: usize = 18;
        /// `i16` out: length change at the front: `n > 0` prepends `n` bytes, `n < 0` strips `-n`.
        pub const HEAD: usize = 20;
        /// `i16` out: length change at the tail: `n > 0` appends `n` bytes, `n < 0` trims `-n`.
        pub const TAIL: usize = 22;
        /// `u16` out: window bytes `0..dirty` to copy into the packet, after the `HEAD` and `TAIL`
        /// changes: window byte 0 is then the new first byte.
        pub const DIRTY: usize = 24;
        /// `u16` in: bytes that can be prepended (`HEAD` at most this).
        pub const HEADROOM: usize = 26;
        /// `u16` in: bytes that can be appended (`TAIL` at most this).
        pub const TAILROOM: usize = 28;
        /// `u32` in, with [`DIRECT`](super::DIRECT) (in place of `WIN` and `PORT`): offset in the
        /// plugin's memory of the packet's first byte. Its `HEADROOM` bytes before it and
        /// `LEN + TAILROOM` bytes from it are the buffer's: bytes written in front of it become the
        /// packet's with a positive `HEAD`, bytes written after its end with a positive `TAIL`.
        pub const DATA: usize = 4;
        /// `u16` in, with [`DIRECT`](super::DIRECT): input port.
        pub const DIRECT_PORT: usize = 30;
    }

    /// Verdicts.
    pub mod verdict {
        /// Transmit on the stream's TX port (after the header's engine, if any).
        pub const PASS: u8 = 0;
        /// Drop (counted as a `policy` drop).
        pub const DROP: u8 = 1;
        /// Transmit on the port in `ARG`.
        pub const SEND: u8 = 2;
        /// Run the engine in `ARG` on it, then transmit on the stream's TX port.
        pub const ENGINE: u8 = 3;
    }

    /// RX flags in a descriptor.
    pub mod rx {
        /// The packet carried a VLAN tag on the wire.
        pub const VLAN: u32 = 1 << 8;
        /// A tunnel engine decapsulated the packet.
        pub const TUNNEL: u32 = 1 << 9;
    }

    /// Bytes of an area for `max_pkts` packets and `window` bytes each.
    pub const fn size(max_pkts: usize, window: usize) -> usize {
        HEADER + max_pkts * (DESC + window)
    }

    /// Bytes of one packet length in a [`HEADS`] area.
    pub const LEN_BYTES: usize = 4;

    /// Bytes of a [`HEADS`] area for `max_pkts` packets and `window` bytes each.
    pub const fn heads_size(max_pkts: usize, window: usize) -> usize {
        HEADER + max_pkts * (LEN_BYTES + window)
    }
}

/// The context (1.1), as `context` copies it: a [header](context::HEADER) then one
/// [entry](context::PORT) per port. Little-endian.
pub mod context {
    /// Bytes before the port entries.
    pub const HEADER: usize = 16;
    /// Bytes of one port entry.
    pub const PORT: usize = 16;
    /// `u16`: the RX port.
    pub const RX_PORT: usize = 0;
    /// `u16`: the RX queue (the instance).
    pub const QUEUE: usize = 2;
    /// `u16`: the stream's TX port.
    pub const TX_PORT: usize = 4;
    /// `u16`: number of ports.
    pub const PORTS: usize = 6;
    /// `u16`: the worker core (0xFFFF: not pinned).
    pub const LCORE: usize = 8;
    /// In a port entry: its MAC, 6 bytes.
    pub const MAC: usize = 0;
    /// In a port entry: its peer MAC, 6 bytes.
    pub const PEER_MAC: usize = 6;
    /// In a port entry: `u16` flags ([`SENDABLE`]).
    pub const FLAGS: usize = 12;
    /// Port flag: this stream may `send_to` the port.
    pub const SENDABLE: u16 = 1;
    /// Most ports a host runs (its config refuses more), so the most port entries a context has.
    pub const MAX_PORTS: usize = 256;
}

/// Maps (1.1): fixed-size keys and values, declared at init with `map_declare`.
pub mod map {
    /// A hash map shared by every instance of the port's policy (all its queues), kept across a
    /// reload that declares it again identically.
    pub const HASH: u32 = 0;
    /// An array (keys: `u32` index, little-endian, 4 bytes), shared likewise.
    pub const ARRAY: u32 = 1;
    /// A hash map of the instance's own (per queue, like BPF's per-CPU maps; the stats and dumps
    /// show the values summed over instances).
    pub const PERCPU_HASH: u32 = 2;
    /// An array of the instance's own.
    pub const PERCPU_ARRAY: u32 = 3;
    /// A hash map shared like [`HASH`] that, when full, evicts its least recently used entry (of a
    /// bounded sample) to make room for a new key (BPF's `LRU_HASH`).
    pub const LRU_HASH: u32 = 4;
    /// Longest-prefix match (BPF's `LPM_TRIE`), shared like [`HASH`]: keys are a little-endian
    /// `u32` prefix length then the address bytes in network order (IPv4: 8 bytes, IPv6: 20). An
    /// update stores the prefix (address bits past its length ignored; a length past the address
    /// is refused); a lookup finds the longest stored prefix holding the key's address within the
    /// key's length; a delete removes the exact prefix.
    pub const LPM_TRIE: u32 = 5;
    /// Most slots one `map_next_key` call reads (its bound: the call answers 0, "none in this
    /// window", after that many empty slots).
    pub const NEXT_KEY_SLOTS: u32 = 256;
    /// Most address bytes of an `LPM_TRIE` key (IPv6).
    pub const MAX_LPM_DATA: u32 = 16;
    /// Longest expiry (`map_declare_ttl`): a year, in milliseconds.
    pub const MAX_TTL_MS: u64 = 365 * 86_400_000;
    /// Longest key.
    pub const MAX_KEY: u32 = 64;
    /// Longest value.
    pub const MAX_VALUE: u32 = 1024;
    /// Most entries.
    pub const MAX_CAPACITY: u32 = 1 << 24;
    /// Longest name.
    pub const MAX_NAME: u32 = 64;
}

pub mod hash;
