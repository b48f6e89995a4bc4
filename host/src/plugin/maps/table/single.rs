//! Single lookups (`map_lookup`, [`Table::lookup`]) on a path chosen for the map's shape when the
//! table is made: for hash maps of a fixed shape, the key's home slot read in line
//! ([`Table::lookup_home`]), with the key's size known at compile time for the common sizes, and
//! the fixed shapes' probe for one key out of line for the rest; the general path for arrays,
//! `lpm_trie` and other shapes. A call then makes no test of the shape and no dispatch on the key's
//! length. Single updates (`map_update`, [`Table::update`]) likewise: the fixed shapes' batch
//! update for one key, or the general path.

use super::*;
use std::sync::atomic::Ordering::Relaxed;

/// A single lookup's path: [`Table::lookup`]'s contract.
///
/// # Safety
///
/// The table is the one [`single_path`](Table::single_path) chose the path for (a path may rest
/// on the shape it saw).
pub(super) type Single = unsafe fn(&Table, &[u8], &mut [u8]) -> Lookup;

/// The general path as a single lookup's path (arrays, `lpm_trie`, shapes without one of their own),
/// and the fixed shapes' paths' for keys or values of other sizes than the map's: out of line, so
/// that those paths keep no registers for it.
#[inline(never)]
pub(super) fn general(t: &Table, key: &[u8], out: &mut [u8]) -> Lookup {
    Lookup::from(t.lookup_general(key, out))
}

impl Table {
    /// The single-lookup path for this table's shape and sizes.
    pub(super) fn single_path(&self) -> Single {
        if self.prefixes.is_some() {
            return general;
        }
        // Plain one-word maps of 4- and 8-byte keys (addresses, ports, flow hashes) get their key's
        // size known; other shapes by key size (13: an IPv4 5-tuple; 16: an IPv6 address), or
        // with the key's size read at run time.
        // (Values of 8 bytes, counters and indices, get their size known too, and of 1 byte for
        // 5-tuples: a flow's verdict or state.)
        let plain = self.fixed_shape() == Some((1, false, false));
        let path = match (self.spec.key_size, self.spec.value_size) {
            (4, 4) if plain => Some(single_home::<1, 3, false, false, 4, 4> as _),
            (4, 8) if plain => Some(single_home::<1, 3, false, false, 4, 8> as _),
            (8, 4) if plain => Some(single_home::<1, 3, false, false, 8, 4> as _),
            (8, 8) if plain => Some(single_home::<1, 3, false, false, 8, 8> as _),
            (13, 8) => on_fixed!(self, ptr single_home::<13, 8>),
            (13, 1) => on_fixed!(self, ptr single_home::<13, 1>),
            (13, _) => on_fixed!(self, ptr single_home::<13, 0>),
            (16, 8) => on_fixed!(self, ptr single_home::<16, 8>),
            (16, _) => on_fixed!(self, ptr single_home::<16, 0>),
            _ => on_fixed!(self, ptr single_home::<0, 0>),
        };
        // The home slot's path rests on the table's slots being as its shape says.
        path.filter(|_| self.has_home_slots()).unwrap_or(general)
    }
}

/// A single update's path: [`Table::update`]'s, for a table that is not an `lpm_trie`.
///
/// # Safety
///
/// The table is the one [`single_update_path`](Table::single_update_path) chose the path for.
pub(super) type SingleUpdate = unsafe fn(&Table, &[u8], &[u8]) -> Result<(), MapError>;

/// The general path as a single update's path (arrays, shapes without one of their own), and the
/// fixed shapes' paths' for keys or values of other sizes than the map's.
#[inline(never)]
pub(super) fn update_general(t: &Table, key: &[u8], value: &[u8]) -> Result<(), MapError> {
    t.update_exact(key, value)
}

/// `$f::<KW, S, LRU, TTL>` for table `$t`'s fixed shape, or `$general` for a table without a
/// fixed shape, without the home slots' layout, or an `lpm_trie` (whose writes insert the prefix
/// first). (The key's size is not made a constant for writes: that would be a path for each size
/// and shape, code enough to move the inlining elsewhere in the host.)
macro_rules! by_shape {
    ($t:expr, $f:ident, $general:expr) => {{
        let path = on_fixed!($t, ptr $f);
        // The home slots' path rests on the table's slots being as its shape says.
        path.filter(|_| $t.prefixes.is_none() && $t.has_home_slots()).unwrap_or($general)
    }};
}

impl Table {
    /// The single-update path for this table's shape.
    pub(super) fn single_update_path(&self) -> SingleUpdate {
        by_shape!(self, update_one, update_general)
    }

    /// The single-add path for this table's shape.
    pub(super) fn single_add_path(&self) -> SingleAdd {
        by_shape!(self, add_one, add_general)
    }
}

/// An update in a map of a fixed shape ([`Table::fixed_shape`]), of a key and value of the map's
/// sizes: a present key in its home slots rewritten in line ([`Table::write_home`]); else
/// [`Table::update_fixed`] for one key (the full probe, then the general insert for an absent
/// key), out of line. The general path found the key through slices of any length and wrote the
/// value under a second pass.
///
/// # Safety
///
/// As [`Table::lookup_home`]'s: [`single_update_path`](Table::single_update_path) chooses this
/// path only for a table where [`has_home_slots`](Table::has_home_slots) holds, with its shape's
/// constants.
unsafe fn update_one<const KW: usize, const S: usize, const LRU: bool, const TTL: bool>(
    t: &Table,
    key: &[u8],
    value: &[u8],
) -> Result<(), MapError> {
    let ks = t.spec.key_size as usize;
    if key.len() != ks || value.len() != t.spec.value_size as usize {
        // Sizes other than the map's (the host's glue passes the map's).
        return update_general(t, key, value);
    }
    let io = One::<0, &[u8]> { key, out: value };
    // SAFETY: one key in the batch.
    let (words, value) = unsafe { (io.key::<KW>(0), io.value(0)) };
    let store = |w: &AtomicU64| {
        w.store(value, Relaxed);
        value
    };
    // SAFETY: this function's contract.
    if unsafe { t.write_home::<KW, S, LRU, TTL>(words, store) }.is_some() {
        return Ok(());
    }
    update_probed::<KW, S, LRU, TTL>(t, &io)
}

/// [`update_one`] past the home slots: out of line, so that the in-line path saves no registers
/// for it.
#[inline(never)]
fn update_probed<const KW: usize, const S: usize, const LRU: bool, const TTL: bool>(
    t: &Table,
    io: &One<'_, 0, &[u8]>,
) -> Result<(), MapError> {
    match t.update_fixed::<KW, S, LRU, TTL>(io) {
        1 => Ok(()),
        _ => Err(MapError::Full),
    }
}

/// A single add's path: [`Table::add`]'s, for a table that is not an `lpm_trie`.
///
/// # Safety
///
/// The table is the one [`single_add_path`](Table::single_add_path) chose the path for.
pub(super) type SingleAdd = unsafe fn(&Table, &[u8], usize, u64) -> Result<u64, MapError>;

/// The general path as a single add's path, and the fixed shapes' past the home slots: out of
/// line.
#[inline(never)]
pub(super) fn add_general(t: &Table, key: &[u8], word: usize, delta: u64) -> Result<u64, MapError> {
    t.add_exact(key, word, delta)
}

/// An add in a map of a fixed shape, to the first word of a key of the map's size: a present key
/// in its home slots added to in line ([`Table::write_home`]); anything else on the general path (its
/// find, then an insert of an absent key as zero).
///
/// # Safety
///
/// As [`update_one`]'s, for [`single_add_path`](Table::single_add_path).
unsafe fn add_one<const KW: usize, const S: usize, const LRU: bool, const TTL: bool>(
    t: &Table,
    key: &[u8],
    word: usize,
    delta: u64,
) -> Result<u64, MapError> {
    let ks = t.spec.key_size as usize;
    if key.len() == ks && word == 0 {
        let add = |w: &AtomicU64| {
            let v = w.load(Relaxed).wrapping_add(delta);
            w.store(v, Relaxed);
            v
        };
        // SAFETY: this function's contract.
        if let Some(v) = unsafe { t.write_home::<KW, S, LRU, TTL>(key_words_of::<KW>(key), add) } {
            return Ok(v);
        }
    }
    add_general(t, key, word, delta)
}

/// `K`, when not 0, is the key's size; `bytes` is cut to it so that the compiler knows its length
/// (a slice of another length takes the general form).
#[inline(always)]
fn sized<const N: usize>(bytes: &[u8]) -> &[u8] {
    if N != 0 && bytes.len() >= N {
        &bytes[..N]
    } else {
        bytes
    }
}

/// A lookup in a map of a fixed shape ([`Table::fixed_shape`]) with keys of `K` bytes and values of
/// `V` (0: any size): the key's home slot and the slots after it
/// ([`HOME_STEPS`](super::fixed::HOME_STEPS) in all) in line; elsewhere, the fixed shapes' probe
/// out of line.
///
/// Both sizes are tested once, on entry: the value's length is then a constant, not a register
/// kept through the probe for a test at its end (a register less, none saved on the call).
///
/// # Safety
///
/// As [`Table::lookup_home`]'s: [`single_path`](Table::single_path) chooses this path only for a
/// table where [`has_home_slots`](Table::has_home_slots) holds, with its shape's constants.
unsafe fn single_home<
    const KW: usize,
    const S: usize,
    const LRU: bool,
    const TTL: bool,
    const K: usize,
    const V: usize,
>(
    t: &Table,
    key: &[u8],
    out: &mut [u8],
) -> Lookup {
    if K == 0 {
        // SAFETY: this function's contract.
        return unsafe { home::<KW, S, LRU, TTL, 0>(t, key, out) };
    }
    // A key or value of another size (the host's glue passes the map's) on the general path.
    let Ok(key) = <&[u8; K]>::try_from(key) else { return general(t, key, out) };
    match <&mut [u8; V]>::try_from(&mut *out) {
        // SAFETY: this function's contract.
        Ok(out) if V != 0 => unsafe { home::<KW, S, LRU, TTL, K>(t, key, out) },
        // SAFETY: this function's contract.
        _ if V == 0 => unsafe { home::<KW, S, LRU, TTL, K>(t, key, out) },
        _ => general(t, key, out),
    }
}

/// [`single_home`] on a key of `K` bytes (0: any size) and a value's place, each of a length the
/// compiler may know.
///
/// # Safety
///
/// [`single_home`]'s.
#[inline(always)]
unsafe fn home<const KW: usize, const S: usize, const LRU: bool, const TTL: bool, const K: usize>(
    t: &Table,
    key: &[u8],
    out: &mut [u8],
) -> Lookup {
    // SAFETY: this function's contract.
    match unsafe { t.lookup_home::<KW, S, LRU, TTL>(key_words_of::<KW>(key)) } {
        Some(value) => {
            put_word(value, out);
            Lookup::Found
        }
        None => single_fixed::<KW, S, LRU, TTL, K>(t, key, out),
    }
}

/// A lookup in a map of a fixed shape: its batches' loop, for one key (of `K` bytes when not 0).
/// Out of line, so that the home slot's path saves no registers for it.
#[inline(never)]
fn single_fixed<const KW: usize, const S: usize, const LRU: bool, const TTL: bool, const K: usize>(
    t: &Table,
    key: &[u8],
    out: &mut [u8],
) -> Lookup {
    Lookup::from(t.lookup_fixed::<KW, S, LRU, TTL>(&mut One::<K, &mut [u8]> { key, out }) == 1)
}

/// One key (of `K` bytes when not 0) and its value (`&[u8]`: an update's) or the value's place
/// (`&mut [u8]`: a lookup's), as a batch.
struct One<'a, const K: usize, V> {
    key: &'a [u8],
    out: V,
}

/// A value's bytes, or a place that takes one.
trait Place {
    fn bytes(&self) -> &[u8];
    fn put(&mut self, value: u64);
}

impl Place for &[u8] {
    #[inline(always)]
    fn bytes(&self) -> &[u8] {
        self
    }

    /// An update's batch is only read.
    #[inline(always)]
    fn put(&mut self, _: u64) {}
}

impl Place for &mut [u8] {
    #[inline(always)]
    fn bytes(&self) -> &[u8] {
        self
    }

    #[inline(always)]
    fn put(&mut self, value: u64) {
        put_word(value, self);
    }
}

impl<const K: usize, V: Place> WordBatch for One<'_, K, V> {
    fn len(&self) -> usize {
        1
    }

    #[inline(always)]
    unsafe fn key<const KW: usize>(&self, _: usize) -> [u64; KW] {
        key_words_of(sized::<K>(self.key))
    }

    #[inline(always)]
    unsafe fn value(&self, _: usize) -> u64 {
        word_of(self.out.bytes())
    }

    #[inline(always)]
    unsafe fn put(&mut self, _: usize, value: Option<u64>) {
        if let Some(v) = value {
            self.out.put(v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixed::HOME_STEPS;
    use super::*;
    use crate::plugin::maps::MapKind;

    /// One-word maps of known and other sizes, fixed shapes with and without stamps, a shape of
    /// neither kind (20-byte keys) and an array: (kind, key size, value size, ttl_ms).
    const SHAPES: [(MapKind, u32, u32, u64); 9] = [
        (MapKind::Hash, 4, 4, 0),
        (MapKind::Hash, 8, 8, 0),
        (MapKind::Hash, 3, 5, 0),
        (MapKind::Hash, 13, 8, 0),
        (MapKind::LruHash, 13, 1, 60_000),
        (MapKind::LruHash, 8, 8, 0),
        (MapKind::Hash, 16, 2, 1000),
        (MapKind::Hash, 20, 12, 0),
        (MapKind::Array, 4, 8, 0),
    ];

    #[test]
    fn each_shape_updates_and_adds_as_the_general_path() {
        // Tables keyed alike, one written on its shape's paths and one on the general path: the
        // same answers to every update and add (a full map refuses the same key), the same
        // entries after, rewrites of present keys, inserts, LRU evictions, keys and values of
        // other sizes.
        for (kind, ks, vs, ttl_ms) in SHAPES {
            let spec = MapSpec { name: "u".into(), kind, key_size: ks, value_size: vs, capacity: 16, ttl_ms };
            let (fast, general) = (Table::fixed_key(&spec), Table::fixed_key(&spec));
            let own = !std::ptr::fn_addr_eq(fast.single_update, update_general as SingleUpdate);
            assert_eq!(own, !kind.is_array() && ks != 20, "{spec:?}: its update path");
            let own = !std::ptr::fn_addr_eq(fast.single_add, add_general as SingleAdd);
            assert_eq!(own, !kind.is_array() && ks != 20, "{spec:?}: its add path");
            let (ks, vs) = (ks as usize, vs as usize);
            let key =
                |i: u8, n: usize| if kind.is_array() { u32::from(i % 20).to_le_bytes().to_vec() } else { vec![i; n] };
            for round in 0..3u8 {
                for i in 0..24u8 {
                    let (k, v) = match i % 8 {
                        6 => (key(i, ks + 1), vec![i ^ round; vs]),
                        7 => (key(i, ks), vec![i ^ round; vs.saturating_sub(1)]),
                        _ => (key(i, ks), vec![i ^ round; vs]),
                    };
                    assert_eq!(fast.update(&k, &v), general.update_exact(&k, &v), "{spec:?}: round {round}, key {i}");
                    // Adds to present keys and absent ones (24-31, never updated), to the value's last word.
                    let (k, word) = (key(i + 8 * (i % 2), ks), (vs - 1) / 8);
                    let delta = u64::from(i) << 7 | 1;
                    assert_eq!(
                        fast.add(&k, word, delta),
                        general.add_exact(&k, word, delta),
                        "{spec:?}: add to key {i}"
                    );
                }
                for i in 0..24u8 {
                    let (mut a, mut b) = (vec![0; vs], vec![0; vs]);
                    let k = key(i, ks);
                    assert_eq!(
                        fast.lookup_general(&k, &mut a),
                        general.lookup_general(&k, &mut b),
                        "{spec:?}: key {i}"
                    );
                    assert_eq!(a, b, "{spec:?}: round {round}, key {i}");
                }
                assert_eq!(fast.len(), general.len(), "{spec:?}: round {round}");
                assert_eq!(fast.evictions(), general.evictions(), "{spec:?}: round {round}");
            }
        }
    }

    #[test]
    fn each_shape_takes_its_path_and_answers_as_the_general_path() {
        // Each of SHAPES and an lpm_trie: the same answers as the general path, hits and misses,
        // values written to their length and no further.
        for (kind, ks, vs, ttl_ms) in SHAPES {
            let spec = MapSpec { name: "t".into(), kind, key_size: ks, value_size: vs, capacity: 64, ttl_ms };
            let t = Table::new(&spec);
            let general = std::ptr::fn_addr_eq(t.single, general as Single);
            assert_eq!(general, kind.is_array() || ks == 20, "{spec:?}: its path");
            let (ks, vs) = (ks as usize, vs as usize);
            let key = |i: u8| if kind.is_array() { u32::from(i).to_le_bytes().to_vec() } else { vec![i; ks] };
            for i in 1..=20u8 {
                t.update(&key(i), &vec![i.wrapping_mul(3); vs]).unwrap();
            }
            for i in 0..=40u8 {
                let (mut fast, mut general) = (vec![0xEE; vs + 1], vec![0xEE; vs + 1]);
                let hit = t.lookup(&key(i), &mut fast[..vs]);
                assert_eq!(hit, t.lookup_general(&key(i), &mut general[..vs]), "{spec:?}: key {i}");
                assert_eq!(fast, general, "{spec:?}: key {i}");
                assert_eq!(hit, kind.is_array() && i < 64 || (1..=20).contains(&i), "{spec:?}: key {i}");
            }
        }
        // Keys in a chain from one home slot, longer than the home path reads in line: each
        // found where it sits, whichever path ends its lookup, and none after its deletion.
        for (kind, ks, vs, ttl_ms) in [
            (MapKind::Hash, 8, 8, 0),
            (MapKind::Hash, 13, 8, 0),
            (MapKind::LruHash, 13, 1, 1000),
            (MapKind::Hash, 16, 4, 0),
        ] {
            let spec = MapSpec { name: "c".into(), kind, key_size: ks, value_size: vs, capacity: 64, ttl_ms };
            let t = Table::new(&spec);
            let (ks, vs) = (ks as usize, vs as usize);
            let key = |i: u32| [&i.to_le_bytes()[..], &vec![0x5A; ks - 4]].concat();
            let home = |i: u32| t.home(&key_words_of::<2>(&key(i))[..t.layout.key_words]);
            let chain: Vec<u32> = (0..).filter(|&i| home(i) == home(0)).take(HOME_STEPS + 2).collect();
            for (n, &i) in chain.iter().enumerate() {
                t.update(&key(i), &vec![n as u8 + 1; vs]).unwrap();
            }
            for (n, &i) in chain.iter().enumerate() {
                let mut out = vec![0; vs];
                assert!(t.lookup(&key(i), &mut out) && out == vec![n as u8 + 1; vs], "{spec:?}: link {n}");
            }
            assert!(t.delete(&key(chain[0])));
            let mut out = vec![0; vs];
            assert!(!t.lookup(&key(chain[0]), &mut out), "{spec:?}: deleted");
            for (n, &i) in chain.iter().enumerate().skip(1) {
                assert!(t.lookup(&key(i), &mut out) && out == vec![n as u8 + 1; vs], "{spec:?}: link {n} moved back");
            }
            if ttl_ms > 0 {
                t.skew_ms.store(2 * ttl_ms, Relaxed);
                assert!(!t.lookup(&key(chain[1]), &mut out), "{spec:?}: expired at home");
            }
        }
        // Keys and value places of other sizes than the map's (the host's glue never passes
        // them; a caller in the host might) on the paths with sizes known: what the general path
        // answers, nothing written past the place.
        for (ks, vs) in [(4, 4), (8, 8), (13, 8), (13, 1), (16, 8)] {
            let spec = MapSpec {
                name: "z".into(),
                kind: MapKind::Hash,
                key_size: ks,
                value_size: vs,
                capacity: 64,
                ttl_ms: 0,
            };
            let t = Table::new(&spec);
            let (ks, vs) = (ks as usize, vs as usize);
            t.update(&vec![9; ks], &vec![0xA5; vs]).unwrap();
            for (k, v) in [(ks, vs + 1), (ks, vs - 1), (ks - 1, vs), (ks + 1, vs)] {
                let (mut fast, mut general) = (vec![0xEE; v + 1], vec![0xEE; v + 1]);
                let hit = t.lookup(&vec![9; k], &mut fast[..v]);
                assert_eq!(hit, t.lookup_general(&vec![9; k], &mut general[..v]), "{spec:?}: key {k}, value {v}");
                assert_eq!(fast, general, "{spec:?}: key {k}, value {v}");
                assert_eq!(fast[v], 0xEE, "{spec:?}: written past a value place of {v} bytes");
            }
        }
        let lpm = Table::new(&MapSpec {
            name: "r".into(),
            kind: MapKind::LpmTrie,
            key_size: 8,
            value_size: 4,
            capacity: 8,
            ttl_ms: 0,
        });
        lpm.update(&[24, 0, 0, 0, 10, 1, 2, 0], &[7; 4]).unwrap();
        let mut out = [0; 4];
        assert!(lpm.lookup(&[32, 0, 0, 0, 10, 1, 2, 3], &mut out) && out == [7; 4], "the longest prefix");
    }
}
