//! The batch calls (`map_lookup_batch`, `map_update_batch`): a burst's keys in one host call, on
//! the plugin's memory (ranges the glue checked) or, for a native build, on slices. Tables of
//! one-word keys and values and of a fixed shape (`Table::fixed_shape`) take loops of their own,
//! their sizes known at compile time.

use super::MAX_BATCH;
use crate::plugin::maps::{key_words_of, on_fixed, put_word, word_of, Table, WordBatch};
#[cfg(test)]
use crate::plugin::maps::{MapKind, MapSpec};
use std::ops::Range;
use wasmdp_abi::{err, map};

/// `map_lookup_batch` on the plugin's memory `data`: the keys, values and found bytes at the
/// given ranges (checked to be in `data` and to hold `found.len()` entries; they may overlap, so
/// key `i` is read after entry `i - 1` was written).
pub(crate) fn lookup_batch_in(
    t: &Table,
    data: &mut [u8],
    keys: Range<usize>,
    values: Range<usize>,
    found: Range<usize>,
) -> i32 {
    let (ks, vs) = (t.spec().key_size as usize, t.spec().value_size as usize);
    let (n, at) = (found.len(), [keys.start, values.start, found.start]);
    if t.one_word() {
        return with_const!(ks, K in [4, 8] => with_const!(vs, V in [4, 8] =>
            lookup_words_in::<K, V>(t, data, at, ks, vs, n))) as i32;
    }
    if t.fixed_shape().is_some() {
        // Values of 1 (a verdict, a flag) and 8 bytes (a counter, a 5-tuple's state) written as
        // one store, not through a dispatch on their length.
        return with_const!(vs, V in [1, 8] =>
            on_fixed!(t, fn fixed_in::<V, true>(t, data, at, ks, vs, n)).unwrap_or(0) as i32);
    }
    let mut hits = 0;
    let mut key = [0u8; map::MAX_KEY as usize];
    for i in 0..found.len() {
        // Copied first: the ranges may overlap each other. A key of up to 8 (16) bytes as one
        // (two) words: a copy of a length known only at run time is a call of memcpy.
        let src = &data[keys.start + i * ks..][..ks];
        if ks <= 8 {
            key[..8].copy_from_slice(&word_of(src).to_le_bytes());
        } else if ks <= 16 {
            key[..8].copy_from_slice(&word_of(&src[..8]).to_le_bytes());
            key[8..16].copy_from_slice(&word_of(&src[8..]).to_le_bytes());
        } else {
            key[..ks].copy_from_slice(src);
        }
        // The general path itself (the shapes with paths of their own were taken above).
        let hit = t.lookup_general(&key[..ks], &mut data[values.start + i * vs..][..vs]);
        data[found.start + i] = u8::from(hit);
        hits += usize::from(hit);
    }
    hits as i32
}

/// [`Table::lookup_words`] on a batch in the plugin's memory (None from [`MemoryBatch::new`]: no
/// hits), in a function of its own, so that the loop has the registers (see there).
#[inline(never)]
fn lookup_words_in<const K: usize, const V: usize>(
    t: &Table,
    data: &mut [u8],
    at: [usize; 3],
    ks: usize,
    vs: usize,
    n: usize,
) -> usize {
    MemoryBatch::<K, V>::new(data, at, ks, vs, n, true).map_or(0, |mut io| t.lookup_words(&mut io))
}

/// [`Table::lookup_fixed`] (`LOOKUP`) or [`Table::update_fixed`] on a batch in the plugin's memory,
/// likewise: the batch a local of a function of its own (behind the caller's pointer, its fields
/// were loaded again for every key). Keys of two words of 13 bytes (an IPv4 5-tuple) and 16 (an
/// IPv6 address) with their size known at compile time: each key's place a constant multiple, its
/// second word shifted by a constant, one register fewer for the loop.
#[inline(never)]
fn fixed_in<const KW: usize, const S: usize, const LRU: bool, const TTL: bool, const V: usize, const LOOKUP: bool>(
    t: &Table,
    data: &mut [u8],
    at: [usize; 3],
    ks: usize,
    vs: usize,
    n: usize,
) -> usize {
    let found = LOOKUP;
    match ks {
        13 if KW == 2 => {
            MemoryBatch::<13, V>::new(data, at, ks, vs, n, found).map(|io| fixed_run::<KW, S, LRU, TTL, LOOKUP>(t, io))
        }
        16 if KW == 2 => {
            MemoryBatch::<16, V>::new(data, at, ks, vs, n, found).map(|io| fixed_run::<KW, S, LRU, TTL, LOOKUP>(t, io))
        }
        _ => MemoryBatch::<0, V>::new(data, at, ks, vs, n, found).map(|io| fixed_run::<KW, S, LRU, TTL, LOOKUP>(t, io)),
    }
    .unwrap_or(0)
}

/// [`fixed_in`]'s batch run.
#[inline(always)]
fn fixed_run<const KW: usize, const S: usize, const LRU: bool, const TTL: bool, const LOOKUP: bool>(
    t: &Table,
    mut io: impl WordBatch,
) -> usize {
    if LOOKUP {
        t.lookup_fixed::<KW, S, LRU, TTL>(&mut io)
    } else {
        t.update_fixed::<KW, S, LRU, TTL>(&io)
    }
}

/// [`Table::lookup_words`] on a native build's slices, likewise.
#[inline(never)]
fn lookup_words_slices<const K: usize, const V: usize>(t: &Table, io: &mut SliceBatch<'_, K, V>) -> usize {
    t.lookup_words(io)
}

/// `map_update_batch` on the plugin's memory `data`: the keys at `keys`, their values at `values`
/// (ranges checked against the memory). The number of entries written: all of them, or the index
/// of the first that did not fit.
pub(crate) fn update_batch_in(t: &Table, data: &mut [u8], keys: Range<usize>, values: Range<usize>) -> i32 {
    let (ks, vs) = (t.spec().key_size as usize, t.spec().value_size as usize);
    let n = keys.len() / ks;
    if t.fixed_shape().is_some() {
        let at = [keys.start, values.start, 0];
        return with_const!(vs, V in [1, 8] =>
            on_fixed!(t, fn fixed_in::<V, false>(t, data, at, ks, vs, n)).unwrap_or(0) as i32);
    }
    for i in 0..n {
        if t.update(&data[keys.start + i * ks..][..ks], &data[values.start + i * vs..][..vs]).is_err() {
            return i as i32;
        }
    }
    n as i32
}

/// `map_lookup_batch` of a native build: `n` keys end to end in `keys`, values and found flags to
/// `values` and `found` (separate slices, so nothing to copy first).
pub(crate) fn lookup_batch_slices(t: &Table, keys: &[u8], n: i32, values: &mut [u8], found: &mut [u8]) -> i32 {
    let (ks, vs) = (t.spec().key_size as usize, t.spec().value_size as usize);
    let Some(n) = usize::try_from(n).ok().filter(|&n| n <= MAX_BATCH) else { return err::BAD_RANGE };
    if keys.len() != n * ks || values.len() != n * vs || found.len() != n {
        return err::BAD_MEMORY;
    }
    if t.one_word() {
        return with_const!(ks, K in [4, 8] => with_const!(vs, V in [4, 8] =>
            lookup_words_slices::<K, V>(t, &mut SliceBatch { keys, values, found, ks, vs }))) as i32;
    }
    if let Some(hits) = on_fixed!(t, lookup_fixed(&mut SliceBatch::<0, 0> { keys, values, found, ks, vs })) {
        return hits as i32;
    }
    let mut hits = 0;
    for ((k, v), f) in keys.chunks_exact(ks).zip(values.chunks_exact_mut(vs)).zip(found.iter_mut()) {
        let hit = t.lookup_general(k, v);
        *f = u8::from(hit);
        hits += i32::from(hit);
    }
    hits
}

/// A batch in the plugin's memory: `n` keys of `ks` bytes end to end from `keys`, values of `vs`
/// from `values`, found bytes from `found` (they may overlap). `K` and `V`, when not 0, are `ks` and
/// `vs` known at compile time (4 or 8, the examples' sizes: each key one load and each value one
/// store, not a dispatch on the length). [`MemoryBatch::new`] checks once that every entry lies in
/// `data`, so that reading key `i` and writing entry `i` need no bounds check of their own (they
/// were most of a one-word lookup's cost after the hash and the probe).
struct MemoryBatch<'a, const K: usize, const V: usize> {
    data: &'a mut [u8],
    keys: usize,
    values: usize,
    found: usize,
    ks: usize,
    vs: usize,
    n: usize,
}

/// `n` if it is not 0, else `dynamic`.
#[inline(always)]
const fn known(n: usize, dynamic: usize) -> usize {
    if n != 0 {
        n
    } else {
        dynamic
    }
}

impl<'a, const K: usize, const V: usize> MemoryBatch<'a, K, V> {
    /// The batch of `n` entries at `keys`, `values` and `found` (None: an update batch, no found
    /// bytes) in `data`; None when one of them does not lie in `data`, or `K`/`V` are not the sizes.
    fn new(data: &'a mut [u8], at: [usize; 3], ks: usize, vs: usize, n: usize, found: bool) -> Option<Self> {
        let fits = |start: usize, size: usize| {
            n.checked_mul(size).and_then(|b| b.checked_add(start)).is_some_and(|end| end <= data.len())
        };
        let ok = (K == 0 || K == ks)
            && (V == 0 || V == vs)
            && fits(at[0], ks)
            && fits(at[1], vs)
            && (!found || fits(at[2], 1));
        ok.then_some(MemoryBatch { data, keys: at[0], values: at[1], found: if found { at[2] } else { 0 }, ks, vs, n })
    }

    /// Bytes `at..at + len` of the memory.
    ///
    /// # Safety
    ///
    /// They lie in one of the entries [`new`](Self::new) checked.
    #[inline(always)]
    unsafe fn bytes(&self, at: usize, len: usize) -> &[u8] {
        debug_assert!(at + len <= self.data.len());
        // SAFETY: the caller's contract: within `data`.
        unsafe { self.data.get_unchecked(at..at + len) }
    }

    /// The little-endian word at `at`.
    ///
    /// # Safety
    ///
    /// As [`bytes`](Self::bytes), for `at..at + 8`.
    #[inline(always)]
    unsafe fn word_at(&self, at: usize) -> u64 {
        // SAFETY: the caller's contract.
        u64::from_le_bytes(unsafe { self.bytes(at, 8) }.try_into().expect("eight bytes"))
    }

    /// [`bytes`](Self::bytes), to write.
    ///
    /// # Safety
    ///
    /// As [`bytes`](Self::bytes).
    #[inline(always)]
    unsafe fn bytes_mut(&mut self, at: usize, len: usize) -> &mut [u8] {
        debug_assert!(at + len <= self.data.len());
        // SAFETY: the caller's contract: within `data`.
        unsafe { self.data.get_unchecked_mut(at..at + len) }
    }
}

impl<const K: usize, const V: usize> WordBatch for MemoryBatch<'_, K, V> {
    #[inline(always)]
    fn len(&self) -> usize {
        self.n
    }

    #[inline(always)]
    unsafe fn key<const KW: usize>(&self, i: usize) -> [u64; KW] {
        let ks = known(K, self.ks);
        let at = self.keys + i * ks;
        if KW == 2 {
            // Two loads, the second ending at the key's end and shifted down past the bytes the
            // first had: no dispatch on the length (a 13-byte 5-tuple's case).
            // SAFETY: entry i < n lies in what `new` checked, and 8 < ks <= 16 (the contract), so
            // both words lie in the key.
            let (lo, hi) = unsafe { (self.word_at(at), self.word_at(at + ks - 8)) };
            let hi = hi >> (8 * (16 - ks));
            return std::array::from_fn(|j| if j == 0 { lo } else { hi });
        }
        // SAFETY: entry i < n (the contract) lies in what `new` checked.
        key_words_of(unsafe { self.bytes(at, ks) })
    }

    #[inline(always)]
    unsafe fn value(&self, i: usize) -> u64 {
        let vs = known(V, self.vs);
        // SAFETY: as `key`.
        word_of(unsafe { self.bytes(self.values + i * vs, vs) })
    }

    #[inline(always)]
    unsafe fn put(&mut self, i: usize, value: Option<u64>) {
        let vs = known(V, self.vs);
        if let Some(v) = value {
            // SAFETY: as `key`.
            put_word(v, unsafe { self.bytes_mut(self.values + i * vs, vs) });
        }
        // SAFETY: as `key`.
        unsafe { self.bytes_mut(self.found + i, 1)[0] = u8::from(value.is_some()) };
    }
}

/// A batch of a native build: keys, values and found flags in slices of their own.
struct SliceBatch<'a, const K: usize, const V: usize> {
    keys: &'a [u8],
    values: &'a mut [u8],
    found: &'a mut [u8],
    ks: usize,
    vs: usize,
}

impl<const K: usize, const V: usize> WordBatch for SliceBatch<'_, K, V> {
    fn len(&self) -> usize {
        self.found.len()
    }

    #[inline(always)]
    unsafe fn key<const KW: usize>(&self, i: usize) -> [u64; KW] {
        let ks = known(K, self.ks);
        key_words_of(&self.keys[i * ks..][..ks])
    }

    #[inline(always)]
    unsafe fn value(&self, i: usize) -> u64 {
        let vs = known(V, self.vs);
        word_of(&self.values[i * vs..][..vs])
    }

    #[inline(always)]
    unsafe fn put(&mut self, i: usize, value: Option<u64>) {
        let vs = known(V, self.vs);
        if let Some(v) = value {
            put_word(v, &mut self.values[i * vs..][..vs]);
        }
        self.found[i] = u8::from(value.is_some());
    }
}

/// An update batch of a native build: keys and values in slices of their own.
struct SliceUpdates<'a> {
    keys: &'a [u8],
    values: &'a [u8],
    ks: usize,
    vs: usize,
    n: usize,
}

impl WordBatch for SliceUpdates<'_> {
    fn len(&self) -> usize {
        self.n
    }

    #[inline(always)]
    unsafe fn key<const KW: usize>(&self, i: usize) -> [u64; KW] {
        key_words_of(&self.keys[i * self.ks..][..self.ks])
    }

    #[inline(always)]
    unsafe fn value(&self, i: usize) -> u64 {
        word_of(&self.values[i * self.vs..][..self.vs])
    }

    /// (An update batch finds nothing to put.)
    unsafe fn put(&mut self, _: usize, _: Option<u64>) {}
}

/// `map_update_batch` of a native build.
pub(crate) fn update_batch_slices(t: &Table, keys: &[u8], values: &[u8], n: i32) -> i32 {
    let (ks, vs) = (t.spec().key_size as usize, t.spec().value_size as usize);
    let Some(n) = usize::try_from(n).ok().filter(|&n| n <= MAX_BATCH) else { return err::BAD_RANGE };
    if keys.len() != n * ks || values.len() != n * vs {
        return err::BAD_MEMORY;
    }
    if let Some(written) = on_fixed!(t, update_fixed(&SliceUpdates { keys, values, ks, vs, n })) {
        return written as i32;
    }
    for (i, (k, v)) in keys.chunks_exact(ks).zip(values.chunks_exact(vs)).enumerate() {
        if t.update(k, v).is_err() {
            return i as i32;
        }
    }
    n as i32
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hash map of `ks`-byte keys and `vs`-byte values holding keys 1..=5 (byte `k` repeated),
    /// each with the value of bytes `10 * k`, `10 * k + 1`, ...
    fn filled(ks: usize, vs: usize) -> Table {
        let spec = MapSpec {
            name: "t".into(),
            kind: MapKind::Hash,
            key_size: ks as u32,
            value_size: vs as u32,
            capacity: 16,
            ttl_ms: 0,
        };
        let t = Table::new(&spec);
        for k in 1..=5u8 {
            t.update(&vec![k; ks], &value_of(k, vs)).expect("room");
        }
        t
    }

    fn value_of(k: u8, vs: usize) -> Vec<u8> {
        (0..vs as u8).map(|i| 10 * k + i).collect()
    }

    #[test]
    fn batch_lookups_find_every_key_of_every_size_and_leave_misses_alone() {
        // Keys 3, 9 (absent), 1, 5; every size class: one word with sizes known at compile time
        // or not, and several words.
        let wanted = [3u8, 9, 1, 5];
        for (ks, vs) in [(4, 4), (4, 8), (8, 4), (8, 8), (3, 6), (2, 1), (12, 4), (4, 20)] {
            let t = filled(ks, vs);
            let keys: Vec<u8> = wanted.iter().flat_map(|&k| vec![k; ks]).collect();
            let want_values: Vec<u8> =
                wanted.iter().flat_map(|&k| if k == 9 { vec![0xEE; vs] } else { value_of(k, vs) }).collect();
            let (mut values, mut found) = (vec![0xEE; 4 * vs], vec![0xEE; 4]);
            assert_eq!(lookup_batch_slices(&t, &keys, 4, &mut values, &mut found), 3, "{ks}/{vs}: hits");
            assert_eq!((&values, &found[..]), (&want_values, &[1, 0, 1, 1][..]), "{ks}/{vs}: native build");
            // The same in one memory: keys at 0, values after them, found bytes last.
            let mut data = keys.clone();
            data.extend(vec![0xEE; 4 * vs + 4]);
            let (k, v) = (0..4 * ks, 4 * ks..4 * ks + 4 * vs);
            let f = v.end..v.end + 4;
            assert_eq!(lookup_batch_in(&t, &mut data, k, v.clone(), f.clone()), 3, "{ks}/{vs}: hits in memory");
            assert_eq!((&data[v], &data[f]), (&want_values[..], &[1, 0, 1, 1][..]), "{ks}/{vs}: in memory");
        }
    }

    #[test]
    fn a_batch_whose_probes_spend_their_runs_step_budget_still_answers_every_key() {
        // A run of a batch's keys shares one budget of steps (the table's slots); spent, the key
        // is finished out of line and a new run begins. A full small map (4 entries, 12 slots)
        // and 600 lookups, most absent: their steps add up to many times the budget.
        for (ks, vs) in [(4, 4), (8, 8), (13, 8), (16, 1)] {
            let spec = MapSpec {
                name: "t".into(),
                kind: MapKind::Hash,
                key_size: ks as u32,
                value_size: vs as u32,
                capacity: 4,
                ttl_ms: 0,
            };
            let t = Table::new(&spec);
            let key = |i: usize| (0..ks).map(|j| (i * 7 + j) as u8).collect::<Vec<u8>>();
            for i in 0..4 {
                t.update(&key(i), &vec![i as u8 + 1; vs]).unwrap();
            }
            let n = 600;
            let steps: usize = (0..n).map(|i| t.probe_length(&key(i % 150)) - 1).sum();
            assert!(steps > 4 * t.slots(), "{ks}: {steps} steps, the test needs more than a budget's");
            let keys: Vec<u8> = (0..n).flat_map(|i| key(i % 150)).collect();
            let (mut values, mut found) = (vec![0xEE; n * vs], vec![0xEE; n]);
            let hits = lookup_batch_slices(&t, &keys, n as i32, &mut values, &mut found);
            let mut data = [keys.clone(), vec![0xEE; n * vs + n]].concat();
            let (k, v) = (0..n * ks, n * ks..n * (ks + vs));
            let f = v.end..v.end + n;
            assert_eq!(lookup_batch_in(&t, &mut data, k, v.clone(), f.clone()), hits, "{ks}: in memory");
            assert_eq!((&data[v], &data[f]), (&values[..], &found[..]), "{ks}: in memory as in slices");
            let mut want_hits = 0;
            for i in 0..n {
                let mut one = vec![0xEE; vs];
                let hit = t.lookup(&key(i % 150), &mut one);
                want_hits += i32::from(hit);
                assert_eq!((found[i], &values[i * vs..][..vs]), (u8::from(hit), &one[..]), "{ks}: key {i}");
            }
            assert_eq!((hits, want_hits), (16, 16), "{ks}: each of the 4 keys looked up 4 times");
        }
    }

    #[test]
    fn overlapping_batch_ranges_read_each_key_after_the_entry_before_is_written() {
        // Keys 2 and 1; the values start at key 1, so entry 0's value (key 2's: 20 21 22 ...)
        // lands on key 1 before key 1 is read, and that key is absent: its value slot is left alone.
        for ks in [4, 3, 8] {
            let t = filled(ks, ks);
            let mut data: Vec<u8> = [2u8, 1].iter().flat_map(|&k| vec![k; ks]).collect();
            data.extend(vec![0xEE; ks + 2]);
            let (keys, values, found) = (0..2 * ks, ks..3 * ks, 3 * ks..3 * ks + 2);
            assert_eq!(lookup_batch_in(&t, &mut data, keys, values, found), 1, "{ks}-byte keys");
            let want: Vec<u8> = [vec![2; ks], value_of(2, ks), vec![0xEE; ks], vec![1, 0]].concat();
            assert_eq!(data, want, "{ks}-byte keys");
        }
    }

    #[test]
    fn batches_of_every_fixed_shape_agree_with_single_calls_mark_use_and_respect_expiry() {
        // Keys of one and two words, LRU and expiry stamps or none: the fixed path's answers are
        // the general path's, a hit counts as a use, an expired entry is absent and rewritten.
        for (kind, ttl_ms, ks, vs) in [
            (MapKind::LruHash, 0, 13, 1),
            (MapKind::Hash, 1000, 13, 8),
            (MapKind::LruHash, 1000, 4, 4),
            (MapKind::Hash, 0, 16, 8),
            (MapKind::LruHash, 1000, 16, 2),
        ] {
            let spec =
                MapSpec { name: "t".into(), kind, key_size: ks as u32, value_size: vs as u32, capacity: 8, ttl_ms };
            let t = Table::new(&spec);
            assert!(t.fixed_shape().is_some(), "{spec:?}");
            let keys: Vec<u8> = (1..=5u8).flat_map(|k| vec![k; ks]).collect();
            let values: Vec<u8> = (1..=5u8).flat_map(|k| value_of(k, vs)).collect();
            assert_eq!(update_batch_slices(&t, &keys, &values, 5), 5);
            let wanted: Vec<u8> = [3u8, 9, 1, 5].iter().flat_map(|&k| vec![k; ks]).collect();
            let (mut got, mut found) = (vec![0xEE; 4 * vs], [0xEE; 4]);
            assert_eq!(lookup_batch_slices(&t, &wanted, 4, &mut got, &mut found), 3, "{spec:?}");
            let want: Vec<u8> =
                [3u8, 9, 1, 5].iter().flat_map(|&k| if k == 9 { vec![0xEE; vs] } else { value_of(k, vs) }).collect();
            assert_eq!((got, found), (want, [1, 0, 1, 1]), "{spec:?}");
            // The same through the plugin's memory, overlapping nothing.
            let mut data = wanted.clone();
            data.extend(vec![0xEE; 4 * vs + 4]);
            let (k, v) = (0..4 * ks, 4 * ks..4 * ks + 4 * vs);
            assert_eq!(lookup_batch_in(&t, &mut data, k, v.clone(), v.end..v.end + 4), 3, "{spec:?}");
            if kind == MapKind::LruHash {
                // Three new keys into the full map (8): the five used ones stay, the least recently
                // used go first: 2 and 4 (not looked up) are evicted before 1, 3 and 5.
                let more: Vec<u8> = (6..=8u8).flat_map(|k| vec![k; ks]).collect();
                assert_eq!(update_batch_slices(&t, &more, &vec![0; 3 * vs], 3), 3);
                let extra: Vec<u8> = (10..=11u8).flat_map(|k| vec![k; ks]).collect();
                assert_eq!(update_batch_slices(&t, &extra, &vec![0; 2 * vs], 2), 2);
                let (mut got, mut found) = (vec![0; 5 * vs], [0; 5]);
                assert_eq!(lookup_batch_slices(&t, &keys, 5, &mut got, &mut found), 3, "{spec:?}");
                assert_eq!(found, [1, 0, 1, 0, 1], "{spec:?}: the unused ones were evicted");
            }
            if ttl_ms > 0 {
                t.skew(1500);
                let (mut got, mut found) = (vec![0; 4 * vs], [0; 4]);
                assert_eq!(lookup_batch_slices(&t, &wanted, 4, &mut got, &mut found), 0, "{spec:?}: expired");
                assert_eq!(update_batch_slices(&t, &keys[..ks], &values[..vs], 1), 1);
                assert_eq!(lookup_batch_slices(&t, &keys[..ks], 1, &mut got[..vs], &mut found[..1]), 1, "{spec:?}");
                assert_eq!(&got[..vs], &value_of(1, vs)[..], "{spec:?}: written afresh");
            }
        }
    }

    #[test]
    fn a_fixed_shape_update_batch_mixes_rewrites_and_inserts_and_stops_at_the_first_refused() {
        // Rewrites in place and inserts interleaved (each insert ends a run of rewrites), then a
        // key the full map refuses: the count is of the keys written before it, in order, and
        // nothing after it is written.
        for (ks, vs) in [(8, 8), (13, 1), (16, 4)] {
            let spec =
                MapSpec { name: "t".into(), kind: MapKind::Hash, key_size: ks, value_size: vs, capacity: 4, ttl_ms: 0 };
            let t = Table::new(&spec);
            assert!(t.fixed_shape().is_some(), "{spec:?}");
            let key = |k: u8| vec![k; ks as usize];
            let cat = |ks: &[u8], f: &dyn Fn(u8) -> Vec<u8>| ks.iter().flat_map(|&k| f(k)).collect::<Vec<u8>>();
            let vs = vs as usize;
            assert_eq!(update_batch_slices(&t, &cat(&[1, 2], &key), &cat(&[1, 2], &|k| value_of(k, vs)), 2), 2);
            // 1 and 2 rewritten (value of k + 10), 3 and 4 new, 5 refused (full), 1 again not reached.
            let batch = [1u8, 3, 2, 4, 5, 1];
            let values = cat(&batch, &|k| value_of(k + 10, vs));
            assert_eq!(update_batch_slices(&t, &cat(&batch, &key), &values, 6), 4, "{spec:?}");
            let wanted = [1u8, 2, 3, 4, 5];
            let (mut got, mut found) = (vec![0; 5 * vs], [0; 5]);
            assert_eq!(lookup_batch_slices(&t, &cat(&wanted, &key), 5, &mut got, &mut found), 4, "{spec:?}");
            assert_eq!(found, [1, 1, 1, 1, 0], "{spec:?}");
            assert_eq!(got[..4 * vs], cat(&[1, 2, 3, 4], &|k| value_of(k + 10, vs))[..], "{spec:?}");
        }
    }

    #[test]
    fn batch_keys_of_every_length_are_the_keys_single_calls_see() {
        // Distinct bytes in every position (a key of one repeated byte hides a word read from the
        // wrong place): written one way, read the other.
        for ks in 1..=16usize {
            let spec = MapSpec {
                name: "t".into(),
                kind: MapKind::Hash,
                key_size: ks as u32,
                value_size: 8,
                capacity: 64,
                ttl_ms: 0,
            };
            let (single, batched) = (Table::new(&spec), Table::new(&spec));
            let keys: Vec<u8> = (0..8 * ks).map(|i| (i * 37 + 11) as u8).collect();
            let values: Vec<u8> = (0..64u8).collect();
            for (k, v) in keys.chunks_exact(ks).zip(values.chunks_exact(8)) {
                single.update(k, v).unwrap();
            }
            assert_eq!(update_batch_slices(&batched, &keys, &values, 8), 8);
            for t in [&single, &batched] {
                let (mut got, mut found) = (vec![0; 64], [0; 8]);
                assert_eq!(lookup_batch_slices(t, &keys, 8, &mut got, &mut found), 8, "{ks}-byte keys");
                assert_eq!(got, values, "{ks}-byte keys");
                let mut data = [keys.clone(), vec![0; 72]].concat();
                let (k, v) = (0..8 * ks, 8 * ks..8 * ks + 64);
                assert_eq!(lookup_batch_in(t, &mut data, k, v.clone(), v.end..v.end + 8), 8, "{ks}-byte keys");
                assert_eq!(&data[v], &values[..], "{ks}-byte keys");
                for (k, v) in keys.chunks_exact(ks).zip(values.chunks_exact(8)) {
                    let mut out = [0; 8];
                    assert!(t.lookup(k, &mut out), "{ks}-byte keys");
                    assert_eq!(&out, v);
                }
            }
        }
    }

    /// Not a check: batches of 32 lookups (all hits) in a map of 1000 random keys, for callgrind's
    /// count per key (BENCHMARKS.md: `bench/map-cost.sh`, which runs it under valgrind with
    /// `--toggle-collect='*lookup_batch_in*'`). The shape comes from `WASMDP_MAP_COST`:
    /// `KIND:KEY_SIZE:VALUE_SIZE:TTL_MS` (default `hash:8:8:0`); `WASMDP_MAP_COST_SINGLE=1`: the same
    /// keys one `map_lookup` at a time.
    #[test]
    #[ignore]
    fn batch_lookup_cost() {
        let shape = std::env::var("WASMDP_MAP_COST").unwrap_or_else(|_| "hash:8:8:0".into());
        let f: Vec<&str> = shape.split(':').collect();
        let kind = match f[0] {
            "lru_hash" => MapKind::LruHash,
            _ => MapKind::Hash,
        };
        let (ks, vs, ttl_ms) = (f[1].parse::<usize>().unwrap(), f[2].parse::<usize>().unwrap(), f[3].parse().unwrap());
        let spec =
            MapSpec { name: "t".into(), kind, key_size: ks as u32, value_size: vs as u32, capacity: 1024, ttl_ms };
        let t = Table::fixed_key(&spec);
        // The clock as the poll loop's ticker keeps it (a load, not a clock read, for expiry);
        // this test runs alone in its process (`--ignored --exact`).
        crate::plugin::counters::tick_clock();
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let keys: Vec<Vec<u8>> = (0..1000).map(|_| (0..ks).map(|_| next() as u8).collect()).collect();
        for k in &keys {
            t.update(k, &vec![7; vs]).unwrap();
        }
        // One memory: 32 keys, their values, their found bytes.
        let mut data = vec![0u8; 32 * (ks + vs + 1)];
        let (kr, vr) = (0..32 * ks, 32 * ks..32 * (ks + vs));
        let fr = vr.end..vr.end + 32;
        let mut hits = 0;
        let single = std::env::var("WASMDP_MAP_COST_SINGLE").is_ok_and(|v| v == "1");
        for round in 0..20_000 {
            for j in 0..32 {
                data[j * ks..][..ks].copy_from_slice(&keys[(round * 32 + j * 7) % 1000]);
            }
            if single {
                for j in 0..32 {
                    let (key, value) = data[..32 * (ks + vs)].split_at_mut(32 * ks);
                    let hit = single_lookup_for_cost(&t, &key[j * ks..][..ks], &mut value[j * vs..][..vs]) == 0;
                    hits += i32::from(hit);
                }
                continue;
            }
            hits += lookup_batch_in(&t, std::hint::black_box(&mut data), kr.clone(), vr.clone(), fr.clone());
        }
        assert_eq!(hits, 20_000 * 32);
    }

    /// `map_lookup`'s table side, for `bench/map-cost.sh --single` (callgrind counts this function).
    #[inline(never)]
    fn single_lookup_for_cost(t: &Table, key: &[u8], value: &mut [u8]) -> i32 {
        crate::plugin::ops::maps::lookup(t, key, value)
    }
}
