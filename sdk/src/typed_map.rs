//! [`TypedMap`]: a [`Map`](crate::Map) whose keys and values are plain structs rather than byte
//! arrays, so a policy stops packing `to_le_bytes` by hand. The bound is [`bytemuck::Pod`]: no
//! padding (a key's every byte is hashed and compared, so padding would make equal keys differ)
//! and any byte pattern valid (values come back from the host as bytes). Fields are stored in the
//! target's byte order, little-endian on wasm32 and on the native builds' x86-64 alike, which is
//! how the host's dumps read them.

use crate::{sys, Error, MapKind};
use bytemuck::{bytes_of, bytes_of_mut, Pod};
use core::marker::PhantomData;

/// A map with `K` keys and `V` values (their sizes are the map's key and value sizes).
///
/// ```
/// use wasmdp_sdk::bytemuck::{Pod, Zeroable};
/// use wasmdp_sdk::{mock, MapKind, TypedMap};
///
/// #[derive(Clone, Copy, Pod, Zeroable)]
/// #[repr(C)]
/// struct Flow { src: [u8; 4], dst: [u8; 4], sport: u16, dport: u16 }
///
/// #[derive(Clone, Copy, Pod, Zeroable, Debug, PartialEq)]
/// #[repr(C)]
/// struct Seen { packets: u64, bytes: u64 }
///
/// mock::reset();
/// let flows: TypedMap<Flow, Seen> = TypedMap::declare("flows", MapKind::LruHash, 1024).unwrap();
/// let f = Flow { src: [10, 0, 0, 1], dst: [10, 0, 0, 2], sport: 4000, dport: 53 };
/// flows.insert(&f, &Seen { packets: 1, bytes: 64 }).unwrap();
/// flows.add(&f, 1, 64).unwrap(); // word 1: `bytes`
/// assert_eq!(flows.get(&f).unwrap(), Some(Seen { packets: 1, bytes: 128 }));
/// ```
pub struct TypedMap<K: Pod, V: Pod> {
    id: u32,
    _types: PhantomData<fn() -> (K, V)>,
}

impl<K: Pod, V: Pod> Clone for TypedMap<K, V> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<K: Pod, V: Pod> Copy for TypedMap<K, V> {}

impl<K: Pod, V: Pod> core::fmt::Debug for TypedMap<K, V> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("TypedMap").field("id", &self.id).finish()
    }
}

/// A type's size as the ABI's `u32`.
fn size<T>() -> Result<u32, Error> {
    u32::try_from(core::mem::size_of::<T>()).map_err(|_| Error::BadRange)
}

impl<K: Pod, V: Pod> TypedMap<K, V> {
    /// Declares the map (init only), as [`Map::declare`](crate::Map::declare) with the sizes of `K`
    /// and `V`.
    pub fn declare(name: &str, kind: MapKind, capacity: u32) -> Result<Self, Error> {
        Self::declare_ttl(name, kind, capacity, 0)
    }

    /// Declares a hash map whose entries expire `ttl_ms` milliseconds after their last use, as
    /// [`Map::declare_ttl`](crate::Map::declare_ttl) (0: never).
    pub fn declare_ttl(name: &str, kind: MapKind, capacity: u32, ttl_ms: u64) -> Result<Self, Error> {
        let id = sys::map_declare_ttl(name, kind.abi(), size::<K>()?, size::<V>()?, capacity, ttl_ms)?;
        Ok(TypedMap { id, _types: PhantomData })
    }

    /// The value of `key`, if present.
    pub fn get(&self, key: &K) -> Result<Option<V>, Error> {
        let mut value = V::zeroed();
        // SAFETY: map `id` was declared with the sizes of `K` and `V` (`declare_ttl`), and the
        // slices are exactly those: the host reads and writes no more.
        Ok(unsafe { sys::map_lookup(self.id, bytes_of(key), bytes_of_mut(&mut value)) }?.then_some(value))
    }

    /// Inserts or replaces; [`Error::Full`] when a hash map (not LRU) is full.
    pub fn insert(&self, key: &K, value: &V) -> Result<(), Error> {
        // SAFETY: as in `get`.
        unsafe { sys::map_update(self.id, bytes_of(key), bytes_of(value)) }
    }

    /// Removes `key`; whether it was there.
    pub fn remove(&self, key: &K) -> Result<bool, Error> {
        // SAFETY: as in `get`.
        unsafe { sys::map_delete(self.id, bytes_of(key)) }
    }

    /// The next key of a walk over the map, as [`Map::next_key`](crate::Map::next_key).
    pub fn next_key(&self, cursor: &mut u64) -> Result<Option<K>, Error> {
        let mut key = K::zeroed();
        loop {
            // SAFETY: as in `get`.
            match unsafe { sys::map_next_key(self.id, cursor, bytes_of_mut(&mut key)) }? {
                sys::Walk::Key => return Ok(Some(key)),
                sys::Walk::Window => {}
                sys::Walk::End => return Ok(None),
            }
        }
    }

    /// Atomically adds `delta` to the `u64` at word `word` (bytes `8 * word..`) of the value,
    /// inserting a zero value first when the key is absent.
    pub fn add(&self, key: &K, word: u32, delta: i64) -> Result<(), Error> {
        // SAFETY: as in `get`.
        unsafe { sys::map_add(self.id, bytes_of(key), word, delta) }
    }
}
