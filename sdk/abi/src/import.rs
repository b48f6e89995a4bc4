//! Names of the host functions (module [`IMPORT_MODULE`](crate::IMPORT_MODULE)) with their signatures. Packet indexes are
//! positions in the current burst; every index, offset, length and guest pointer is checked and a
//! bad one returns an [`err`](crate::err) code, never touching memory outside the burst or the plugin's memory.

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

/// `(name_ptr, name_len, layout_ptr, layout_len, size: i32) -> i32` (init only): registers a
/// kind of event called `name` whose records are `size` bytes laid out as `layout` (`NAME:TYPE
/// ...`, the map layouts' types, adding up to `size`); returns its id. `FULL` when the port has
/// `events::MAX_KINDS` kinds already.
pub const EVENT_REGISTER: &str = "event_register";
/// `(id, ptr, len: i32) -> i32`: appends `len` bytes at `ptr` (the kind's size) to the port's
/// event ring; 0, or `FULL` when the ring is full (the event is lost and counted). Never waits.
pub const EVENT_EMIT: &str = "event_emit";

/// A value type of an import's signature.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ty {
    /// `i32`.
    I32,
    /// `i64`.
    I64,
}

/// One host function: its name, parameter and result types, and the minor ABI version that
/// introduced it (a module declaring an older one may not import it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Import {
    /// Its name in module [`IMPORT_MODULE`](crate::IMPORT_MODULE).
    pub name: &'static str,
    /// Parameter types.
    pub params: &'static [Ty],
    /// Result types (none or one).
    pub results: &'static [Ty],
    /// The minor version of ABI 1 that introduced it.
    pub since: u32,
}

const fn imp(name: &'static str, params: &'static [Ty], results: &'static [Ty], since: u32) -> Import {
    Import { name, params, results, since }
}

use Ty::{I32, I64};
const R: &[Ty] = &[I32];

/// Every host function: the one table the host checks a module's imports against (signatures and
/// versions); the names above are its entries'.
pub const IMPORTS: &[Import] = &[
    imp(BURST_LEN, &[], R, 0),
    imp(PKT_LEN, &[I32], R, 0),
    imp(PKT_READ, &[I32, I32, I32, I32], R, 0),
    imp(PKT_WRITE, &[I32, I32, I32, I32], R, 0),
    imp(PKT_COPY, &[I32, I32, I32, I32, I32], R, 0),
    imp(RUN_ENGINE, &[I32, I32, I32], R, 0),
    imp(MACSWAP, &[I32, I32], R, 0),
    imp(SET_OFFLOADS, &[I32, I64, I32, I32], R, 0),
    imp(DROP_PKT, &[I32], R, 0),
    imp(SEND_TO, &[I32, I32], R, 0),
    imp(SET_STICKY, &[I32, I64, I32, I32, I32], R, 0),
    imp(CLEAR_STICKY, &[], R, 0),
    imp(COUNTER_REGISTER, &[I32, I32], R, 0),
    imp(COUNTER_ADD, &[I32, I64], R, 0),
    imp(PARAM_GET, &[I32, I32, I32, I32], R, 0),
    imp(NOW_NS, &[], &[I64], 0),
    imp(LOG, &[I32, I32, I32], &[], 0),
    imp(BURST_AREA, &[I32, I32, I32], R, 1),
    imp(PKT_ADJUST, &[I32, I32, I32], R, 1),
    imp(PKT_ROOM, &[I32], &[I64], 1),
    imp(CONTEXT, &[I32, I32], R, 1),
    imp(MAP_DECLARE, &[I32, I32, I32, I32, I32, I32], R, 1),
    imp(MAP_DECLARE_TTL, &[I32, I32, I32, I32, I32, I32, I64], R, 1),
    imp(MAP_LOOKUP, &[I32, I32, I32], R, 1),
    imp(MAP_UPDATE, &[I32, I32, I32], R, 1),
    imp(MAP_DELETE, &[I32, I32], R, 1),
    imp(MAP_ADD, &[I32, I32, I32, I64], R, 1),
    imp(MAP_LOOKUP_BATCH, &[I32, I32, I32, I32, I32], R, 1),
    imp(MAP_UPDATE_BATCH, &[I32, I32, I32, I32], R, 1),
    imp(MAP_NEXT_KEY, &[I32, I32, I32], R, 1),
    imp(GAUGE_REGISTER, &[I32, I32], R, 1),
    imp(GAUGE_SET, &[I32, I64], R, 1),
    imp(EVENT_REGISTER, &[I32, I32, I32, I32, I32], R, 1),
    imp(EVENT_EMIT, &[I32, I32, I32], R, 1),
];

/// The host function called `name`.
pub fn find(name: &str) -> Option<&'static Import> {
    IMPORTS.iter().find(|i| i.name == name)
}

/// The minor ABI version that introduced import `name` (None: not an import).
pub fn since(name: &str) -> Option<u32> {
    find(name).map(|i| i.since)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_import_is_in_the_table_once() {
        for (k, i) in IMPORTS.iter().enumerate() {
            assert!(IMPORTS[k + 1..].iter().all(|j| j.name != i.name), "{} twice", i.name);
            assert!(i.results.len() <= 1, "{}", i.name);
        }
        assert_eq!(since(LOG), Some(0));
        assert_eq!(since(EVENT_EMIT), Some(1));
        assert_eq!(since("nope"), None);
    }
}
