//! Plugin maps (ABI 1.1): named tables with fixed key and value sizes and a capacity, declared by a
//! policy in `wasmdp_init`.
//!
//! - [`Table`]: one table. Lookups never lock (a sequence number per slot, re-read after the copy);
//!   rewriting an existing entry and atomic adds never lock either; only inserting a new key or
//!   deleting one serialises on the table's mutex (once per new flow, not per packet). The protocol
//!   is `slot`'s, model-checked in `loom_tests` (`--features loom`).
//! - [`Registry`]: a port's tables by name, kept for the life of the dataplane, so a reloaded policy
//!   that declares a map identically (name, kind, sizes, capacity) finds the old entries, as a
//!   pinned BPF map survives a program replace.
//!
//! - [`SharedMaps`]: the dataplane's maps shared across ports (`policy: shared_maps:`), linked into
//!   each port's registry.
//!
//! Shared kinds are one table for every instance of the port's policy; per-instance kinds are one per
//! queue, shown and dumped summed (each value read as little-endian `u64` words and added).

pub mod initial;
pub mod layout;
#[cfg(all(test, feature = "loom"))]
mod loom_tests;
mod lpm;
mod registry;
mod shared;
mod slot;
mod sync;
mod table;

pub use initial::{InitialEntries, Initials};
pub use layout::{Layout, Layouts};
pub use registry::{add_words, Entries, MapInfo, Page, Registry};
pub use shared::SharedMaps;
pub(crate) use table::{key_words_of, on_fixed, put_word, word_of, WordBatch};
pub use table::{Lookup, MapError, Table, Walk};
use wasmdp_abi::map;

/// Which instances share a table, and how keys find entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MapKind {
    /// Hash map shared by the port's instances.
    Hash,
    /// Array (4-byte little-endian index keys) shared by the port's instances.
    Array,
    /// Hash map of each instance's own.
    PerInstanceHash,
    /// Array of each instance's own.
    PerInstanceArray,
    /// Hash map shared by the port's instances that, when full, evicts its least recently used
    /// entry to make room for a new one (BPF's `LRU_HASH`).
    LruHash,
    /// Prefixes (a little-endian `u32` length, then the address) shared by the port's instances; a
    /// lookup finds the longest one holding the key's address (BPF's `LPM_TRIE`).
    LpmTrie,
}

impl MapKind {
    /// The name in the stats JSON and in docs/ABI.md.
    pub fn name(self) -> &'static str {
        match self {
            MapKind::Hash => "hash",
            MapKind::Array => "array",
            MapKind::PerInstanceHash => "percpu_hash",
            MapKind::PerInstanceArray => "percpu_array",
            MapKind::LruHash => "lru_hash",
            MapKind::LpmTrie => "lpm_trie",
        }
    }

    /// One table per instance?
    pub fn per_instance(self) -> bool {
        matches!(self, MapKind::PerInstanceHash | MapKind::PerInstanceArray)
    }

    /// Indexed by a `u32` rather than hashed?
    pub fn is_array(self) -> bool {
        matches!(self, MapKind::Array | MapKind::PerInstanceArray)
    }
}

/// Whether `name` may name a map: 1-64 characters of `[A-Za-z0-9_.-]`.
pub fn name_ok(name: &str) -> bool {
    (1..=map::MAX_NAME as usize).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b))
}

/// What a policy declares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MapSpec {
    /// Name, unique within the port.
    pub name: String,
    /// Kind.
    pub kind: MapKind,
    /// Key bytes (arrays: 4).
    pub key_size: u32,
    /// Value bytes.
    pub value_size: u32,
    /// Most entries (arrays: exactly this many).
    pub capacity: u32,
    /// Milliseconds after its last use (lookup, update, add) an entry expires (0: never; hash
    /// kinds only): invisible from then on, and freed by later inserts.
    pub ttl_ms: u64,
}

impl MapSpec {
    /// Sizes within the ABI's bounds, or what is wrong.
    pub fn check(&self) -> Result<(), String> {
        let name = &self.name;
        if !name_ok(name) {
            return Err(format!("map name {name:?}: use 1-64 characters of [A-Za-z0-9_.-]"));
        }
        if self.kind.is_array() && self.key_size != 4 {
            return Err(format!("map {name:?}: an array's key_size is 4 (a u32 index), not {}", self.key_size));
        }
        if !(1..=map::MAX_KEY).contains(&self.key_size) {
            return Err(format!("map {name:?}: key_size {} is outside 1..={}", self.key_size, map::MAX_KEY));
        }
        if !(1..=map::MAX_VALUE).contains(&self.value_size) {
            return Err(format!("map {name:?}: value_size {} is outside 1..={}", self.value_size, map::MAX_VALUE));
        }
        if !(1..=map::MAX_CAPACITY).contains(&self.capacity) {
            return Err(format!("map {name:?}: capacity {} is outside 1..={}", self.capacity, map::MAX_CAPACITY));
        }
        if self.kind == MapKind::LpmTrie && !(5..=4 + map::MAX_LPM_DATA).contains(&self.key_size) {
            return Err(format!(
                "map {name:?}: an lpm_trie's key is a u32 prefix length and 1..={} address bytes (IPv4: 8, IPv6: 20), not {}",
                map::MAX_LPM_DATA,
                self.key_size
            ));
        }
        if self.ttl_ms > 0 && self.kind == MapKind::LpmTrie {
            return Err(format!("map {name:?}: an lpm_trie's prefixes do not expire"));
        }
        if self.ttl_ms > map::MAX_TTL_MS {
            return Err(format!("map {name:?}: ttl_ms {} is beyond {} (a year)", self.ttl_ms, map::MAX_TTL_MS));
        }
        if self.ttl_ms > 0 && self.kind.is_array() {
            return Err(format!("map {name:?}: an array's entries always exist; expiry is for hash kinds"));
        }
        Ok(())
    }

    /// Bytes a table of this spec allocates (counted against `limits.map_kib` before allocating).
    pub fn bytes(&self) -> u64 {
        table::Layout::of(self).bytes()
    }

    /// Whether an instance with `budget` bytes left may declare it, or why not (nothing paid).
    pub(super) fn affordable(&self, budget: u64) -> Result<u64, String> {
        let bytes = self.bytes();
        if bytes > budget {
            return Err(format!(
                "map {:?} needs {} KiB; limits.map_kib leaves {} KiB for this instance",
                self.name,
                bytes.div_ceil(1024),
                budget / 1024
            ));
        }
        Ok(bytes)
    }
}
