//! The host functions (module [`IMPORT_MODULE`](crate::IMPORT_MODULE)): **the one table** of the
//! ABI's imports, [`for_each_import!`](crate::for_each_import), and what is made from it here: a
//! constant per name ([`BURST_LEN`], ...) and [`IMPORTS`], which the host checks a module's imports
//! against (signature, version). The SDK makes its `extern` block, its native `Host` trait and the
//! mock's dispatch from the same table; `sdk/c/wasmdp.h` and docs/ABI.md's import table are
//! generated from [`IMPORTS`] (`sdk/abi/tests/generated.rs` fails when they are stale).
//!
//! Packet indexes are positions in the current burst; every index, offset, length and guest pointer
//! is checked and a bad one returns an [`err`](crate::err) code, never touching memory outside the
//! burst or the plugin's memory.

/// Calls `$callback! { ... }` with every import of the ABI, in order, each as
///
/// ```text
/// /// doc lines
/// [SINCE WHEN] CONST name(arg: WASM_TYPE [=> NATIVE_TYPE], ...) -> RESULT;
/// ```
///
/// `SINCE` is the minor ABI version that introduced it, `WHEN` when it may be called (`burst`:
/// only during `wasmdp_on_burst`; `init`: only during `wasmdp_init`; `any`), `CONST` the name of its
/// constant here, `WASM_TYPE` `i32` or `i64`, `NATIVE_TYPE` what a native build passes in its place
/// (a slice for a pointer into the plugin's memory; the wasm type when absent,
/// [`native_ty!`](crate::native_ty)), `RESULT` `i32`, `i64` or `()`.
///
/// Adding an import is adding its entry here and implementing it in the host (the linker, the
/// native host) and the mock; everything else follows.
#[macro_export]
macro_rules! for_each_import {
    ($callback:ident) => {
        $callback! {
            /// Packets in the current burst (the same number as `wasmdp_on_burst`'s argument).
            [0 burst] BURST_LEN burst_len() -> i32;
            /// The length of packet `idx` in bytes.
            [0 burst] PKT_LEN pkt_len(idx: i32) -> i32;
            /// Copies packet bytes `off..off+len` to the plugin's memory at `ptr` (native SIMD
            /// memcpy); returns `len`.
            [0 burst] PKT_READ pkt_read(idx: i32, off: i32, ptr: i32 => &mut [u8], len: i32) -> i32;
            /// Copies the `len` bytes at `ptr` into the packet at `off`; never grows the packet;
            /// returns `len`.
            [0 burst] PKT_WRITE pkt_write(idx: i32, off: i32, ptr: i32 => &[u8], len: i32) -> i32;
            /// Copies `len` bytes between two packets of the burst, or within one (overlap behaves
            /// like `memmove`); returns `len`.
            [0 burst] PKT_COPY pkt_copy(dst_idx: i32, dst_off: i32, src_idx: i32, src_off: i32, len: i32) -> i32;
            /// Runs native engine `engine` (`engine::`) on packets `start..start+count`; returns
            /// `count`.
            [0 burst] RUN_ENGINE run_engine(engine: i32, start: i32, count: i32) -> i32;
            /// The native SIMD MAC swap on packets `start..start+count`: bytes only, no offload
            /// marking; returns `count`.
            [0 burst] MACSWAP macswap(start: i32, count: i32) -> i32;
            /// Adds TX offload `flags` (`flags::ALLOWED`) to packet `idx`, or to every packet with
            /// `ALL_PACKETS` (-1); `vlan_tci` is stored with `TX_VLAN`/`TX_QINQ`, `vlan_tci_outer`
            /// with `TX_QINQ`. Returns 0.
            [0 burst] SET_OFFLOADS set_offloads(idx: i32, flags: i64, vlan_tci: i32, vlan_tci_outer: i32) -> i32;
            /// Drops packet `idx` when the call returns (counted as a `policy` drop). Returns 0.
            [0 burst] DROP_PKT drop_pkt(idx: i32) -> i32;
            /// Transmits packet `idx` on port `port` (index in `ports:`) instead of the stream's TX
            /// port. Returns 0.
            [0 burst] SEND_TO send_to(idx: i32, port: i32) -> i32;
            /// For the next `bursts` bursts (-1: until `clear_sticky`), runs `engine` with these
            /// offloads natively instead of calling `wasmdp_on_burst`. Returns 0.
            [0 any] SET_STICKY set_sticky(engine: i32, flags: i64, vlan_tci: i32, vlan_tci_outer: i32, bursts: i32) -> i32;
            /// Ends the sticky decision in force (0 also when there is none).
            [0 any] CLEAR_STICKY clear_sticky() -> i32;
            /// Registers a counter named by the `name_len` bytes at `name_ptr` (UTF-8); returns its
            /// id. At most `MAX_COUNTERS`.
            [0 init] COUNTER_REGISTER counter_register(name_ptr: i32 => &str, name_len: i32) -> i32;
            /// Adds `value` (0 or more) to counter `id`. Returns 0.
            [0 any] COUNTER_ADD counter_add(id: i32, value: i64) -> i32;
            /// Copies the `params:` value of the key at `key_ptr` (as text) to `out_ptr`; returns
            /// its length, `NOT_FOUND`, or `TOO_SMALL` (nothing copied) when longer than `out_cap`.
            [0 any] PARAM_GET param_get(key_ptr: i32 => &str, key_len: i32, out_ptr: i32 => &mut [u8], out_cap: i32) -> i32;
            /// The host's monotonic clock in nanoseconds.
            [0 any] NOW_NS now_ns() -> i64;
            /// Logs the `len` bytes at `ptr` (UTF-8) at `level` (`level::`) through the host's
            /// tracing, tagged with the plugin and port.
            [0 any] LOG log(level: i32, ptr: i32 => &str, len: i32) -> ();
            /// Registers the burst area at `ptr`: a header, `max_pkts` descriptors (or lengths, or
            /// direct heads) and `max_pkts` windows of `window`'s low 16 bits, shaped by its flags
            /// (`area::`). Once per instance. Returns 0.
            [1 init] BURST_AREA burst_area(ptr: i32 => *mut [u8], max_pkts: i32, window: i32) -> i32;
            /// Changes the length of packet `idx` now: `head > 0` prepends that many bytes (from the
            /// headroom; content unspecified until written), `head < 0` strips from the front,
            /// `tail > 0` appends (from the tailroom), `tail < 0` trims. Returns the new length;
            /// `NO_ROOM` (nothing changed) when it does not fit or would leave less than 14 bytes.
            [1 burst] PKT_ADJUST pkt_adjust(idx: i32, head: i32, tail: i32) -> i32;
            /// `headroom << 32 | tailroom` of packet `idx`.
            [1 burst] PKT_ROOM pkt_room(idx: i32) -> i64;
            /// Copies the context (`context::`) to `ptr`; returns its size (`TOO_SMALL`, nothing
            /// written, when `cap` is smaller).
            [1 any] CONTEXT context(ptr: i32 => &mut [u8], cap: i32) -> i32;
            /// Declares a map (`map::` kinds) of `capacity` entries of `key_size` and `value_size`
            /// bytes, named by the `name_len` bytes at `name_ptr`; returns its id.
            [1 init] MAP_DECLARE map_declare(name_ptr: i32 => &str, name_len: i32, kind: i32, key_size: i32, value_size: i32, capacity: i32) -> i32;
            /// `map_declare` of a hash kind whose entries expire `ttl_ms` milliseconds after their
            /// last use (lookup, update, add); 0 is no expiry, at most `map::MAX_TTL_MS`.
            [1 init] MAP_DECLARE_TTL map_declare_ttl(name_ptr: i32 => &str, name_len: i32, kind: i32, key_size: i32, value_size: i32, capacity: i32, ttl_ms: i64) -> i32;
            /// Copies the value of the key at `key_ptr` (the map's key size) to `value_ptr` (its
            /// value size); 0 or `NOT_FOUND`. The two ranges may overlap: the key is read whole
            /// before the value is written.
            [1 any] MAP_LOOKUP map_lookup(id: i32, key_ptr: i32 => &[u8], value_ptr: i32 => &mut [u8]) -> i32;
            /// Inserts or replaces the key at `key_ptr` with the value at `value_ptr`; 0 or `FULL`.
            [1 any] MAP_UPDATE map_update(id: i32, key_ptr: i32 => &[u8], value_ptr: i32 => &[u8]) -> i32;
            /// Removes the key at `key_ptr` (an array entry is zeroed); 0 or `NOT_FOUND`.
            [1 any] MAP_DELETE map_delete(id: i32, key_ptr: i32 => &[u8]) -> i32;
            /// Atomically adds `delta` to the little-endian `u64` at word `word` (bytes
            /// `8*word..8*word+8`) of the key's value, inserting a zeroed value first when the key
            /// is absent; 0 or `FULL`.
            [1 any] MAP_ADD map_add(id: i32, key_ptr: i32 => &[u8], word: i32, delta: i64) -> i32;
            /// Looks up `n` (at most 4096) keys laid end to end at `keys_ptr`; writes each value
            /// where found at `values_ptr` and a byte 1/0 per key at `found_ptr`; returns how many
            /// were found.
            [1 any] MAP_LOOKUP_BATCH map_lookup_batch(id: i32, keys_ptr: i32 => &[u8], n: i32, values_ptr: i32 => &mut [u8], found_ptr: i32 => &mut [u8]) -> i32;
            /// Inserts or replaces `n` entries (keys at `keys_ptr`, values at `values_ptr`); returns
            /// how many were written before the map was full (`n` when all).
            [1 any] MAP_UPDATE_BATCH map_update_batch(id: i32, keys_ptr: i32 => &[u8], values_ptr: i32 => &[u8], n: i32) -> i32;
            /// The next key of a walk over the map: the `u64` cursor at `cursor_ptr` starts at 0 and
            /// is moved on; each call reads at most `map::NEXT_KEY_SLOTS` slots. 1: a key was written
            /// at `key_ptr`; 0: none in this window, call again; `NOT_FOUND`: the walk is over.
            [1 any] MAP_NEXT_KEY map_next_key(id: i32, cursor_ptr: i32 => &mut u64, key_ptr: i32 => &mut [u8]) -> i32;
            /// Registers a gauge (a level shown in the stats) named by the `name_len` bytes at
            /// `name_ptr`; returns its id. At most 16.
            [1 init] GAUGE_REGISTER gauge_register(name_ptr: i32 => &str, name_len: i32) -> i32;
            /// Sets gauge `id` to `value`. Returns 0.
            [1 any] GAUGE_SET gauge_set(id: i32, value: i64) -> i32;
            /// Registers a kind of event named by the `name_len` bytes at `name_ptr` (1-64 of
            /// `[A-Za-z0-9_]`) whose records are `size` bytes (1..=256) laid out as the layout text
            /// at `layout_ptr` (`NAME:TYPE ...`, the map layouts' types, adding up to `size`);
            /// returns its id; `BAD_RANGE` (the reason logged) otherwise; `FULL` past 64 kinds a
            /// port.
            [1 init] EVENT_REGISTER event_register(name_ptr: i32 => &str, name_len: i32, layout_ptr: i32 => &str, layout_len: i32, size: i32) -> i32;
            /// Appends the `len` bytes at `ptr` (the kind's size) to the port's event ring; 0, or
            /// `FULL` when the ring is full (the event is lost and counted). Never waits.
            [1 any] EVENT_EMIT event_emit(id: i32, ptr: i32 => &[u8], len: i32) -> i32;
            /// A uniformly random `u64` (as `i64` bits) from the instance's own generator, seeded
            /// from the operating system when the instance is made (not for cryptography): for
            /// sampling and for picking backends.
            [1 any] RANDOM random() -> i64;
        }
    };
}

/// The type a native build passes for an import's argument: `NATIVE` when the table gives one,
/// else the wasm type.
#[macro_export]
macro_rules! native_ty {
    ($wasm:ident, $native:ty) => {
        $native
    };
    ($wasm:ident) => {
        $wasm
    };
}

/// A value type of an import's signature.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ty {
    /// `i32`.
    I32,
    /// `i64`.
    I64,
}

/// When an import may be called.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    /// Only during `wasmdp_on_burst` (`NO_BURST` elsewhere).
    Burst,
    /// Only during `wasmdp_init` (`NOT_INIT` later).
    Init,
    /// At any time.
    Any,
}

/// One host function, as [`for_each_import!`](crate::for_each_import) gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Import {
    /// Its name in module [`IMPORT_MODULE`](crate::IMPORT_MODULE).
    pub name: &'static str,
    /// Parameter names, as the table and the C header spell them.
    pub names: &'static [&'static str],
    /// Parameter types.
    pub params: &'static [Ty],
    /// What a native build passes for each parameter, as the table writes it (`&mut [u8]`); empty
    /// where it is the wasm type. A slice or reference is a pointer into the plugin's memory.
    pub natives: &'static [&'static str],
    /// Result types (none or one).
    pub results: &'static [Ty],
    /// The minor version of ABI 1 that introduced it: a module declaring an older one may not
    /// import it.
    pub since: u32,
    /// When it may be called.
    pub when: When,
    /// Its contract, from the table's doc lines.
    pub doc: &'static str,
}

#[doc(hidden)]
#[macro_export]
macro_rules! __wasm_ty {
    (i32) => {
        $crate::import::Ty::I32
    };
    (i64) => {
        $crate::import::Ty::I64
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __wasm_results {
    (()) => {
        &[]
    };
    ($t:ident) => {
        &[$crate::__wasm_ty!($t)]
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __when {
    (burst) => {
        $crate::import::When::Burst
    };
    (init) => {
        $crate::import::When::Init
    };
    (any) => {
        $crate::import::When::Any
    };
}

macro_rules! table {
    ($( $(#[doc = $doc:literal])* [$since:literal $when:ident] $konst:ident $name:ident
        ($($arg:ident: $wty:ident $(=> $nty:ty)?),*) -> $ret:tt; )*) => {
        $(
            #[doc = concat!("`", stringify!($name), "(", $(stringify!($arg), ": ", stringify!($wty), ", ",)* ") -> ",
                stringify!($ret), "` (1.", $since, ", ", stringify!($when), "):")]
            $(#[doc = $doc])*
            pub const $konst: &str = stringify!($name);
        )*

        /// Every host function, in the table's order.
        pub const IMPORTS: &[Import] = &[$(
            Import {
                name: stringify!($name),
                names: &[$(stringify!($arg)),*],
                params: &[$($crate::__wasm_ty!($wty)),*],
                natives: &[$(stringify!($($nty)?)),*],
                results: $crate::__wasm_results!($ret),
                since: $since,
                when: $crate::__when!($when),
                doc: concat!($($doc, "\n"),*),
            },
        )*];
    };
}

crate::for_each_import!(table);

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
            assert_eq!(i.names.len(), i.params.len(), "{}", i.name);
            assert!(!i.doc.trim().is_empty(), "{} has no doc", i.name);
        }
        assert_eq!(since(LOG), Some(0));
        assert_eq!(since(EVENT_EMIT), Some(1));
        assert_eq!(since("nope"), None);
        assert_eq!(find(PKT_READ).map(|i| i.names), Some(&["idx", "off", "ptr", "len"][..]));
        assert_eq!(find(NOW_NS).map(|i| i.results), Some(&[Ty::I64][..]));
        assert_eq!(find(LOG).map(|i| (i.results, i.when)), Some((&[][..], When::Any)));
    }
}
