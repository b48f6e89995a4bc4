//! Single lookups (`map_lookup`, [`Table::lookup`]) on a path chosen for the map's shape when the
//! table is made: one-word keys and values with their sizes known at compile time, the fixed
//! shapes' loop for one key, or the general path (arrays, `lpm_trie`, other shapes). A call then
//! makes no test of the shape and no dispatch on the key's or value's length.

use super::*;

/// A single lookup's path: [`Table::lookup`]'s contract.
pub(super) type Single = fn(&Table, &[u8], &mut [u8]) -> bool;

impl Table {
    /// The single-lookup path for this table's shape and sizes.
    pub(super) fn single_path(&self) -> Single {
        if self.prefixes.is_some() {
            return Table::lookup_general;
        }
        if self.one_word() {
            return match (self.spec.key_size, self.spec.value_size) {
                (4, 4) => single_word::<4, 4>,
                (4, 8) => single_word::<4, 8>,
                (8, 4) => single_word::<8, 4>,
                (8, 8) => single_word::<8, 8>,
                _ => single_word::<0, 0>,
            };
        }
        match self.spec.key_size {
            13 => on_fixed!(self, ptr single_fixed::<13>),
            16 => on_fixed!(self, ptr single_fixed::<16>),
            _ => on_fixed!(self, ptr single_fixed::<0>),
        }
        .unwrap_or(Table::lookup_general)
    }
}

/// `K` (`V`), when not 0, is the key's (value's) size; `bytes` is cut to it so that the compiler
/// knows its length (a slice of another length takes the general form).
#[inline(always)]
fn sized<const N: usize>(bytes: &[u8]) -> &[u8] {
    if N != 0 && bytes.len() >= N {
        &bytes[..N]
    } else {
        bytes
    }
}

/// A lookup in a map of one-word keys and values ([`Table::one_word`]).
fn single_word<const K: usize, const V: usize>(t: &Table, key: &[u8], out: &mut [u8]) -> bool {
    let Some(value) = t.lookup_word(word_of(sized::<K>(key))) else { return false };
    if V != 0 && out.len() == V {
        put_word(value, &mut out[..V]);
    } else {
        put_word(value, out);
    }
    true
}

/// A lookup in a map of a fixed shape ([`Table::fixed_shape`]): its batches' loop, for one key
/// (of `K` bytes when not 0: 13, an IPv4 5-tuple, or 16).
fn single_fixed<const KW: usize, const S: usize, const LRU: bool, const TTL: bool, const K: usize>(
    t: &Table,
    key: &[u8],
    out: &mut [u8],
) -> bool {
    t.lookup_fixed::<KW, S, LRU, TTL>(&mut One::<K> { key, out }) == 1
}

/// One key (of `K` bytes when not 0) and the value's place, as a batch.
struct One<'a, const K: usize> {
    key: &'a [u8],
    out: &'a mut [u8],
}

impl<const K: usize> WordBatch for One<'_, K> {
    fn len(&self) -> usize {
        1
    }

    #[inline(always)]
    unsafe fn key<const KW: usize>(&self, _: usize) -> [u64; KW] {
        key_words_of(sized::<K>(self.key))
    }

    #[inline(always)]
    unsafe fn value(&self, _: usize) -> u64 {
        word_of(self.out)
    }

    #[inline(always)]
    unsafe fn put(&mut self, _: usize, value: Option<u64>) {
        if let Some(v) = value {
            put_word(v, self.out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugin::maps::MapKind;

    #[test]
    fn each_shape_takes_its_path_and_answers_as_the_general_path() {
        // One-word maps of known and other sizes, fixed shapes with and without stamps, a shape of
        // neither kind, an array and an lpm_trie: the same answers as the general path, hits and
        // misses, values written to their length and no further.
        for (kind, ks, vs, ttl_ms) in [
            (MapKind::Hash, 4, 4, 0),
            (MapKind::Hash, 8, 8, 0),
            (MapKind::Hash, 3, 5, 0),
            (MapKind::Hash, 13, 8, 0),
            (MapKind::LruHash, 13, 1, 60_000),
            (MapKind::Hash, 16, 2, 1000),
            (MapKind::Hash, 20, 12, 0),
            (MapKind::Array, 4, 8, 0),
        ] {
            let spec = MapSpec { name: "t".into(), kind, key_size: ks, value_size: vs, capacity: 64, ttl_ms };
            let t = Table::new(&spec);
            let general = std::ptr::fn_addr_eq(t.single, Table::lookup_general as Single);
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
