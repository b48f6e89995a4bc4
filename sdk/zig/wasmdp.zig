//! The wasmdp plugin ABI 1.1 for Zig: imports, constants and the layouts of the burst area and
//! the context. GENERATED from the wasmdp-abi crate (sdk/abi) by
//! `WASMDP_BLESS=1 cargo test -p wasmdp-abi --test generated`: do not edit. The C header
//! sdk/c/wasmdp.h is made from the same tables; the prose is docs/ABI.md.

// The ABI version a module returns from wasmdp_abi_version.
pub const ABI_MAJOR = 1;
pub const ABI_MINOR = 1;
pub const ABI_VERSION = 0x10001;

// Limits.
pub const MAX_BURST = 512;
pub const ALL_PACKETS = (-1);
pub const MAX_COUNTERS = 16;

// Engine ids (run_engine, set_sticky, the area's engine and ENGINE verdicts).
pub const ENGINE_IO = 0;
pub const ENGINE_MAC = 1;
pub const ENGINE_MACSWAP = 2;
pub const ENGINE_FIVETSWAP = 3;
pub const ENGINE_COPY = 4;
pub const ENGINE_RXONLY = 5;
pub const ENGINE_VXLAN_ENCAP = 6;
pub const ENGINE_VXLAN_DECAP = 7;
pub const ENGINE_GENEVE_ENCAP = 8;
pub const ENGINE_GENEVE_DECAP = 9;
pub const ENGINE_COUNT = 10;

// TX offload flags (ol_flags bits).
pub const FLAG_TX_VLAN = 0x10000000000;
pub const FLAG_TX_QINQ = 0x20000000000;
pub const FLAG_TX_MACSEC = 0x40000000000;
pub const FLAG_TX_IP_CKSUM = 0x80000000000;
pub const FLAG_TX_UDP_CKSUM = 0x100000000000;
pub const FLAG_TX_TCP_CKSUM = 0x200000000000;
pub const FLAG_ALLOWED = 0x3f0000000000;

// Error codes (negative results).
pub const ERR_BAD_INDEX = (-1);
pub const ERR_BAD_RANGE = (-2);
pub const ERR_BAD_MEMORY = (-3);
pub const ERR_BAD_ENGINE = (-4);
pub const ERR_BAD_PORT = (-5);
pub const ERR_BAD_FLAGS = (-6);
pub const ERR_NOT_FOUND = (-7);
pub const ERR_TOO_SMALL = (-8);
pub const ERR_NO_BURST = (-9);
pub const ERR_GONE = (-10);
pub const ERR_FULL = (-11);
pub const ERR_NO_ROOM = (-12);
pub const ERR_NOT_INIT = (-13);

// Log levels.
pub const LEVEL_ERROR = 1;
pub const LEVEL_WARN = 2;
pub const LEVEL_INFO = 3;
pub const LEVEL_DEBUG = 4;

// wasmdp_on_burst's engine verdict: WASMDP_RUN_ENGINE | id.
pub const RUN_ENGINE = 0x10000;

// The burst area: sizes and burst_area's window flags.
pub const AREA_HEADER = 64;
pub const AREA_DESC = 32;
pub const AREA_MAX_WINDOW = 1024;
pub const AREA_WINDOW_BYTES = 0xffff;
pub const AREA_FLOW_HASH = 0x10000;
pub const AREA_HEADS = 0x20000;
pub const AREA_DIRECT = 0x40000;
pub const AREA_DROPS = 0x80000;
pub const AREA_DIRECT_HEAD = 8;
pub const AREA_LEN_BYTES = 4;

// Descriptor verdicts.
pub const VERDICT_PASS = 0;
pub const VERDICT_DROP = 1;
pub const VERDICT_SEND = 2;
pub const VERDICT_ENGINE = 3;

// Descriptor RX flags.
pub const RX_VLAN = 256;
pub const RX_TUNNEL = 512;

// The context: sizes and port flags.
pub const CONTEXT_HEADER = 16;
pub const CONTEXT_PORT = 16;
pub const CONTEXT_SENDABLE = 1;
pub const CONTEXT_MAX_PORTS = 256;

// Map kinds and limits.
pub const MAP_HASH = 0;
pub const MAP_ARRAY = 1;
pub const MAP_PERCPU_HASH = 2;
pub const MAP_PERCPU_ARRAY = 3;
pub const MAP_LRU_HASH = 4;
pub const MAP_LPM_TRIE = 5;
pub const MAP_NEXT_KEY_SLOTS = 256;
pub const MAP_MAX_LPM_DATA = 16;
pub const MAP_MAX_TTL_MS = 0x757b12c00;
pub const MAP_MAX_KEY = 64;
pub const MAP_MAX_VALUE = 1024;
pub const MAP_MAX_CAPACITY = 0x1000000;
pub const MAP_MAX_NAME = 64;

/// Engine names by id, as configs and params spell them.
pub const ENGINE_NAMES = [_][]const u8{ "io", "mac", "macswap", "5tswap", "copy", "rxonly", "vxlan_encap", "vxlan_decap", "geneve_encap", "geneve_decap" };

/// Burst area header (area::hdr, 64 bytes).
pub const AreaHeader = extern struct {
    /// in: Packets in the burst.
    len: u32,
    /// in: The RX port (index in `ports:`).
    port: u16,
    /// in: The RX queue.
    queue: u16,
    /// in: The stream's TX port.
    tx_port: u16,
    /// in: Bytes per window.
    window: u16,
    /// out: Engine id run natively on every packet whose verdict is `PASS` (-1: none).
    engine: i32,
    /// out: Nonzero when the plugin wrote any descriptor's out fields (heads: any window); 0 lets
    /// the host skip reading them (all `PASS`, nothing to write back).
    changed: u32,
    _pad20: [4]u8,
    /// out: TX offload flags (`flags::ALLOWED`) for every packet that is transmitted.
    offloads: u64,
    /// out: Inner VLAN TCI for `TX_VLAN`/`TX_QINQ`.
    vlan_tci: u16,
    /// out: Outer VLAN TCI for `TX_QINQ`.
    vlan_outer: u16,
    _pad36: [4]u8,
    /// in: The host's monotonic clock (nanoseconds, as `now_ns`) when the call began, to within the
    /// host's epoch tick (250 us): read once per burst, not per call.
    now_ns: u64,
    _pad48: [16]u8,
};
comptime {
    if (@sizeOf(AreaHeader) != 64) @compileError("AreaHeader size");
    if (@offsetOf(AreaHeader, "len") != 0) @compileError("AreaHeader.len");
    if (@offsetOf(AreaHeader, "port") != 4) @compileError("AreaHeader.port");
    if (@offsetOf(AreaHeader, "queue") != 6) @compileError("AreaHeader.queue");
    if (@offsetOf(AreaHeader, "tx_port") != 8) @compileError("AreaHeader.tx_port");
    if (@offsetOf(AreaHeader, "window") != 10) @compileError("AreaHeader.window");
    if (@offsetOf(AreaHeader, "engine") != 12) @compileError("AreaHeader.engine");
    if (@offsetOf(AreaHeader, "changed") != 16) @compileError("AreaHeader.changed");
    if (@offsetOf(AreaHeader, "offloads") != 24) @compileError("AreaHeader.offloads");
    if (@offsetOf(AreaHeader, "vlan_tci") != 32) @compileError("AreaHeader.vlan_tci");
    if (@offsetOf(AreaHeader, "vlan_outer") != 34) @compileError("AreaHeader.vlan_outer");
    if (@offsetOf(AreaHeader, "now_ns") != 40) @compileError("AreaHeader.now_ns");
}

/// Descriptor (areas with windows) (area::desc, 32 bytes).
pub const Desc = extern struct {
    /// in: Packet length.
    len: u32,
    /// in: Bytes of the window that hold packet bytes (`min(len, window)`).
    win: u16,
    /// in: Input port.
    port: u16,
    /// in: With `FLOW_HASH` registered, the host's `hash::flow_hash` of the packet; else the RX
    /// port's hash (0: none).
    hash: u32,
    /// in: RX flags (`rx::VLAN`, `rx::TUNNEL`).
    rx_flags: u32,
    /// out: The verdict (`verdict::`).
    verdict: u8,
    _pad17: [1]u8,
    /// out: The verdict's argument: the port for `SEND`, the engine id for `ENGINE`.
    arg: u16,
    /// out: Length change at the front: `n > 0` prepends `n` bytes, `n < 0` strips `-n`.
    head: i16,
    /// out: Length change at the tail: `n > 0` appends `n` bytes, `n < 0` trims `-n`.
    tail: i16,
    /// out: Window bytes `0..dirty` to copy into the packet, after the `HEAD` and `TAIL` changes:
    /// window byte 0 is then the new first byte. At most the window (0 with `DIRECT`).
    dirty: u16,
    /// in: Bytes that can be prepended (`HEAD` at most this).
    headroom: u16,
    /// in: Bytes that can be appended (`TAIL` at most this).
    tailroom: u16,
    _pad30: [2]u8,
};
comptime {
    if (@sizeOf(Desc) != 32) @compileError("Desc size");
    if (@offsetOf(Desc, "len") != 0) @compileError("Desc.len");
    if (@offsetOf(Desc, "win") != 4) @compileError("Desc.win");
    if (@offsetOf(Desc, "port") != 6) @compileError("Desc.port");
    if (@offsetOf(Desc, "hash") != 8) @compileError("Desc.hash");
    if (@offsetOf(Desc, "rx_flags") != 12) @compileError("Desc.rx_flags");
    if (@offsetOf(Desc, "verdict") != 16) @compileError("Desc.verdict");
    if (@offsetOf(Desc, "arg") != 18) @compileError("Desc.arg");
    if (@offsetOf(Desc, "head") != 20) @compileError("Desc.head");
    if (@offsetOf(Desc, "tail") != 22) @compileError("Desc.tail");
    if (@offsetOf(Desc, "dirty") != 24) @compileError("Desc.dirty");
    if (@offsetOf(Desc, "headroom") != 26) @compileError("Desc.headroom");
    if (@offsetOf(Desc, "tailroom") != 28) @compileError("Desc.tailroom");
}

/// Descriptor (areas with `DIRECT`) (area::desc, 32 bytes).
pub const DirectDesc = extern struct {
    /// in: Packet length.
    len: u32,
    /// in: With `DIRECT` (in place of `WIN` and `PORT`): offset in the plugin's memory of the
    /// packet's first byte. Its `HEADROOM` bytes before it and `LEN + TAILROOM` bytes from it are
    /// the buffer's: bytes written in front of it become the packet's with a positive `HEAD`, bytes
    /// written after its end with a positive `TAIL`.
    data: u32,
    /// in: With `FLOW_HASH` registered, the host's `hash::flow_hash` of the packet; else the RX
    /// port's hash (0: none).
    hash: u32,
    /// in: RX flags (`rx::VLAN`, `rx::TUNNEL`).
    rx_flags: u32,
    /// out: The verdict (`verdict::`).
    verdict: u8,
    _pad17: [1]u8,
    /// out: The verdict's argument: the port for `SEND`, the engine id for `ENGINE`.
    arg: u16,
    /// out: Length change at the front: `n > 0` prepends `n` bytes, `n < 0` strips `-n`.
    head: i16,
    /// out: Length change at the tail: `n > 0` appends `n` bytes, `n < 0` trims `-n`.
    tail: i16,
    /// out: Window bytes `0..dirty` to copy into the packet, after the `HEAD` and `TAIL` changes:
    /// window byte 0 is then the new first byte. At most the window (0 with `DIRECT`).
    dirty: u16,
    /// in: Bytes that can be prepended (`HEAD` at most this).
    headroom: u16,
    /// in: Bytes that can be appended (`TAIL` at most this).
    tailroom: u16,
    /// in: With `DIRECT`: input port.
    direct_port: u16,
};
comptime {
    if (@sizeOf(DirectDesc) != 32) @compileError("DirectDesc size");
    if (@offsetOf(DirectDesc, "len") != 0) @compileError("DirectDesc.len");
    if (@offsetOf(DirectDesc, "data") != 4) @compileError("DirectDesc.data");
    if (@offsetOf(DirectDesc, "hash") != 8) @compileError("DirectDesc.hash");
    if (@offsetOf(DirectDesc, "rx_flags") != 12) @compileError("DirectDesc.rx_flags");
    if (@offsetOf(DirectDesc, "verdict") != 16) @compileError("DirectDesc.verdict");
    if (@offsetOf(DirectDesc, "arg") != 18) @compileError("DirectDesc.arg");
    if (@offsetOf(DirectDesc, "head") != 20) @compileError("DirectDesc.head");
    if (@offsetOf(DirectDesc, "tail") != 22) @compileError("DirectDesc.tail");
    if (@offsetOf(DirectDesc, "dirty") != 24) @compileError("DirectDesc.dirty");
    if (@offsetOf(DirectDesc, "headroom") != 26) @compileError("DirectDesc.headroom");
    if (@offsetOf(DirectDesc, "tailroom") != 28) @compileError("DirectDesc.tailroom");
    if (@offsetOf(DirectDesc, "direct_port") != 30) @compileError("DirectDesc.direct_port");
}

/// Direct head (areas with `DIRECT | HEADS`) (area::direct_head, 8 bytes).
pub const DirectHead = extern struct {
    /// in: The packet's length.
    len: u16,
    /// in: Bytes from its first byte to its buffer's end (its length plus its tailroom): how many
    /// may be read or written from `DATA` (past the length, they are not the packet's).
    end: u16,
    /// in: Offset in the plugin's memory of its first byte.
    data: u32,
};
comptime {
    if (@sizeOf(DirectHead) != 8) @compileError("DirectHead size");
    if (@offsetOf(DirectHead, "len") != 0) @compileError("DirectHead.len");
    if (@offsetOf(DirectHead, "end") != 2) @compileError("DirectHead.end");
    if (@offsetOf(DirectHead, "data") != 4) @compileError("DirectHead.data");
}

/// Context header (context, 16 bytes).
pub const ContextHeader = extern struct {
    /// in: The RX port.
    rx_port: u16,
    /// in: The RX queue (the instance).
    queue: u16,
    /// in: The stream's TX port.
    tx_port: u16,
    /// in: Number of ports.
    ports: u16,
    /// in: The worker core (0xFFFF: not pinned).
    lcore: u16,
    _pad10: [6]u8,
};
comptime {
    if (@sizeOf(ContextHeader) != 16) @compileError("ContextHeader size");
    if (@offsetOf(ContextHeader, "rx_port") != 0) @compileError("ContextHeader.rx_port");
    if (@offsetOf(ContextHeader, "queue") != 2) @compileError("ContextHeader.queue");
    if (@offsetOf(ContextHeader, "tx_port") != 4) @compileError("ContextHeader.tx_port");
    if (@offsetOf(ContextHeader, "ports") != 6) @compileError("ContextHeader.ports");
    if (@offsetOf(ContextHeader, "lcore") != 8) @compileError("ContextHeader.lcore");
}

/// Context port entry (context::port, 16 bytes).
pub const ContextPort = extern struct {
    /// in: Its MAC.
    mac: [6]u8,
    /// in: Its peer MAC.
    peer_mac: [6]u8,
    /// in: Flags (`SENDABLE`).
    flags: u16,
    _pad14: [2]u8,
};
comptime {
    if (@sizeOf(ContextPort) != 16) @compileError("ContextPort size");
    if (@offsetOf(ContextPort, "mac") != 0) @compileError("ContextPort.mac");
    if (@offsetOf(ContextPort, "peer_mac") != 6) @compileError("ContextPort.peer_mac");
    if (@offsetOf(ContextPort, "flags") != 12) @compileError("ContextPort.flags");
}

// The host functions (module "wasmdp"). Non-negative results are values, negative ones ERR_ codes
// (nothing changed). Pointers are into the plugin's own memory.

/// burst_len (1.0, burst): Packets in the current burst (the same number as `wasmdp_on_burst`'s
/// argument).
pub extern "wasmdp" fn burst_len() i32;

/// pkt_len (1.0, burst): The length of packet `idx` in bytes.
pub extern "wasmdp" fn pkt_len(idx: i32) i32;

/// pkt_read (1.0, burst): Copies packet bytes `off..off+len` to the plugin's memory at `ptr`
/// (native SIMD memcpy); returns `len`.
pub extern "wasmdp" fn pkt_read(idx: i32, off: i32, ptr: [*]u8, len: i32) i32;

/// pkt_write (1.0, burst): Copies the `len` bytes at `ptr` into the packet at `off`; never grows
/// the packet; returns `len`.
pub extern "wasmdp" fn pkt_write(idx: i32, off: i32, ptr: [*]const u8, len: i32) i32;

/// pkt_copy (1.0, burst): Copies `len` bytes between two packets of the burst, or within one
/// (overlap behaves like `memmove`); returns `len`.
pub extern "wasmdp" fn pkt_copy(dst_idx: i32, dst_off: i32, src_idx: i32, src_off: i32, len: i32) i32;

/// run_engine (1.0, burst): Runs native engine `engine` (`engine::`) on packets
/// `start..start+count`; returns `count`.
pub extern "wasmdp" fn run_engine(engine: i32, start: i32, count: i32) i32;

/// macswap (1.0, burst): The native SIMD MAC swap on packets `start..start+count`: bytes only, no
/// offload marking; returns `count`.
pub extern "wasmdp" fn macswap(start: i32, count: i32) i32;

/// set_offloads (1.0, burst): Adds TX offload `flags` (`flags::ALLOWED`) to packet `idx`, or to
/// every packet with `ALL_PACKETS` (-1); `vlan_tci` is stored with `TX_VLAN`/`TX_QINQ`,
/// `vlan_tci_outer` with `TX_QINQ`. Returns 0.
pub extern "wasmdp" fn set_offloads(idx: i32, flags: i64, vlan_tci: i32, vlan_tci_outer: i32) i32;

/// drop_pkt (1.0, burst): Drops packet `idx` when the call returns (counted as a `policy` drop).
/// Returns 0.
pub extern "wasmdp" fn drop_pkt(idx: i32) i32;

/// send_to (1.0, burst): Transmits packet `idx` on port `port` (index in `ports:`) instead of the
/// stream's TX port. Returns 0.
pub extern "wasmdp" fn send_to(idx: i32, port: i32) i32;

/// set_sticky (1.0, any): For the next `bursts` bursts (-1: until `clear_sticky`), runs `engine`
/// with these offloads natively instead of calling `wasmdp_on_burst`. Returns 0.
pub extern "wasmdp" fn set_sticky(engine: i32, flags: i64, vlan_tci: i32, vlan_tci_outer: i32, bursts: i32) i32;

/// clear_sticky (1.0, any): Ends the sticky decision in force (0 also when there is none).
pub extern "wasmdp" fn clear_sticky() i32;

/// counter_register (1.0, init): Registers a counter named by the `name_len` bytes at `name_ptr`
/// (UTF-8); returns its id. At most `MAX_COUNTERS`.
pub extern "wasmdp" fn counter_register(name_ptr: [*]const u8, name_len: i32) i32;

/// counter_add (1.0, any): Adds `value` (0 or more) to counter `id`. Returns 0.
pub extern "wasmdp" fn counter_add(id: i32, value: i64) i32;

/// param_get (1.0, any): Copies the `params:` value of the key at `key_ptr` (as text) to `out_ptr`;
/// returns its length, `NOT_FOUND`, or `TOO_SMALL` (nothing copied) when longer than `out_cap`.
pub extern "wasmdp" fn param_get(key_ptr: [*]const u8, key_len: i32, out_ptr: [*]u8, out_cap: i32) i32;

/// now_ns (1.0, any): The host's monotonic clock in nanoseconds.
pub extern "wasmdp" fn now_ns() i64;

/// log (1.0, any): Logs the `len` bytes at `ptr` (UTF-8) at `level` (`level::`) through the host's
/// tracing, tagged with the plugin and port.
pub extern "wasmdp" fn log(level: i32, ptr: [*]const u8, len: i32) void;

/// burst_area (1.1, init): Registers the burst area at `ptr`: a header, `max_pkts` descriptors (or
/// lengths, or direct heads) and `max_pkts` windows of `window`'s low 16 bits, shaped by its flags
/// (`area::`). Once per instance. Returns 0.
pub extern "wasmdp" fn burst_area(ptr: [*]u8, max_pkts: i32, window: i32) i32;

/// pkt_adjust (1.1, burst): Changes the length of packet `idx` now: `head > 0` prepends that many
/// bytes (from the headroom; content unspecified until written), `head < 0` strips from the front,
/// `tail > 0` appends (from the tailroom), `tail < 0` trims. Returns the new length; `NO_ROOM`
/// (nothing changed) when it does not fit or would leave less than 14 bytes.
pub extern "wasmdp" fn pkt_adjust(idx: i32, head: i32, tail: i32) i32;

/// pkt_room (1.1, burst): `headroom << 32 | tailroom` of packet `idx`.
pub extern "wasmdp" fn pkt_room(idx: i32) i64;

/// context (1.1, any): Copies the context (`context::`) to `ptr`; returns its size (`TOO_SMALL`,
/// nothing written, when `cap` is smaller).
pub extern "wasmdp" fn context(ptr: [*]u8, cap: i32) i32;

/// map_declare (1.1, init): Declares a map (`map::` kinds) of `capacity` entries of `key_size` and
/// `value_size` bytes, named by the `name_len` bytes at `name_ptr`; returns its id.
pub extern "wasmdp" fn map_declare(name_ptr: [*]const u8, name_len: i32, kind: i32, key_size: i32, value_size: i32, capacity: i32) i32;

/// map_declare_ttl (1.1, init): `map_declare` of a hash kind whose entries expire `ttl_ms`
/// milliseconds after their last use (lookup, update, add); 0 is no expiry, at most
/// `map::MAX_TTL_MS`.
pub extern "wasmdp" fn map_declare_ttl(name_ptr: [*]const u8, name_len: i32, kind: i32, key_size: i32, value_size: i32, capacity: i32, ttl_ms: i64) i32;

/// map_lookup (1.1, any): Copies the value of the key at `key_ptr` (the map's key size) to
/// `value_ptr` (its value size); 0 or `NOT_FOUND`. The two ranges may overlap: the key is read
/// whole before the value is written.
pub extern "wasmdp" fn map_lookup(id: i32, key_ptr: [*]const u8, value_ptr: [*]u8) i32;

/// map_update (1.1, any): Inserts or replaces the key at `key_ptr` with the value at `value_ptr`; 0
/// or `FULL`.
pub extern "wasmdp" fn map_update(id: i32, key_ptr: [*]const u8, value_ptr: [*]const u8) i32;

/// map_delete (1.1, any): Removes the key at `key_ptr` (an array entry is zeroed); 0 or
/// `NOT_FOUND`.
pub extern "wasmdp" fn map_delete(id: i32, key_ptr: [*]const u8) i32;

/// map_add (1.1, any): Atomically adds `delta` to the little-endian `u64` at word `word` (bytes
/// `8*word..8*word+8`) of the key's value, inserting a zeroed value first when the key is absent; 0
/// or `FULL`.
pub extern "wasmdp" fn map_add(id: i32, key_ptr: [*]const u8, word: i32, delta: i64) i32;

/// map_lookup_batch (1.1, any): Looks up `n` (at most 4096) keys laid end to end at `keys_ptr`;
/// writes each value where found at `values_ptr` and a byte 1/0 per key at `found_ptr`; returns how
/// many were found.
pub extern "wasmdp" fn map_lookup_batch(id: i32, keys_ptr: [*]const u8, n: i32, values_ptr: [*]u8, found_ptr: [*]u8) i32;

/// map_update_batch (1.1, any): Inserts or replaces `n` entries (keys at `keys_ptr`, values at
/// `values_ptr`); returns how many were written before the map was full (`n` when all).
pub extern "wasmdp" fn map_update_batch(id: i32, keys_ptr: [*]const u8, values_ptr: [*]const u8, n: i32) i32;

/// map_next_key (1.1, any): The next key of a walk over the map: the `u64` cursor at `cursor_ptr`
/// starts at 0 and is moved on; each call reads at most `map::NEXT_KEY_SLOTS` slots. 1: a key was
/// written at `key_ptr`; 0: none in this window, call again; `NOT_FOUND`: the walk is over.
pub extern "wasmdp" fn map_next_key(id: i32, cursor_ptr: *u64, key_ptr: [*]u8) i32;

/// gauge_register (1.1, init): Registers a gauge (a level shown in the stats) named by the
/// `name_len` bytes at `name_ptr`; returns its id. At most 16.
pub extern "wasmdp" fn gauge_register(name_ptr: [*]const u8, name_len: i32) i32;

/// gauge_set (1.1, any): Sets gauge `id` to `value`. Returns 0.
pub extern "wasmdp" fn gauge_set(id: i32, value: i64) i32;

/// event_register (1.1, init): Registers a kind of event named by the `name_len` bytes at
/// `name_ptr` (1-64 of `[A-Za-z0-9_]`) whose records are `size` bytes (1..=256) laid out as the
/// layout text at `layout_ptr` (`NAME:TYPE ...`, the map layouts' types, adding up to `size`);
/// returns its id; `BAD_RANGE` (the reason logged) otherwise; `FULL` past 64 kinds a port.
pub extern "wasmdp" fn event_register(name_ptr: [*]const u8, name_len: i32, layout_ptr: [*]const u8, layout_len: i32, size: i32) i32;

/// event_emit (1.1, any): Appends the `len` bytes at `ptr` (the kind's size) to the port's event
/// ring; 0, or `FULL` when the ring is full (the event is lost and counted). Never waits.
pub extern "wasmdp" fn event_emit(id: i32, ptr: [*]const u8, len: i32) i32;

/// random (1.1, any): A uniformly random `u64` (as `i64` bits) from the instance's own generator,
/// seeded from the operating system when the instance is made (not for cryptography): for sampling
/// and for picking backends.
pub extern "wasmdp" fn random() i64;
