//! [`Map`]: named tables kept by the host (ABI 1.1), shared by every instance of the port's policy
//! (all its queues) or each instance's own, and kept across a hot swap when the new module declares
//! them identically. Keys and values are fixed-size byte arrays; values are read as copies.

use crate::{sys, Error};
use wasmdp_abi::map;

/// Who shares a map and how keys find entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MapKind {
    /// A hash map shared by the port's instances.
    Hash,
    /// An array (keys: `u32` indexes `0..capacity`, as 4 little-endian bytes) shared likewise.
    Array,
    /// A hash map of the instance's own (the host's stats and dumps sum the instances').
    PerInstanceHash,
    /// An array of the instance's own.
    PerInstanceArray,
    /// A hash map shared like [`Hash`](MapKind::Hash) that, when full, evicts its least recently
    /// used entry (of a bounded sample) to make room (BPF's `LRU_HASH`): a flood of new keys
    /// cannot shut out the keys in use.
    LruHash,
    /// Longest-prefix match, shared like [`Hash`](MapKind::Hash) (BPF's `LPM_TRIE`): keys are an
    /// [`Lpm`] (a prefix length and the address); a lookup finds the longest stored prefix holding
    /// the key's address. For route and ACL tables.
    LpmTrie,
}

/// An `LPM_TRIE` key: a prefix length (bits) and an address of `N` bytes in network order.
/// [`Lpm4`] and [`Lpm6`] are the usual ones.
///
/// ```
/// use wasmdp_sdk::{mock, Lpm4, MapKind, TypedMap};
/// mock::reset();
/// let routes: TypedMap<Lpm4, u32> = TypedMap::declare("routes", MapKind::LpmTrie, 1024).unwrap();
/// routes.insert(&Lpm4::new(8, [10, 0, 0, 0]), &1).unwrap();
/// routes.insert(&Lpm4::new(24, [10, 1, 2, 0]), &2).unwrap();
/// assert_eq!(routes.get(&Lpm4::host([10, 1, 2, 3])).unwrap(), Some(2));
/// assert_eq!(routes.get(&Lpm4::host([10, 9, 9, 9])).unwrap(), Some(1));
/// assert_eq!(routes.get(&Lpm4::host([192, 0, 2, 1])).unwrap(), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C, packed)]
pub struct Lpm<const N: usize> {
    /// Prefix length in bits, little-endian (at most `8 x N`).
    pub prefix_len: u32,
    /// The address, network order.
    pub addr: [u8; N],
}

/// An IPv4 prefix.
pub type Lpm4 = Lpm<4>;
/// An IPv6 prefix.
pub type Lpm6 = Lpm<16>;

impl<const N: usize> Lpm<N> {
    /// The prefix `addr/prefix_len`.
    pub const fn new(prefix_len: u32, addr: [u8; N]) -> Self {
        Lpm { prefix_len: prefix_len.to_le(), addr }
    }

    /// The whole address, as a lookup key.
    pub const fn host(addr: [u8; N]) -> Self {
        Self::new(8 * N as u32, addr)
    }
}

// SAFETY: packed, so no padding; a u32 and bytes, for which every bit pattern is valid.
unsafe impl<const N: usize> bytemuck::Zeroable for Lpm<N> {}
// SAFETY: as above; `Copy` and `'static`.
unsafe impl<const N: usize> bytemuck::Pod for Lpm<N> {}

impl MapKind {
    pub(crate) const fn abi(self) -> u32 {
        match self {
            MapKind::Hash => map::HASH,
            MapKind::Array => map::ARRAY,
            MapKind::PerInstanceHash => map::PERCPU_HASH,
            MapKind::PerInstanceArray => map::PERCPU_ARRAY,
            MapKind::LruHash => map::LRU_HASH,
            MapKind::LpmTrie => map::LPM_TRIE,
        }
    }
}

/// A map with `K`-byte keys and `V`-byte values. Declare it in [`Policy::init`](crate::Policy::init)
/// and keep it in the policy.
///
/// ```
/// use wasmdp_sdk::{mock, Map, MapKind};
/// mock::reset();
/// let hits: Map<4, 8> = Map::declare("hits", MapKind::Hash, 1024).unwrap();
/// hits.add(&[10, 0, 0, 1], 0, 1).unwrap();
/// hits.add(&[10, 0, 0, 1], 0, 1).unwrap();
/// assert_eq!(hits.get(&[10, 0, 0, 1]).unwrap(), Some(2u64.to_le_bytes()));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Map<const K: usize, const V: usize> {
    id: u32,
}

/// An array map: `u32` indexes.
pub type ArrayMap<const V: usize> = Map<4, V>;

impl<const K: usize, const V: usize> Map<K, V> {
    /// Declares the map (`map_declare`, init only). The same name declared again with the same shape
    /// gives the same map; a different shape is [`Error::BadRange`]; a capacity beyond the port's
    /// `limits.map_kib` is [`Error::TooSmall`].
    pub fn declare(name: &str, kind: MapKind, capacity: u32) -> Result<Self, Error> {
        sys::map_declare(name, kind.abi(), K as u32, V as u32, capacity).map(|id| Map { id })
    }

    /// [`declare`](Map::declare) of a hash kind whose entries expire `ttl_ms` milliseconds after
    /// their last use (lookup, insert, add): invisible from then on and freed by the host without a
    /// list kept by the plugin (`map_declare_ttl`).
    ///
    /// ```
    /// use wasmdp_sdk::{mock, Map, MapKind};
    /// mock::reset();
    /// let flows: Map<13, 8> = Map::declare_ttl("flows", MapKind::LruHash, 2, 30_000).unwrap();
    /// for src in [1u8, 2, 3] {
    ///     flows.insert(&[src; 13], &[src; 8]).unwrap(); // full at 2: the least recently used goes
    /// }
    /// assert_eq!(flows.get(&[1; 13]).unwrap(), None);
    /// mock::with(|h| h.now_ns += 31_000_000_000);
    /// assert_eq!(flows.get(&[3; 13]).unwrap(), None, "expired");
    /// ```
    pub fn declare_ttl(name: &str, kind: MapKind, capacity: u32, ttl_ms: u64) -> Result<Self, Error> {
        sys::map_declare_ttl(name, kind.abi(), K as u32, V as u32, capacity, ttl_ms).map(|id| Map { id })
    }

    /// The value of `key`, if present (`map_lookup`).
    pub fn get(&self, key: &[u8; K]) -> Result<Option<[u8; V]>, Error> {
        let mut value = [0u8; V];
        // SAFETY: map `id` was declared with `K`-byte keys and `V`-byte values (`declare`).
        Ok(unsafe { sys::map_lookup(self.id, key, &mut value) }?.then_some(value))
    }

    /// Inserts or replaces (`map_update`); [`Error::Full`] when a hash map is full.
    pub fn insert(&self, key: &[u8; K], value: &[u8; V]) -> Result<(), Error> {
        // SAFETY: as in `get`: the map's sizes are `K` and `V`.
        unsafe { sys::map_update(self.id, key, value) }
    }

    /// Removes `key` (an array entry is zeroed); whether it was there (`map_delete`).
    pub fn remove(&self, key: &[u8; K]) -> Result<bool, Error> {
        // SAFETY: as in `get`.
        unsafe { sys::map_delete(self.id, key) }
    }

    /// Atomically adds `delta` to the little-endian `u64` at word `word` of the value (inserting a
    /// zero value first when the key is absent): counters that every queue updates (`map_add`).
    pub fn add(&self, key: &[u8; K], word: u32, delta: i64) -> Result<(), Error> {
        // SAFETY: as in `get`.
        unsafe { sys::map_add(self.id, key, word, delta) }
    }

    /// The next key of a walk over the map (`map_next_key`), from `cursor` (0 to start; the walk
    /// moves it on): `None` when every entry was walked. Deleting the key just returned is safe and
    /// hides no other; entries added meanwhile may or may not be returned. Each host call reads a
    /// bounded window of the table; this calls until it has a key or the walk ends.
    ///
    /// ```
    /// use wasmdp_sdk::{mock, Map, MapKind};
    /// mock::reset();
    /// let seen: Map<4, 8> = Map::declare("seen", MapKind::Hash, 16).unwrap();
    /// for k in 1..=3u32 {
    ///     seen.insert(&k.to_le_bytes(), &[0; 8]).unwrap();
    /// }
    /// let (mut cursor, mut keys) = (0, Vec::new());
    /// while let Some(k) = seen.next_key(&mut cursor).unwrap() {
    ///     keys.push(u32::from_le_bytes(k));
    ///     seen.remove(&k).unwrap();
    /// }
    /// keys.sort();
    /// assert_eq!(keys, [1, 2, 3]);
    /// ```
    pub fn next_key(&self, cursor: &mut u64) -> Result<Option<[u8; K]>, Error> {
        let mut key = [0u8; K];
        loop {
            // SAFETY: as in `get`: the map's key size is `K`.
            match unsafe { sys::map_next_key(self.id, cursor, &mut key) }? {
                sys::Walk::Key => return Ok(Some(key)),
                sys::Walk::Window => {}
                sys::Walk::End => return Ok(None),
            }
        }
    }

    /// Looks up `keys` in one host call (`map_lookup_batch`): `values[i]` and `found[i]` for each;
    /// returns how many were found. The three slices must be equally long.
    pub fn get_batch(&self, keys: &[[u8; K]], values: &mut [[u8; V]], found: &mut [u8]) -> Result<u32, Error> {
        if keys.len() != found.len() || values.len() != found.len() {
            return Err(Error::BadRange);
        }
        // SAFETY: as in `get`; the three slices hold `found.len()` entries each (checked above).
        unsafe { sys::map_lookup_batch(self.id, keys.as_flattened(), values.as_flattened_mut(), found) }
    }

    /// Inserts or replaces `keys[i]` with `values[i]` in one host call (`map_update_batch`); returns
    /// how many were written (fewer when the map filled up).
    pub fn insert_batch(&self, keys: &[[u8; K]], values: &[[u8; V]]) -> Result<u32, Error> {
        if keys.len() != values.len() {
            return Err(Error::BadRange);
        }
        // SAFETY: as in `get`; both slices hold `keys.len()` entries (checked above).
        unsafe { sys::map_update_batch(self.id, keys.as_flattened(), values.as_flattened(), keys.len() as u32) }
    }
}

impl<const V: usize> Map<4, V> {
    /// Entry `index` of an array map.
    pub fn at(&self, index: u32) -> Result<Option<[u8; V]>, Error> {
        self.get(&index.to_le_bytes())
    }
}

/// Declares the typed layout of a map (field names and types of its key and value) in the module's
/// custom section `wasmdp.map_layouts`, as BTF describes a BPF map to bpftool: the host's control
/// socket then shows the map's entries as `name=value` fields and takes keys and values in that
/// form (`wasmdp ctl map get p0 flows 'src=10.0.0.1 dport=443'`). Types: `u8 u16 u32 u64`
/// (little-endian), `be16 be32 be64` (network order), `ipv4`, `ipv6`, `mac`, `hexN`; the sizes must
/// add up to the map's key and value sizes, or its `map_declare` fails (docs/ABI.md).
///
/// ```
/// wasmdp_sdk::map_layout!("flows", key: "src:ipv4 dport:be16", value: "backend:u32");
/// ```
#[macro_export]
macro_rules! map_layout {
    ($map:literal, key: $key:literal, value: $value:literal) => {
        const _: () = {
            const TEXT: &str = concat!($map, " key ", $key, " value ", $value, "\n");
            #[cfg(target_arch = "wasm32")]
            #[link_section = "wasmdp.map_layouts"]
            #[used]
            static LAYOUT: [u8; TEXT.len()] = $crate::__layout_bytes::<{ TEXT.len() }>(TEXT);
        };
    };
}

/// The bytes of `text` as an array (for [`map_layout!`]'s section).
#[doc(hidden)]
pub const fn __layout_bytes<const N: usize>(text: &str) -> [u8; N] {
    let (mut out, b) = ([0u8; N], text.as_bytes());
    let mut i = 0;
    while i < N && i < b.len() {
        out[i] = b[i];
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mock;

    #[test]
    fn maps_keep_entries_refuse_overflow_and_batch() {
        mock::reset();
        let m: Map<2, 4> = Map::declare("m", MapKind::Hash, 2).unwrap();
        assert_eq!(Map::<2, 4>::declare("m", MapKind::Hash, 2), Ok(m));
        assert_eq!(Map::<2, 8>::declare("m", MapKind::Hash, 2), Err(Error::BadRange));
        m.insert(&[1, 1], &[1, 2, 3, 4]).unwrap();
        m.insert(&[2, 2], &[5, 6, 7, 8]).unwrap();
        assert_eq!(m.insert(&[3, 3], &[0; 4]), Err(Error::Full));
        assert_eq!(m.get(&[1, 1]), Ok(Some([1, 2, 3, 4])));
        assert_eq!(m.get(&[3, 3]), Ok(None));
        let mut values = [[0u8; 4]; 3];
        let mut found = [9u8; 3];
        assert_eq!(m.get_batch(&[[2, 2], [3, 3], [1, 1]], &mut values, &mut found), Ok(2));
        assert_eq!((found, values[0], values[2]), ([1, 0, 1], [5, 6, 7, 8], [1, 2, 3, 4]));
        assert_eq!(m.remove(&[1, 1]), Ok(true));
        assert_eq!(m.remove(&[1, 1]), Ok(false));
        let a: ArrayMap<8> = Map::declare("a", MapKind::Array, 4).unwrap();
        a.add(&3u32.to_le_bytes(), 0, 5).unwrap();
        assert_eq!(a.at(3), Ok(Some(5u64.to_le_bytes())));
        assert_eq!(a.at(0), Ok(Some([0; 8])));
        assert_eq!(a.at(4), Ok(None));
    }
}
