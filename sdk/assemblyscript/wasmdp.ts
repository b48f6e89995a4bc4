// The wasmdp plugin ABI 1.1 for AssemblyScript: imports, constants and the byte offsets of the
// burst area's and the context's fields (little-endian). GENERATED from the wasmdp-abi crate
// (sdk/abi) by `WASMDP_BLESS=1 cargo test -p wasmdp-abi --test generated`: do not edit. The prose
// is docs/ABI.md.

// The ABI version a module returns from wasmdp_abi_version.
export const ABI_MAJOR: u32 = 1;
export const ABI_MINOR: u32 = 1;
export const ABI_VERSION: u32 = 0x10001;

// Limits.
export const MAX_BURST: u32 = 512;
export const ALL_PACKETS: i32 = (-1);
export const MAX_COUNTERS: u32 = 16;

// Engine ids (run_engine, set_sticky, the area's engine and ENGINE verdicts).
export const ENGINE_IO: u32 = 0;
export const ENGINE_MAC: u32 = 1;
export const ENGINE_MACSWAP: u32 = 2;
export const ENGINE_FIVETSWAP: u32 = 3;
export const ENGINE_COPY: u32 = 4;
export const ENGINE_RXONLY: u32 = 5;
export const ENGINE_VXLAN_ENCAP: u32 = 6;
export const ENGINE_VXLAN_DECAP: u32 = 7;
export const ENGINE_GENEVE_ENCAP: u32 = 8;
export const ENGINE_GENEVE_DECAP: u32 = 9;
export const ENGINE_COUNT: u32 = 10;

// TX offload flags (ol_flags bits).
export const FLAG_TX_VLAN: u64 = 0x10000000000;
export const FLAG_TX_QINQ: u64 = 0x20000000000;
export const FLAG_TX_MACSEC: u64 = 0x40000000000;
export const FLAG_TX_IP_CKSUM: u64 = 0x80000000000;
export const FLAG_TX_UDP_CKSUM: u64 = 0x100000000000;
export const FLAG_TX_TCP_CKSUM: u64 = 0x200000000000;
export const FLAG_ALLOWED: u64 = 0x3f0000000000;

// Error codes (negative results).
export const ERR_BAD_INDEX: i32 = (-1);
export const ERR_BAD_RANGE: i32 = (-2);
export const ERR_BAD_MEMORY: i32 = (-3);
export const ERR_BAD_ENGINE: i32 = (-4);
export const ERR_BAD_PORT: i32 = (-5);
export const ERR_BAD_FLAGS: i32 = (-6);
export const ERR_NOT_FOUND: i32 = (-7);
export const ERR_TOO_SMALL: i32 = (-8);
export const ERR_NO_BURST: i32 = (-9);
export const ERR_GONE: i32 = (-10);
export const ERR_FULL: i32 = (-11);
export const ERR_NO_ROOM: i32 = (-12);
export const ERR_NOT_INIT: i32 = (-13);

// Log levels.
export const LEVEL_ERROR: u32 = 1;
export const LEVEL_WARN: u32 = 2;
export const LEVEL_INFO: u32 = 3;
export const LEVEL_DEBUG: u32 = 4;

// wasmdp_on_burst's engine verdict: WASMDP_RUN_ENGINE | id.
export const RUN_ENGINE: u32 = 0x10000;

// The burst area: sizes and burst_area's window flags.
export const AREA_HEADER: u32 = 64;
export const AREA_DESC: u32 = 32;
export const AREA_MAX_WINDOW: u32 = 1024;
export const AREA_WINDOW_BYTES: u32 = 0xffff;
export const AREA_FLOW_HASH: u32 = 0x10000;
export const AREA_HEADS: u32 = 0x20000;
export const AREA_DIRECT: u32 = 0x40000;
export const AREA_DROPS: u32 = 0x80000;
export const AREA_DIRECT_HEAD: u32 = 8;
export const AREA_LEN_BYTES: u32 = 4;

// Descriptor verdicts.
export const VERDICT_PASS: u32 = 0;
export const VERDICT_DROP: u32 = 1;
export const VERDICT_SEND: u32 = 2;
export const VERDICT_ENGINE: u32 = 3;

// Descriptor RX flags.
export const RX_VLAN: u32 = 256;
export const RX_TUNNEL: u32 = 512;

// The context: sizes and port flags.
export const CONTEXT_HEADER: u32 = 16;
export const CONTEXT_PORT: u32 = 16;
export const CONTEXT_SENDABLE: u32 = 1;
export const CONTEXT_MAX_PORTS: u32 = 256;

// Map kinds and limits.
export const MAP_HASH: u32 = 0;
export const MAP_ARRAY: u32 = 1;
export const MAP_PERCPU_HASH: u32 = 2;
export const MAP_PERCPU_ARRAY: u32 = 3;
export const MAP_LRU_HASH: u32 = 4;
export const MAP_LPM_TRIE: u32 = 5;
export const MAP_NEXT_KEY_SLOTS: u32 = 256;
export const MAP_MAX_LPM_DATA: u32 = 16;
export const MAP_MAX_TTL_MS: u64 = 0x757b12c00;
export const MAP_MAX_KEY: u32 = 64;
export const MAP_MAX_VALUE: u32 = 1024;
export const MAP_MAX_CAPACITY: u32 = 0x1000000;
export const MAP_MAX_NAME: u32 = 64;

// Burst area header (area::hdr, 64 bytes): byte offsets.
// u32 in: packets in the burst.
export const AREA_HEADER_LEN: u32 = 0;
// u16 in: the rx port (index in `ports:`).
export const AREA_HEADER_PORT: u32 = 4;
// u16 in: the rx queue.
export const AREA_HEADER_QUEUE: u32 = 6;
// u16 in: the stream's tx port.
export const AREA_HEADER_TX_PORT: u32 = 8;
// u16 in: bytes per window.
export const AREA_HEADER_WINDOW: u32 = 10;
// i32 out: engine id run natively on every packet whose verdict is `pass` (-1: none).
export const AREA_HEADER_ENGINE: u32 = 12;
// u32 out: nonzero when the plugin wrote any descriptor's out fields (heads: any window); 0 lets
// the host skip reading them (all `pass`, nothing to write back).
export const AREA_HEADER_CHANGED: u32 = 16;
// u64 out: tx offload flags (`flags::allowed`) for every packet that is transmitted.
export const AREA_HEADER_OFFLOADS: u32 = 24;
// u16 out: inner vlan tci for `tx_vlan`/`tx_qinq`.
export const AREA_HEADER_VLAN_TCI: u32 = 32;
// u16 out: outer vlan tci for `tx_qinq`.
export const AREA_HEADER_VLAN_OUTER: u32 = 34;
// u64 in: the host's monotonic clock (nanoseconds, as `now_ns`) when the call began, to within the
// host's epoch tick (250 us): read once per burst, not per call.
export const AREA_HEADER_NOW_NS: u32 = 40;

// Descriptor (areas with windows) (area::desc, 32 bytes): byte offsets.
// u32 in: packet length.
export const DESC_LEN: u32 = 0;
// u16 in: bytes of the window that hold packet bytes (`min(len, window)`).
export const DESC_WIN: u32 = 4;
// u16 in: input port.
export const DESC_PORT: u32 = 6;
// u32 in: with `direct` (in place of `win` and `port`): offset in the plugin's memory of the
// packet's first byte. its `headroom` bytes before it and `len + tailroom` bytes from it are the
// buffer's: bytes written in front of it become the packet's with a positive `head`, bytes written
// after its end with a positive `tail`.
export const DESC_DATA: u32 = 4;
// u32 in: with `flow_hash` registered, the host's `hash::flow_hash` of the packet; else the rx
// port's hash (0: none).
export const DESC_HASH: u32 = 8;
// u32 in: rx flags (`rx::vlan`, `rx::tunnel`).
export const DESC_RX_FLAGS: u32 = 12;
// u8 out: the verdict (`verdict::`).
export const DESC_VERDICT: u32 = 16;
// u16 out: the verdict's argument: the port for `send`, the engine id for `engine`.
export const DESC_ARG: u32 = 18;
// i16 out: length change at the front: `n > 0` prepends `n` bytes, `n < 0` strips `-n`.
export const DESC_HEAD: u32 = 20;
// i16 out: length change at the tail: `n > 0` appends `n` bytes, `n < 0` trims `-n`.
export const DESC_TAIL: u32 = 22;
// u16 out: window bytes `0..dirty` to copy into the packet, after the `head` and `tail` changes:
// window byte 0 is then the new first byte. at most the window (0 with `direct`).
export const DESC_DIRTY: u32 = 24;
// u16 in: bytes that can be prepended (`head` at most this).
export const DESC_HEADROOM: u32 = 26;
// u16 in: bytes that can be appended (`tail` at most this).
export const DESC_TAILROOM: u32 = 28;
// u16 in: with `direct`: input port.
export const DESC_DIRECT_PORT: u32 = 30;

// Direct head (areas with `DIRECT | HEADS`) (area::direct_head, 8 bytes): byte offsets.
// u16 in: the packet's length.
export const DIRECT_HEAD_LEN: u32 = 0;
// u16 in: bytes from its first byte to its buffer's end (its length plus its tailroom): how many
// may be read or written from `data` (past the length, they are not the packet's).
export const DIRECT_HEAD_END: u32 = 2;
// u32 in: offset in the plugin's memory of its first byte.
export const DIRECT_HEAD_DATA: u32 = 4;

// Context header (context, 16 bytes): byte offsets.
// u16 in: the rx port.
export const CONTEXT_HEADER_RX_PORT: u32 = 0;
// u16 in: the rx queue (the instance).
export const CONTEXT_HEADER_QUEUE: u32 = 2;
// u16 in: the stream's tx port.
export const CONTEXT_HEADER_TX_PORT: u32 = 4;
// u16 in: number of ports.
export const CONTEXT_HEADER_PORTS: u32 = 6;
// u16 in: the worker core (0xffff: not pinned).
export const CONTEXT_HEADER_LCORE: u32 = 8;

// Context port entry (context::port, 16 bytes): byte offsets.
// mac in: its mac.
export const CONTEXT_PORT_MAC: u32 = 0;
// mac in: its peer mac.
export const CONTEXT_PORT_PEER_MAC: u32 = 6;
// u16 in: flags (`sendable`).
export const CONTEXT_PORT_FLAGS: u32 = 12;

// The host functions (module "wasmdp"). Non-negative results are values, negative ones ERR_ codes
// (nothing changed). Pointers are addresses in the plugin's own memory (usize).
// burst_len (1.0, burst): Packets in the current burst (the same number as `wasmdp_on_burst`'s
// argument).
@external("wasmdp", "burst_len")
export declare function burst_len(): i32;

// pkt_len (1.0, burst): The length of packet `idx` in bytes.
@external("wasmdp", "pkt_len")
export declare function pkt_len(idx: i32): i32;

// pkt_read (1.0, burst): Copies packet bytes `off..off+len` to the plugin's memory at `ptr` (native
// SIMD memcpy); returns `len`.
@external("wasmdp", "pkt_read")
export declare function pkt_read(idx: i32, off: i32, ptr: usize, len: i32): i32;

// pkt_write (1.0, burst): Copies the `len` bytes at `ptr` into the packet at `off`; never grows the
// packet; returns `len`.
@external("wasmdp", "pkt_write")
export declare function pkt_write(idx: i32, off: i32, ptr: usize, len: i32): i32;

// pkt_copy (1.0, burst): Copies `len` bytes between two packets of the burst, or within one
// (overlap behaves like `memmove`); returns `len`.
@external("wasmdp", "pkt_copy")
export declare function pkt_copy(dst_idx: i32, dst_off: i32, src_idx: i32, src_off: i32, len: i32): i32;

// run_engine (1.0, burst): Runs native engine `engine` (`engine::`) on packets
// `start..start+count`; returns `count`.
@external("wasmdp", "run_engine")
export declare function run_engine(engine: i32, start: i32, count: i32): i32;

// macswap (1.0, burst): The native SIMD MAC swap on packets `start..start+count`: bytes only, no
// offload marking; returns `count`.
@external("wasmdp", "macswap")
export declare function macswap(start: i32, count: i32): i32;

// set_offloads (1.0, burst): Adds TX offload `flags` (`flags::ALLOWED`) to packet `idx`, or to
// every packet with `ALL_PACKETS` (-1); `vlan_tci` is stored with `TX_VLAN`/`TX_QINQ`,
// `vlan_tci_outer` with `TX_QINQ`. Returns 0.
@external("wasmdp", "set_offloads")
export declare function set_offloads(idx: i32, flags: i64, vlan_tci: i32, vlan_tci_outer: i32): i32;

// drop_pkt (1.0, burst): Drops packet `idx` when the call returns (counted as a `policy` drop).
// Returns 0.
@external("wasmdp", "drop_pkt")
export declare function drop_pkt(idx: i32): i32;

// send_to (1.0, burst): Transmits packet `idx` on port `port` (index in `ports:`) instead of the
// stream's TX port. Returns 0.
@external("wasmdp", "send_to")
export declare function send_to(idx: i32, port: i32): i32;

// set_sticky (1.0, any): For the next `bursts` bursts (-1: until `clear_sticky`), runs `engine`
// with these offloads natively instead of calling `wasmdp_on_burst`. Returns 0.
@external("wasmdp", "set_sticky")
export declare function set_sticky(engine: i32, flags: i64, vlan_tci: i32, vlan_tci_outer: i32, bursts: i32): i32;

// clear_sticky (1.0, any): Ends the sticky decision in force (0 also when there is none).
@external("wasmdp", "clear_sticky")
export declare function clear_sticky(): i32;

// counter_register (1.0, init): Registers a counter named by the `name_len` bytes at `name_ptr`
// (UTF-8); returns its id. At most `MAX_COUNTERS`.
@external("wasmdp", "counter_register")
export declare function counter_register(name_ptr: usize, name_len: i32): i32;

// counter_add (1.0, any): Adds `value` (0 or more) to counter `id`. Returns 0.
@external("wasmdp", "counter_add")
export declare function counter_add(id: i32, value: i64): i32;

// param_get (1.0, any): Copies the `params:` value of the key at `key_ptr` (as text) to `out_ptr`;
// returns its length, `NOT_FOUND`, or `TOO_SMALL` (nothing copied) when longer than `out_cap`.
@external("wasmdp", "param_get")
export declare function param_get(key_ptr: usize, key_len: i32, out_ptr: usize, out_cap: i32): i32;

// now_ns (1.0, any): The host's monotonic clock in nanoseconds.
@external("wasmdp", "now_ns")
export declare function now_ns(): i64;

// log (1.0, any): Logs the `len` bytes at `ptr` (UTF-8) at `level` (`level::`) through the host's
// tracing, tagged with the plugin and port.
@external("wasmdp", "log")
export declare function log(level: i32, ptr: usize, len: i32): void;

// burst_area (1.1, init): Registers the burst area at `ptr`: a header, `max_pkts` descriptors (or
// lengths, or direct heads) and `max_pkts` windows of `window`'s low 16 bits, shaped by its flags
// (`area::`). Once per instance. Returns 0.
@external("wasmdp", "burst_area")
export declare function burst_area(ptr: usize, max_pkts: i32, window: i32): i32;

// pkt_adjust (1.1, burst): Changes the length of packet `idx` now: `head > 0` prepends that many
// bytes (from the headroom; content unspecified until written), `head < 0` strips from the front,
// `tail > 0` appends (from the tailroom), `tail < 0` trims. Returns the new length; `NO_ROOM`
// (nothing changed) when it does not fit or would leave less than 14 bytes.
@external("wasmdp", "pkt_adjust")
export declare function pkt_adjust(idx: i32, head: i32, tail: i32): i32;

// pkt_room (1.1, burst): `headroom << 32 | tailroom` of packet `idx`.
@external("wasmdp", "pkt_room")
export declare function pkt_room(idx: i32): i64;

// context (1.1, any): Copies the context (`context::`) to `ptr`; returns its size (`TOO_SMALL`,
// nothing written, when `cap` is smaller).
@external("wasmdp", "context")
export declare function context(ptr: usize, cap: i32): i32;

// map_declare (1.1, init): Declares a map (`map::` kinds) of `capacity` entries of `key_size` and
// `value_size` bytes, named by the `name_len` bytes at `name_ptr`; returns its id.
@external("wasmdp", "map_declare")
export declare function map_declare(name_ptr: usize, name_len: i32, kind: i32, key_size: i32, value_size: i32, capacity: i32): i32;

// map_declare_ttl (1.1, init): `map_declare` of a hash kind whose entries expire `ttl_ms`
// milliseconds after their last use (lookup, update, add); 0 is no expiry, at most
// `map::MAX_TTL_MS`.
@external("wasmdp", "map_declare_ttl")
export declare function map_declare_ttl(name_ptr: usize, name_len: i32, kind: i32, key_size: i32, value_size: i32, capacity: i32, ttl_ms: i64): i32;

// map_lookup (1.1, any): Copies the value of the key at `key_ptr` (the map's key size) to
// `value_ptr` (its value size); 0 or `NOT_FOUND`. The two ranges may overlap: the key is read whole
// before the value is written.
@external("wasmdp", "map_lookup")
export declare function map_lookup(id: i32, key_ptr: usize, value_ptr: usize): i32;

// map_update (1.1, any): Inserts or replaces the key at `key_ptr` with the value at `value_ptr`; 0
// or `FULL`.
@external("wasmdp", "map_update")
export declare function map_update(id: i32, key_ptr: usize, value_ptr: usize): i32;

// map_delete (1.1, any): Removes the key at `key_ptr` (an array entry is zeroed); 0 or `NOT_FOUND`.
@external("wasmdp", "map_delete")
export declare function map_delete(id: i32, key_ptr: usize): i32;

// map_add (1.1, any): Atomically adds `delta` to the little-endian `u64` at word `word` (bytes
// `8*word..8*word+8`) of the key's value, inserting a zeroed value first when the key is absent; 0
// or `FULL`.
@external("wasmdp", "map_add")
export declare function map_add(id: i32, key_ptr: usize, word: i32, delta: i64): i32;

// map_lookup_batch (1.1, any): Looks up `n` (at most 4096) keys laid end to end at `keys_ptr`;
// writes each value where found at `values_ptr` and a byte 1/0 per key at `found_ptr`; returns how
// many were found.
@external("wasmdp", "map_lookup_batch")
export declare function map_lookup_batch(id: i32, keys_ptr: usize, n: i32, values_ptr: usize, found_ptr: usize): i32;

// map_update_batch (1.1, any): Inserts or replaces `n` entries (keys at `keys_ptr`, values at
// `values_ptr`); returns how many were written before the map was full (`n` when all).
@external("wasmdp", "map_update_batch")
export declare function map_update_batch(id: i32, keys_ptr: usize, values_ptr: usize, n: i32): i32;

// map_next_key (1.1, any): The next key of a walk over the map: the `u64` cursor at `cursor_ptr`
// starts at 0 and is moved on; each call reads at most `map::NEXT_KEY_SLOTS` slots. 1: a key was
// written at `key_ptr`; 0: none in this window, call again; `NOT_FOUND`: the walk is over.
@external("wasmdp", "map_next_key")
export declare function map_next_key(id: i32, cursor_ptr: usize, key_ptr: usize): i32;

// gauge_register (1.1, init): Registers a gauge (a level shown in the stats) named by the
// `name_len` bytes at `name_ptr`; returns its id. At most 16.
@external("wasmdp", "gauge_register")
export declare function gauge_register(name_ptr: usize, name_len: i32): i32;

// gauge_set (1.1, any): Sets gauge `id` to `value`. Returns 0.
@external("wasmdp", "gauge_set")
export declare function gauge_set(id: i32, value: i64): i32;

// event_register (1.1, init): Registers a kind of event named by the `name_len` bytes at `name_ptr`
// (1-64 of `[A-Za-z0-9_]`) whose records are `size` bytes (1..=256) laid out as the layout text at
// `layout_ptr` (`NAME:TYPE ...`, the map layouts' types, adding up to `size`); returns its id;
// `BAD_RANGE` (the reason logged) otherwise; `FULL` past 64 kinds a port.
@external("wasmdp", "event_register")
export declare function event_register(name_ptr: usize, name_len: i32, layout_ptr: usize, layout_len: i32, size: i32): i32;

// event_emit (1.1, any): Appends the `len` bytes at `ptr` (the kind's size) to the port's event
// ring; 0, or `FULL` when the ring is full (the event is lost and counted). Never waits.
@external("wasmdp", "event_emit")
export declare function event_emit(id: i32, ptr: usize, len: i32): i32;

// random (1.1, any): A uniformly random `u64` (as `i64` bits) from the instance's own generator,
// seeded from the operating system when the instance is made (not for cryptography): for sampling
// and for picking backends.
@external("wasmdp", "random")
export declare function random(): i64;
