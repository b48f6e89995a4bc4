//! One map table: open addressing over a flat array of `AtomicU64` words, so every access is a
//! plain atomic load or store (no `unsafe`), and readers never wait for a lock.
//!
//! A slot is a header word followed by the key words (hash maps only) and the value words. The
//! header holds the state (empty, full, deleted), a write bit and a sequence number bumped by every
//! write. A reader copies the slot and re-reads the header: if it changed, it copies again (a
//! seqlock). Rewrites of an existing entry take the slot's write bit with a compare-and-swap;
//! inserts and deletes also hold the table's mutex, so two inserts of one key cannot both succeed
//! and deleted slots can be reused. Adds are `fetch_add` on one value word.
//!
//! Keys come from packets, so an attacker chooses them: the hash is seeded per table at random, and
//! the table has twice as many slots as entries, so probe chains stay short.

use super::MapSpec;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{fence, AtomicU32, AtomicU64, Ordering::*};
use std::sync::Mutex;

const EMPTY: u64 = 0;
const FULL: u64 = 1;
const DELETED: u64 = 2;
const STATE: u64 = 3;
const WRITING: u64 = 4;
const SEQ_ONE: u64 = 8;

/// Why a write was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MapError {
    /// The hash map holds `capacity` entries already.
    Full,
    /// An array index past the capacity.
    BadIndex,
}

/// Words per slot, slots, and the bytes they take.
#[derive(Debug, Clone, Copy)]
pub(super) struct Layout {
    key_words: usize,
    value_words: usize,
    slots: usize,
}

impl Layout {
    pub(super) fn of(spec: &MapSpec) -> Layout {
        let value_words = (spec.value_size as usize).div_ceil(8);
        if spec.kind.is_array() {
            return Layout { key_words: 0, value_words, slots: spec.capacity as usize };
        }
        let slots = (spec.capacity as usize * 2).next_power_of_two();
        Layout { key_words: (spec.key_size as usize).div_ceil(8), value_words, slots }
    }

    fn stride(&self) -> usize {
        1 + self.key_words + self.value_words
    }

    pub(super) fn bytes(&self) -> u64 {
        (self.slots * self.stride() * 8) as u64
    }
}

/// One table.
pub struct Table {
    spec: MapSpec,
    layout: Layout,
    words: Box<[AtomicU64]>,
    seed: u64,
    len: AtomicU32,
    inserts: Mutex<()>,
}

impl std::fmt::Debug for Table {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Table").field("spec", &self.spec).field("len", &self.len()).finish()
    }
}

/// Little-endian words of `bytes`, zero-padded.
fn words_of(bytes: &[u8], out: &mut [u64]) {
    for (w, chunk) in out.iter_mut().zip(bytes.chunks(8)) {
        *w = word_of(chunk);
    }
}

/// Up to 8 bytes as a little-endian word, zero-padded. Whole words and the 4-byte keys and values
/// of the examples are one load; other lengths go byte by byte (a `copy_from_slice` of a length
/// not known at compile time is a call of memcpy: 28 instructions per lookup of a 4-byte key).
#[inline(always)]
pub(crate) fn word_of(chunk: &[u8]) -> u64 {
    if let Ok(b) = <[u8; 8]>::try_from(chunk) {
        return u64::from_le_bytes(b);
    }
    if let Ok(b) = <[u8; 4]>::try_from(chunk) {
        return u32::from_le_bytes(b).into();
    }
    chunk.iter().rev().fold(0, |w, &b| w << 8 | u64::from(b))
}

/// The first `out.len()` (at most 8) bytes of `w`, little-endian, into `out`; as [`word_of`] the
/// common lengths without a memcpy call.
#[inline(always)]
pub(crate) fn put_word(w: u64, out: &mut [u8]) {
    match out.len() {
        8 => out.copy_from_slice(&w.to_le_bytes()),
        4 => out.copy_from_slice(&(w as u32).to_le_bytes()),
        _ => out.iter_mut().enumerate().for_each(|(i, b)| *b = (w >> (8 * i)) as u8),
    }
}

/// The seeded hash of a key's words.
#[inline(always)]
fn hash_words(seed: u64, key: &[u64]) -> usize {
    let mut h = seed;
    for &w in key {
        h = (h ^ w).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        h ^= h >> 29;
    }
    h.wrapping_mul(0xBF58_476D_1CE4_E5B9) as usize
}

/// Linear probing from `hash` over `slots` slots (a power of two; slot `i` is `slot_of(i)`) for
/// the full slot that `read` says holds our key, returning what `read` read there: its index, its
/// header and that, all seen between two equal reads of the header (a seqlock pass).
#[inline(always)]
fn probe<S: AsRef<[AtomicU64]>, T>(
    slots: usize,
    hash: usize,
    slot_of: impl Fn(usize) -> Option<S>,
    read: impl Fn(&S) -> Option<T>,
) -> Option<(usize, u64, T)> {
    let mask = slots - 1;
    let mut i = hash & mask;
    for _ in 0..slots {
        let slot = slot_of(i)?;
        let h = settled(slot.as_ref());
        match h & STATE {
            EMPTY => return None,
            FULL => {
                if let Some(got) = read(&slot) {
                    fence(Acquire);
                    if slot.as_ref()[0].load(Relaxed) == h {
                        return Some((i, h, got));
                    }
                    continue; // rewritten while read: look at this slot again
                }
            }
            _ => {}
        }
        i = (i + 1) & mask;
    }
    None
}

/// The slot's header once no write is under way.
fn settled(slot: &[AtomicU64]) -> u64 {
    let mut spins = 0u32;
    loop {
        let h = slot[0].load(Acquire);
        if h & WRITING == 0 {
            return h;
        }
        spins += 1;
        if spins.is_multiple_of(1024) {
            std::thread::yield_now(); // the writer was preempted between two stores
        } else {
            std::hint::spin_loop();
        }
    }
}

/// A hash map of one-word keys and values, as slots of three words (header, key, value), with
/// its seed: copied out of the [`Table`] for a batch, so that the compiler keeps them in registers
/// (through `&Table`, whose atomics any store might change for all it knows, they were loaded
/// again for every key).
#[derive(Clone, Copy)]
struct WordSlots<'a> {
    slots: &'a [[AtomicU64; 3]],
    seed: u64,
}

impl WordSlots<'_> {
    /// The value of `key`, read with it in one seqlock pass.
    #[inline(always)]
    fn lookup(self, key: u64) -> Option<u64> {
        let read = |s: &&[AtomicU64; 3]| (s[1].load(Relaxed) == key).then(|| s[2].load(Relaxed));
        probe(self.slots.len(), hash_words(self.seed, &[key]), |i| self.slots.get(i), read).map(|(_, _, value)| value)
    }
}

/// Where a batch of one-word lookups ([`Table::lookup_words`]) reads its keys and writes what it
/// found; key `i` is read after entry `i - 1` was written (the plugin's ranges may overlap).
pub(crate) trait WordBatch {
    /// Key `i` as a word.
    fn key(&self, i: usize) -> u64;
    /// Entry `i`'s value, None when absent (the value bytes are then left as they are).
    fn put(&mut self, i: usize, value: Option<u64>);
}

impl Table {
    /// An empty table (arrays: every entry present and zero). The caller has checked the spec and
    /// counted [`MapSpec::bytes`] against its budget.
    pub fn new(spec: &MapSpec) -> Table {
        let layout = Layout::of(spec);
        let init = if spec.kind.is_array() { FULL } else { EMPTY };
        let words = (0..layout.slots * layout.stride())
            .map(|i| AtomicU64::new(if i % layout.stride() == 0 { init } else { 0 }))
            .collect();
        let seed = std::collections::hash_map::RandomState::new().build_hasher().finish() | 1;
        let len = if spec.kind.is_array() { spec.capacity } else { 0 };
        Table { spec: spec.clone(), layout, words, seed, len: AtomicU32::new(len), inserts: Mutex::new(()) }
    }

    /// What was declared.
    pub fn spec(&self) -> &MapSpec {
        &self.spec
    }

    /// Entries present.
    pub fn len(&self) -> u32 {
        self.len.load(Relaxed)
    }

    /// No entries?
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn slot(&self, i: usize) -> &[AtomicU64] {
        let s = self.layout.stride();
        &self.words[i * s..][..s]
    }

    fn hash(&self, key: &[u64]) -> usize {
        hash_words(self.seed, key)
    }

    /// The slot holding `key` and the header seen there, or None. Arrays: the index's slot.
    fn find(&self, key: &[u8]) -> Option<(usize, u64)> {
        if self.spec.kind.is_array() {
            let i = u32::from_le_bytes(key.try_into().ok()?) as usize;
            return (i < self.layout.slots).then(|| (i, settled(self.slot(i))));
        }
        if self.layout.key_words == 1 {
            // One word (keys up to 8 bytes: the examples' flow hashes and addresses): compared as
            // such, not through slices of any length (151 instructions per lookup of a 4-byte key
            // went to that generality).
            let key = word_of(key);
            let found = probe(
                self.layout.slots,
                self.hash(&[key]),
                |i| Some(self.slot(i)),
                |s| (s[1].load(Relaxed) == key).then_some(()),
            );
            return found.map(|(i, h, ())| (i, h));
        }
        let mut kw = [0u64; 8];
        let kw = &mut kw[..self.layout.key_words];
        words_of(key, kw);
        let same = |slot: &[AtomicU64]| slot[1..][..kw.len()].iter().zip(kw.iter()).all(|(a, b)| a.load(Relaxed) == *b);
        let found = probe(self.layout.slots, self.hash(kw), |i| Some(self.slot(i)), |s| same(s).then_some(()));
        found.map(|(i, h, ())| (i, h))
    }

    fn value<'a>(&self, slot: &'a [AtomicU64]) -> &'a [AtomicU64] {
        &slot[1 + self.layout.key_words..]
    }

    /// Copies the value of `key` into `out` (`value_size` bytes); false when absent.
    pub fn lookup(&self, key: &[u8], out: &mut [u8]) -> bool {
        if self.layout.key_words == 1 && self.layout.value_words == 1 {
            let Some(value) = self.lookup_word(word_of(key)) else { return false };
            put_word(value, out);
            return true;
        }
        loop {
            let Some((i, h)) = self.find(key) else { return false };
            let slot = self.slot(i);
            for (w, chunk) in self.value(slot).iter().zip(out.chunks_mut(8)) {
                put_word(w.load(Relaxed), chunk);
            }
            fence(Acquire);
            if slot[0].load(Relaxed) == h {
                return true;
            }
        }
    }

    /// Whether this is a hash map whose keys and values are one word each (up to 8 bytes: the
    /// examples' flow tables and buckets), which [`lookup_words`](Table::lookup_words) serves.
    pub fn one_word(&self) -> bool {
        self.layout.key_words == 1 && self.layout.value_words == 1
    }

    /// Looks the keys `0..n` of `io` up in turn, in a map where [`one_word`](Table::one_word)
    /// holds; returns the hits. One loop for the batch: the seed, mask and slots are loaded once
    /// (through `lookup` per key, a call with its size dispatch cost 84 instructions a key).
    #[inline]
    pub(crate) fn lookup_words(&self, n: usize, io: &mut impl WordBatch) -> usize {
        debug_assert!(self.one_word());
        let slots = self.word_slots();
        let mut hits = 0;
        for i in 0..n {
            let value = slots.lookup(io.key(i));
            hits += usize::from(value.is_some());
            io.put(i, value);
        }
        hits
    }

    /// [`lookup`](Table::lookup) in a hash map whose keys and values are one word each (up to 8
    /// bytes: the examples' flow tables and buckets). Slots are three words at a fixed stride, and
    /// the key and the value are read in one seqlock pass, where the general path finds the slot,
    /// then copies the value and checks again: 180 instructions per lookup measured, most of them
    /// strides, bounds and lengths computed at run time.
    #[inline(always)]
    fn lookup_word(&self, key: u64) -> Option<u64> {
        self.word_slots().lookup(key)
    }

    /// The slots of a hash map of one-word keys and values (three words each).
    #[inline(always)]
    fn word_slots(&self) -> WordSlots<'_> {
        WordSlots { slots: &self.words.as_chunks::<3>().0[..self.layout.slots], seed: self.seed }
    }

    /// Runs `write` on the slot's value words with the slot's write bit held.
    fn write_slot(&self, i: usize, h: u64, write: impl FnOnce(&[AtomicU64])) -> bool {
        let slot = self.slot(i);
        if slot[0].compare_exchange(h, h | WRITING, Acquire, Relaxed).is_err() {
            return false;
        }
        write(self.value(slot));
        slot[0].store((h & !(STATE | WRITING)) + SEQ_ONE + FULL, Release);
        true
    }

    fn store_value(value: &[u8], words: &[AtomicU64]) {
        let mut buf = [0u64; 128];
        let buf = &mut buf[..words.len()];
        words_of(value, buf);
        for (w, v) in words.iter().zip(buf.iter()) {
            w.store(*v, Relaxed);
        }
    }

    /// Sets `key` to `value`, inserting it if absent.
    pub fn update(&self, key: &[u8], value: &[u8]) -> Result<(), MapError> {
        loop {
            match self.find(key) {
                Some((i, h)) => {
                    if self.write_slot(i, h, |w| Self::store_value(value, w)) {
                        return Ok(());
                    }
                }
                None if self.spec.kind.is_array() => return Err(MapError::BadIndex),
                None => {
                    if self.insert(key, |w| Self::store_value(value, w))? {
                        return Ok(());
                    }
                }
            }
        }
    }

    /// Adds `delta` to value word `word` (wrapping) and returns the new word; an absent key is
    /// inserted as zero first.
    pub fn add(&self, key: &[u8], word: usize, delta: u64) -> Result<u64, MapError> {
        loop {
            match self.find(key) {
                Some((i, _)) => {
                    return Ok(self.value(self.slot(i))[word].fetch_add(delta, Relaxed).wrapping_add(delta))
                }
                None if self.spec.kind.is_array() => return Err(MapError::BadIndex),
                None => {
                    self.insert(key, |w| w.iter().for_each(|w| w.store(0, Relaxed)))?;
                }
            }
        }
    }

    /// Inserts `key` with its value set by `init`, under the table's mutex; false when another
    /// writer inserted it meanwhile (the caller then writes through the entry found).
    fn insert(&self, key: &[u8], init: impl FnOnce(&[AtomicU64])) -> Result<bool, MapError> {
        let _guard = self.inserts.lock().unwrap_or_else(|p| p.into_inner());
        if self.find(key).is_some() {
            return Ok(false);
        }
        if self.len() >= self.spec.capacity {
            return Err(MapError::Full);
        }
        let mut kw = [0u64; 8];
        let kw = &mut kw[..self.layout.key_words];
        words_of(key, kw);
        let mask = self.layout.slots - 1;
        let mut i = self.hash(kw) & mask;
        // Below capacity with twice the slots: a free slot is on the chain.
        loop {
            let slot = self.slot(i);
            let h = slot[0].load(Acquire);
            if h & STATE != FULL {
                slot[0].store(h | WRITING, Relaxed);
                fence(Release);
                for (w, k) in slot[1..].iter().zip(kw.iter()) {
                    w.store(*k, Relaxed);
                }
                init(self.value(slot));
                slot[0].store((h & !(STATE | WRITING)) + SEQ_ONE + FULL, Release);
                self.len.fetch_add(1, Relaxed);
                return Ok(true);
            }
            i = (i + 1) & mask;
        }
    }

    /// Removes `key` (arrays: zeroes the entry); false when absent.
    pub fn delete(&self, key: &[u8]) -> bool {
        if self.spec.kind.is_array() {
            return self.update(key, &[]).is_ok();
        }
        let _guard = self.inserts.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            let Some((i, h)) = self.find(key) else { return false };
            let slot = self.slot(i);
            if slot[0].compare_exchange(h, h | WRITING, Acquire, Relaxed).is_ok() {
                slot[0].store((h & !(STATE | WRITING)) + SEQ_ONE + DELETED, Release);
                self.len.fetch_sub(1, Relaxed);
                return true;
            }
        }
    }

    /// Slots of the table: the cursor range of [`Table::visit`].
    pub fn slots(&self) -> usize {
        self.layout.slots
    }

    /// Calls `f` with each entry's key and value bytes (a consistent copy of each entry, not of the
    /// whole table), from slot `from` on, until `f` returns false; returns the slot to go on from
    /// (None: the end). For paged dumps: nothing is held between two calls.
    pub fn visit(&self, from: usize, mut f: impl FnMut(&[u8], &[u8]) -> bool) -> Option<usize> {
        let (ks, vs) = (self.spec.key_size as usize, self.spec.value_size as usize);
        let (mut key, mut value) = ([0u8; 8 * 8], [0u8; 8 * 128]);
        for i in from..self.layout.slots {
            let slot = self.slot(i);
            loop {
                let h = settled(slot);
                if h & STATE != FULL {
                    break;
                }
                if self.spec.kind.is_array() {
                    key[..4].copy_from_slice(&(i as u32).to_le_bytes());
                } else {
                    for (w, chunk) in slot[1..=self.layout.key_words].iter().zip(key.chunks_mut(8)) {
                        chunk.copy_from_slice(&w.load(Relaxed).to_le_bytes());
                    }
                }
                for (w, chunk) in self.value(slot).iter().zip(value.chunks_mut(8)) {
                    chunk.copy_from_slice(&w.load(Relaxed).to_le_bytes());
                }
                fence(Acquire);
                if slot[0].load(Relaxed) == h {
                    if !f(&key[..ks], &value[..vs]) {
                        return Some(i + 1);
                    }
                    break;
                }
            }
        }
        None
    }

    /// Every entry, key and value bytes (tests).
    #[cfg(test)]
    pub fn entries(&self) -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut out = Vec::new();
        self.visit(0, |k, v| {
            out.push((k.to_vec(), v.to_vec()));
            true
        });
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugin::maps::MapKind;
    use std::sync::Arc;

    #[test]
    fn words_hold_every_length_of_bytes_little_endian() {
        let bytes: Vec<u8> = (1..=8).collect();
        for n in 0..=8 {
            let w = word_of(&bytes[..n]);
            let want = bytes[..n].iter().enumerate().fold(0u64, |w, (i, &b)| w | u64::from(b) << (8 * i));
            assert_eq!(w, want, "{n} bytes");
            let mut out = vec![0xEE; n];
            put_word(w, &mut out);
            assert_eq!(out, bytes[..n], "{n} bytes back");
        }
    }

    fn spec(kind: MapKind, key_size: u32, value_size: u32, capacity: u32) -> MapSpec {
        MapSpec { name: "t".into(), kind, key_size, value_size, capacity }
    }

    #[test]
    fn a_hash_map_inserts_replaces_deletes_and_fills_up() {
        let t = Table::new(&spec(MapKind::Hash, 5, 12, 3));
        let mut out = [0u8; 12];
        assert!(!t.lookup(b"aaaaa", &mut out));
        t.update(b"aaaaa", &[1; 12]).unwrap();
        t.update(b"bbbbb", &[2; 12]).unwrap();
        t.update(b"aaaaa", &[3; 12]).unwrap();
        assert!(t.lookup(b"aaaaa", &mut out) && out == [3; 12]);
        t.update(b"ccccc", &[4; 12]).unwrap();
        assert_eq!(t.update(b"ddddd", &[5; 12]), Err(MapError::Full));
        assert_eq!(t.len(), 3);
        assert!(t.delete(b"bbbbb") && !t.delete(b"bbbbb"));
        t.update(b"ddddd", &[5; 12]).unwrap();
        assert!(t.lookup(b"ddddd", &mut out) && out == [5; 12]);
        assert_eq!(t.add(b"eeeee", 0, 1), Err(MapError::Full));
        assert_eq!(t.add(b"ddddd", 1, 7), Ok(u64::from_le_bytes([5, 5, 5, 5, 0, 0, 0, 0]) + 7));
        let mut keys: Vec<Vec<u8>> = t.entries().into_iter().map(|(k, _)| k).collect();
        keys.sort();
        assert_eq!(keys, [b"aaaaa".to_vec(), b"ccccc".to_vec(), b"ddddd".to_vec()]);
    }

    #[test]
    fn keys_of_one_word_and_of_several_find_what_was_stored() {
        // 4-byte keys take the one-word probe, 20-byte keys the general one; a full small table makes
        // probe chains.
        for key_size in [4usize, 20] {
            let t = Table::new(&spec(MapKind::Hash, key_size as u32, 4, 8));
            let key = |i: u8| vec![i; key_size];
            for i in 0..8u8 {
                t.update(&key(i), &[i; 4]).unwrap();
            }
            let mut out = [0u8; 4];
            for i in 0..8u8 {
                assert!(t.lookup(&key(i), &mut out) && out == [i; 4], "key size {key_size}, key {i}");
            }
            assert!(!t.lookup(&key(99), &mut out), "key size {key_size}: absent key");
            assert!(t.delete(&key(3)) && !t.lookup(&key(3), &mut out));
            assert!(t.lookup(&key(7), &mut out) && out == [7; 4], "key size {key_size}: after a delete");
        }
    }

    #[test]
    fn deleted_slots_are_reused_forever() {
        // Churn far beyond the slot count: tombstones must not fill the table.
        let t = Table::new(&spec(MapKind::Hash, 8, 8, 4));
        for i in 0u64..10_000 {
            t.update(&i.to_le_bytes(), &i.to_le_bytes()).unwrap();
            assert!(t.delete(&i.to_le_bytes()));
        }
        assert!(t.is_empty());
        t.update(&1u64.to_le_bytes(), &[1; 8]).unwrap();
    }

    #[test]
    fn an_array_has_every_index_below_its_capacity() {
        let t = Table::new(&spec(MapKind::Array, 4, 3, 10));
        let mut out = [9u8; 3];
        assert!(t.lookup(&9u32.to_le_bytes(), &mut out) && out == [0; 3]);
        assert!(!t.lookup(&10u32.to_le_bytes(), &mut out));
        assert_eq!(t.update(&10u32.to_le_bytes(), &[1; 3]), Err(MapError::BadIndex));
        t.update(&2u32.to_le_bytes(), &[1, 2, 3]).unwrap();
        assert_eq!(t.add(&2u32.to_le_bytes(), 0, 1), Ok(0x030202));
        assert!(t.delete(&2u32.to_le_bytes()));
        assert!(t.lookup(&2u32.to_le_bytes(), &mut out) && out == [0; 3]);
        assert_eq!((t.len(), t.entries().len()), (10, 10));
    }

    #[test]
    fn one_word_lookups_never_pair_a_key_with_another_keys_value() {
        // Four keys churn through a table of 8 slots (inserted, deleted, reinserted), so slots
        // change keys while the reader probes them; each value names its key.
        let t = Arc::new(Table::new(&spec(MapKind::Hash, 4, 8, 4)));
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let value = |k: u32, round: u32| (u64::from(k) << 32 | u64::from(round)).to_le_bytes();
        let reader = {
            let (t, stop) = (t.clone(), stop.clone());
            std::thread::spawn(move || {
                let (mut out, mut seen) = ([0u8; 8], 0u64);
                while !stop.load(Relaxed) {
                    for k in 0..4u32 {
                        if t.lookup(&k.to_le_bytes(), &mut out) {
                            assert_eq!(u64::from_le_bytes(out) >> 32, u64::from(k), "key {k}");
                            seen += 1;
                        }
                    }
                }
                seen
            })
        };
        for round in 0..20_000u32 {
            let k = round % 4;
            t.update(&k.to_le_bytes(), &value(k, round)).unwrap();
            if round % 3 == 0 {
                t.delete(&((k + 1) % 4).to_le_bytes());
            }
        }
        stop.store(true, Relaxed);
        assert!(reader.join().unwrap() > 0);
        let mut out = [0u8; 8];
        assert!(t.lookup(&3u32.to_le_bytes(), &mut out) && out == value(3, 19_999));
    }

    #[test]
    fn concurrent_adds_lose_nothing_and_readers_never_see_a_torn_value() {
        let t = Arc::new(Table::new(&spec(MapKind::Hash, 4, 16, 1024)));
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let reader = {
            let (t, stop) = (t.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut out = [0u8; 16];
                let mut seen = 0u64;
                while !stop.load(Relaxed) {
                    if t.lookup(b"pair", &mut out) {
                        assert_eq!(out[..8], out[8..], "a value written whole is read whole");
                        seen += 1;
                    }
                }
                seen
            })
        };
        let writers: Vec<_> = (0..2u64)
            .map(|w| {
                let t = t.clone();
                std::thread::spawn(move || {
                    for i in 0..20_000u64 {
                        t.add(b"hits", 0, 1).unwrap();
                        let v = (w << 32 | i).to_le_bytes();
                        t.update(b"pair", &[v, v].concat()).unwrap();
                        t.update(&((w * 20_000 + i) as u32 % 1000).to_le_bytes(), &[0; 16]).unwrap();
                    }
                })
            })
            .collect();
        writers.into_iter().for_each(|w| w.join().unwrap());
        stop.store(true, Relaxed);
        assert!(reader.join().unwrap() > 0);
        let mut out = [0u8; 16];
        assert!(t.lookup(b"hits", &mut out));
        assert_eq!(u64::from_le_bytes(out[..8].try_into().unwrap()), 40_000);
        assert_eq!(t.len(), 1002, "each key once: 1000 numbered, hits, pair");
    }
}
