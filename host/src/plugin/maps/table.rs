//! One map table: open addressing with linear probing over a flat array of atomic words, so every
//! access is a plain atomic load or store (no `unsafe`), and readers never wait for a lock.
//!
//! A slot is a header word followed by the key words (hash maps only) and the value words; the
//! protocol that keeps readers, rewriters and the table's lock apart is [`super::slot`]'s. Lookups
//! never lock; rewriting an existing entry and atomic adds claim the entry's slot; inserting a new
//! key or deleting one also holds the table's lock (once per new or ended flow, not per packet), for
//! a bounded time: one probe chain, which the deletion keeps short by shifting entries back.
//!
//! Keys come from packets, so an attacker chooses them: the hash is foldhash (its quality variant:
//! the fast one spread keys that differ only in a few low bits, as sequential addresses do, over
//! 15% fewer slots than random keys), keyed per table at random (every key bit reaches the slot
//! index), and the table has at least twice as many slots as entries, so probe chains stay short.

mod fixed;

use super::slot::{claim, claim_settled, is_full, release, settled, unchanged, Moves, EMPTY, FULL};
use super::sync::{AtomicU32, AtomicU64, Mutex};
use super::MapSpec;
use foldhash::quality::SeedableRandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::Ordering::Relaxed;

/// Why a write was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MapError {
    /// The hash map holds `capacity` entries already.
    Full,
    /// An array index past the capacity.
    BadIndex,
    /// An `lpm_trie` key whose prefix length is past its address bits.
    BadPrefix,
}

/// Words per slot, slots, and the bytes they take. After the value, an LRU map's slots hold the
/// use clock of their entry's last use, and a map with expiry the millisecond of its last use.
#[derive(Debug, Clone, Copy)]
pub(super) struct Layout {
    key_words: usize,
    value_words: usize,
    slots: usize,
    lru: bool,
    ttl: bool,
    /// Words per slot (kept, not recomputed at each slot's address).
    stride: usize,
}

impl Layout {
    pub(super) fn of(spec: &MapSpec) -> Layout {
        let value_words = (spec.value_size as usize).div_ceil(8);
        let (key_words, slots, lru, ttl) = if spec.kind.is_array() {
            (0, spec.capacity as usize, false, false)
        } else {
            let slots = (spec.capacity as usize * 2).next_power_of_two();
            ((spec.key_size as usize).div_ceil(8), slots, spec.kind == super::MapKind::LruHash, spec.ttl_ms > 0)
        };
        let stride = 1 + key_words + value_words + usize::from(lru) + usize::from(ttl);
        Layout { key_words, value_words, slots, lru, ttl, stride }
    }

    fn stride(&self) -> usize {
        self.stride
    }

    /// Where the value ends: the use clock's word (LRU), then the last use's (expiry).
    fn stamps(&self) -> usize {
        1 + self.key_words + self.value_words
    }

    pub(super) fn bytes(&self) -> u64 {
        (self.slots * self.stride() * 8) as u64
    }
}

/// A lookup that saw deletions run this many times in a row takes the table's lock (which holds
/// them off) to finish: a plugin deleting keys in a loop on another queue cannot keep a reader
/// probing forever.
const MISS_RETRIES: u32 = 8;

/// Entries an insert into a full LRU map (or a full map with expiry) looks at for the one to evict:
/// the least recently used of those (an expired one at once). Bounds the insert's time; BPF's
/// LRU maps are approximate likewise.
const EVICTION_SAMPLE: usize = 64;

/// Slots each insert into a map with expiry looks at for expired entries to free, from where the
/// last one stopped: the table is swept as it is used, without a list kept by the plugin.
const REAP_STEP: usize = 4;

/// Where a [`Table::next_key`] walk stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Walk {
    /// A key was copied; go on from this cursor.
    Key(u64),
    /// No entry among the slots read; go on from this cursor.
    Window(u64),
    /// The walk is over.
    End,
}

/// Where the held lock's bounded scans go on from.
#[derive(Debug, Default)]
struct Cursors {
    /// The eviction sample's start.
    hand: usize,
    /// The expiry sweep's next slot.
    reap: usize,
}

/// One table.
pub struct Table {
    spec: MapSpec,
    layout: Layout,
    words: Box<[AtomicU64]>,
    hasher: SeedableRandomState,
    len: AtomicU32,
    moves: Moves,
    /// Held by inserts and deletions.
    lock: Mutex<Cursors>,
    /// LRU: the use clock, advanced by each insert; a use stamps an entry with it.
    clock: AtomicU64,
    /// Entries evicted to make room (LRU), and expired entries freed.
    evicted: AtomicU64,
    expired: AtomicU64,
    /// `lpm_trie`: the prefix lengths present (None: every other kind).
    prefixes: Option<Box<super::lpm::Prefixes>>,
    /// Added to the time (tests of expiry).
    #[cfg(test)]
    skew_ms: std::sync::atomic::AtomicU64,
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

/// Up to 8 bytes as a little-endian word, zero-padded, without a loop or a memcpy call (a
/// `copy_from_slice` of a length not known at compile time is one): a whole word is one load; 4-7
/// bytes two overlapping 4-byte loads (the bytes both hold land on the same bits); 1-3 bytes the
/// first, middle and last byte (which cover them, overlapping likewise).
#[inline(always)]
pub(crate) fn word_of(chunk: &[u8]) -> u64 {
    let n = chunk.len();
    if let Ok(b) = <[u8; 8]>::try_from(chunk) {
        return u64::from_le_bytes(b);
    }
    let u32_at = |at: usize| u64::from(u32::from_le_bytes(chunk[at..at + 4].try_into().expect("four bytes")));
    match n {
        4..=7 => u32_at(0) | u32_at(n - 4) << (8 * (n - 4)),
        1..=3 => {
            u64::from(chunk[0]) | u64::from(chunk[n / 2]) << (8 * (n / 2)) | u64::from(chunk[n - 1]) << (8 * (n - 1))
        }
        _ => 0,
    }
}

/// The first `out.len()` (at most 8) bytes of `w`, little-endian, into `out`; as [`word_of`] the
/// common lengths without a memcpy call.
#[inline(always)]
pub(crate) fn put_word(w: u64, out: &mut [u8]) {
    match out.len() {
        8 => out.copy_from_slice(&w.to_le_bytes()),
        4 => out.copy_from_slice(&(w as u32).to_le_bytes()),
        2 => out.copy_from_slice(&(w as u16).to_le_bytes()),
        1 => out[0] = w as u8,
        _ => out.iter_mut().enumerate().for_each(|(i, b)| *b = (w >> (8 * i)) as u8),
    }
}

/// The keyed hash of a key's words.
#[inline(always)]
fn hash_words(hasher: &SeedableRandomState, key: &[u64]) -> usize {
    let mut h = hasher.build_hasher();
    for &w in key {
        h.write_u64(w);
    }
    h.finish() as usize
}

/// Linear probing from `home` over `slots` slots (a power of two; slot `i` is `slot_of(i)`) for
/// the full slot that `read` says holds our key, returning what `read` read there: its index, its
/// header and that, all seen in one seqlock pass. A slot rewritten while read is read again (not
/// counted as a step of the probe). None: an empty slot (or the whole table) came first, which
/// holds only when no deletion moved entries meanwhile ([`Moves::miss_holds`]).
#[inline(always)]
fn probe<S: AsRef<[AtomicU64]>, T>(
    slots: usize,
    home: usize,
    slot_of: impl Fn(usize) -> Option<S>,
    read: impl Fn(&S) -> Option<T>,
) -> Option<(usize, u64, T)> {
    let mask = slots - 1;
    let mut i = home & mask;
    for _ in 0..slots {
        let slot = slot_of(i)?;
        loop {
            let h = settled(&slot.as_ref()[0]);
            if !is_full(h) {
                return None;
            }
            match read(&slot) {
                // Another key (a key changes only under a deletion's or an insert's claim, which
                // the miss check or the insert's own order covers).
                None => break,
                Some(got) if unchanged(&slot.as_ref()[0], h) => return Some((i, h, got)),
                Some(_) => {} // rewritten while read: this slot again
            }
        }
        i = (i + 1) & mask;
    }
    None
}

/// A hash map of one-word keys and values, as slots of three words (header, key, value), with
/// its hasher: copied out of the [`Table`] for a batch, so that the compiler keeps them in
/// registers (through `&Table`, whose atomics any store might change for all it knows, they were
/// loaded again for every key).
#[derive(Clone)]
struct WordSlots<'a> {
    slots: &'a [[AtomicU64; 3]],
    hasher: SeedableRandomState,
    moves: &'a Moves,
}

impl WordSlots<'_> {
    /// The value of `key`, read with it in one seqlock pass; None: absent (checked against the
    /// deletions: [`Table::miss`]).
    #[inline(always)]
    fn lookup(&self, key: u64) -> Result<Option<u64>, ()> {
        let read = |s: &&[AtomicU64; 3]| (s[1].load(Relaxed) == key).then(|| s[2].load(Relaxed));
        let moves = self.moves.read();
        match probe(self.slots.len(), hash_words(&self.hasher, &[key]), |i| self.slots.get(i), read) {
            Some((_, _, value)) => Ok(Some(value)),
            None if self.moves.miss_holds(moves) => Ok(None),
            None => Err(()),
        }
    }
}

/// Where a batch ([`Table::lookup_words`], [`Table::lookup_fixed`], [`Table::update_fixed`]) reads
/// its keys (and values) and writes what it found; key `i` is read after entry `i - 1` was written
/// (the plugin's ranges may overlap).
pub(crate) trait WordBatch {
    /// Entries in the batch.
    fn len(&self) -> usize;
    /// Key `i` as `KW` little-endian words (zero-padded).
    fn key<const KW: usize>(&self, i: usize) -> [u64; KW];
    /// Value `i` of an update batch as a word.
    fn value(&self, i: usize) -> u64;
    /// Entry `i`'s value, None when absent (the value bytes are then left as they are).
    fn put(&mut self, i: usize, value: Option<u64>);
}

impl Table {
    /// An empty table (arrays: every entry present and zero), keyed at random. The caller has
    /// checked the spec and counted [`MapSpec::bytes`] against its budget.
    pub fn new(spec: &MapSpec) -> Table {
        #[cfg(not(feature = "loom"))]
        let hasher = SeedableRandomState::random();
        // A model check runs the same execution many times: the same key each time.
        #[cfg(feature = "loom")]
        let hasher = SeedableRandomState::with_seed(1, foldhash::SharedSeed::global_fixed());
        Table::keyed(spec, hasher)
    }

    /// A table keyed with a fixed key, so that a measurement repeats to the instruction (tests).
    #[cfg(test)]
    pub(crate) fn fixed_key(spec: &MapSpec) -> Table {
        Table::keyed(spec, SeedableRandomState::with_seed(1, foldhash::SharedSeed::global_fixed()))
    }

    fn keyed(spec: &MapSpec, hasher: SeedableRandomState) -> Table {
        let layout = Layout::of(spec);
        let init = if spec.kind.is_array() { FULL } else { EMPTY };
        let words = (0..layout.slots * layout.stride())
            .map(|i| AtomicU64::new(if i % layout.stride() == 0 { init } else { 0 }))
            .collect();
        let len = if spec.kind.is_array() { spec.capacity } else { 0 };
        Table {
            spec: spec.clone(),
            layout,
            words,
            hasher,
            len: AtomicU32::new(len),
            moves: Moves::new(),
            lock: Mutex::new(Cursors::default()),
            clock: AtomicU64::new(0),
            evicted: AtomicU64::new(0),
            expired: AtomicU64::new(0),
            prefixes: (spec.kind == super::MapKind::LpmTrie).then(|| Box::new(super::lpm::Prefixes::new())),
            #[cfg(test)]
            skew_ms: Default::default(),
        }
    }

    /// Entries evicted to make room (LRU maps) and expired entries freed, so far.
    pub fn evictions(&self) -> (u64, u64) {
        (self.evicted.load(Relaxed), self.expired.load(Relaxed))
    }

    /// Moves the table's clock `ms` on (tests of expiry).
    #[cfg(test)]
    pub(crate) fn skew(&self, ms: u64) {
        self.skew_ms.fetch_add(ms, Relaxed);
    }

    /// Milliseconds, for expiry (the poll loop's coarse clock).
    #[inline(always)]
    fn now_ms(&self) -> u64 {
        let ms = crate::plugin::counters::coarse_now_ns() / 1_000_000;
        #[cfg(test)]
        let ms = ms + self.skew_ms.load(Relaxed);
        ms
    }

    /// Whether the entry in `slot` has not expired at `now` (always, without expiry).
    #[inline(always)]
    fn live(&self, slot: &[AtomicU64], now: u64) -> bool {
        !self.layout.ttl
            || now.saturating_sub(slot[self.layout.stamps() + usize::from(self.layout.lru)].load(Relaxed))
                <= self.spec.ttl_ms
    }

    /// Marks the entry in `slot` used now (LRU: the use clock; expiry: the time). From a lookup this
    /// is a hint written without the slot's claim: a race with a move stamps a neighbour, which
    /// then lives a little longer, nothing more.
    #[inline(always)]
    fn touch(&self, slot: &[AtomicU64], now: u64) {
        let mut w = self.layout.stamps();
        if self.layout.lru {
            let c = self.clock.load(Relaxed);
            if slot[w].load(Relaxed) != c {
                slot[w].store(c, Relaxed);
            }
            w += 1;
        }
        if self.layout.ttl && slot[w].load(Relaxed) != now {
            slot[w].store(now, Relaxed);
        }
    }

    /// Whether entries carry stamps (LRU or expiry).
    fn stamped(&self) -> bool {
        self.layout.lru || self.layout.ttl
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

    #[inline(always)]
    fn slot(&self, i: usize) -> &[AtomicU64] {
        let s = self.layout.stride();
        &self.words[i * s..][..s]
    }

    fn mask(&self) -> usize {
        self.layout.slots - 1
    }

    /// The slot where a probe for `key` (its words) starts.
    pub(super) fn home(&self, key: &[u64]) -> usize {
        hash_words(&self.hasher, key) & self.mask()
    }

    /// The key words of a full slot.
    fn key_words<'a>(&self, slot: &'a [AtomicU64]) -> &'a [AtomicU64] {
        &slot[1..][..self.layout.key_words]
    }

    fn value<'a>(&self, slot: &'a [AtomicU64]) -> &'a [AtomicU64] {
        &slot[1 + self.layout.key_words..self.layout.stamps()]
    }

    /// Runs `once` until its answer holds: a key found, or a miss no deletion overlapped. After
    /// [`MISS_RETRIES`] overlapped misses, runs it holding the table's lock (no deletion then).
    #[inline(always)]
    fn miss_checked<T>(&self, once: impl Fn() -> Option<T>) -> Option<T> {
        for _ in 0..MISS_RETRIES {
            let moves = self.moves.read();
            match once() {
                Some(found) => return Some(found),
                None if self.moves.miss_holds(moves) => return None,
                None => {}
            }
        }
        self.miss(once)
    }

    /// [`miss_checked`](Table::miss_checked)'s last resort.
    #[cold]
    #[inline(never)]
    fn miss<T>(&self, once: impl Fn() -> Option<T>) -> Option<T> {
        let _held = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        once()
    }

    /// The slot holding `key` and the header seen there, or None. Arrays: the index's slot.
    #[inline(always)]
    fn find(&self, key: &[u8]) -> Option<(usize, u64)> {
        if self.spec.kind.is_array() {
            let i = u32::from_le_bytes(key.try_into().ok()?) as usize;
            return (i < self.layout.slots).then(|| (i, settled(&self.slot(i)[0])));
        }
        let found = self.miss_checked(|| self.find_once(key));
        // An expired entry is its key's absence.
        found.filter(|&(i, _)| !self.layout.ttl || self.live(self.slot(i), self.now_ms()))
    }

    /// One probe for `key` (a miss unchecked against deletions).
    #[inline(always)]
    fn find_once(&self, key: &[u8]) -> Option<(usize, u64)> {
        if self.layout.key_words == 1 {
            // One word (keys up to 8 bytes: the examples' flow hashes and addresses): compared as
            // such, not through slices of any length.
            let key = word_of(key);
            let found = probe(
                self.layout.slots,
                self.home(&[key]),
                |i| Some(self.slot(i)),
                |s| (s[1].load(Relaxed) == key).then_some(()),
            );
            return found.map(|(i, h, ())| (i, h));
        }
        if self.layout.key_words == 2 {
            // Two words (9-16 bytes: an IPv4 5-tuple, an IPv6 address), compared as such.
            let (a, b) = (word_of(&key[..8]), word_of(&key[8..]));
            let found = probe(
                self.layout.slots,
                self.home(&[a, b]),
                |i| Some(self.slot(i)),
                |s| (s[1].load(Relaxed) == a && s[2].load(Relaxed) == b).then_some(()),
            );
            return found.map(|(i, h, ())| (i, h));
        }
        let mut kw = [0u64; 8];
        let kw = &mut kw[..self.layout.key_words];
        words_of(key, kw);
        let same = |slot: &[AtomicU64]| self.key_words(slot).iter().zip(kw.iter()).all(|(a, b)| a.load(Relaxed) == *b);
        let found = probe(self.layout.slots, self.home(kw), |i| Some(self.slot(i)), |s| same(s).then_some(()));
        found.map(|(i, h, ())| (i, h))
    }

    /// Copies the value of `key` into `out` (`value_size` bytes); false when absent. `lpm_trie`:
    /// the value of the longest prefix holding the key's address.
    pub fn lookup(&self, key: &[u8], out: &mut [u8]) -> bool {
        if let Some(p) = &self.prefixes {
            return p.lookup(self, key, out);
        }
        self.lookup_exact(key, out)
    }

    /// Whether `key` itself is present (`lpm_trie`: the exact prefix; a hint, racing writers).
    pub(super) fn contains_exact(&self, key: &[u8]) -> bool {
        self.find(key).is_some()
    }

    /// [`lookup`](Table::lookup) of `key` itself.
    #[inline(always)]
    pub(super) fn lookup_exact(&self, key: &[u8], out: &mut [u8]) -> bool {
        if self.one_word() {
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
            if unchanged(&slot[0], h) {
                if self.stamped() {
                    self.touch(slot, self.now_ms());
                }
                return true;
            }
        }
    }

    /// Whether this is a hash map whose keys and values are one word each (up to 8 bytes: the
    /// examples' flow tables and buckets), which [`lookup_words`](Table::lookup_words) serves.
    pub fn one_word(&self) -> bool {
        self.layout.key_words == 1 && self.layout.value_words == 1 && !self.stamped()
    }

    /// Looks the keys of `io` up in turn, in a map where [`one_word`](Table::one_word)
    /// holds; returns the hits. One loop for the batch: the hasher, mask and slots are loaded
    /// once (through `lookup` per key, a call with its size dispatch for each).
    /// Not inlined, with the race's retry out of line: the loop gets the registers to itself (in
    /// its caller's frame it kept the hasher, slots and counters on the stack).
    #[inline(never)]
    pub(crate) fn lookup_words(&self, io: &mut impl WordBatch) -> usize {
        debug_assert!(self.one_word());
        let slots = self.word_slots();
        let (mut hits, mut i, n) = (0, 0, io.len());
        while i < n {
            // A run of keys with no call in it (so its values stay in registers), up to a lookup
            // that raced a deletion, which the outer loop finishes.
            while i < n {
                let [key] = io.key::<1>(i);
                let Ok(value) = slots.lookup(key) else { break };
                hits += usize::from(value.is_some());
                io.put(i, value);
                i += 1;
            }
            if i < n {
                let [key] = io.key::<1>(i);
                let value = self.lookup_word_raced(key);
                hits += usize::from(value.is_some());
                io.put(i, value);
                i += 1;
            }
        }
        hits
    }

    /// [`lookup`](Table::lookup) in a hash map whose keys and values are one word each. Slots are
    /// three words at a fixed stride, and the key and the value are read in one seqlock pass, where
    /// the general path finds the slot, then copies the value and checks again.
    #[inline(always)]
    pub(super) fn lookup_word(&self, key: u64) -> Option<u64> {
        let slots = self.word_slots();
        match slots.lookup(key) {
            Ok(value) => value,
            Err(()) => self.miss_checked(|| slots.lookup(key).ok().flatten()),
        }
    }

    /// [`lookup_word`](Table::lookup_word) after a lookup raced a deletion (rare: out of line).
    #[cold]
    #[inline(never)]
    fn lookup_word_raced(&self, key: u64) -> Option<u64> {
        self.lookup_word(key)
    }

    /// The slots of a hash map of one-word keys and values (three words each).
    #[inline(always)]
    fn word_slots(&self) -> WordSlots<'_> {
        WordSlots {
            slots: &self.words.as_chunks::<3>().0[..self.layout.slots],
            hasher: self.hasher.clone(),
            moves: &self.moves,
        }
    }

    /// Runs `write` on the value words of slot `i`, whose header was `h`, with the slot claimed;
    /// None when it changed since (look again).
    #[inline(always)]
    fn write_slot<R>(&self, i: usize, h: u64, write: impl FnOnce(&[AtomicU64]) -> R) -> Option<R> {
        let slot = self.slot(i);
        if !claim(&slot[0], h) {
            return None;
        }
        let r = write(self.value(slot));
        if self.stamped() {
            self.touch(slot, self.now_ms());
        }
        release(&slot[0], h, FULL);
        Some(r)
    }

    fn store_value(value: &[u8], words: &[AtomicU64]) {
        // Word by word: a buffer of the largest value's words was zeroed per call (a memset of
        // 1 KiB per update).
        // (An array's delete stores an empty value: zeros.)
        let mut chunks = value.chunks(8);
        for w in words {
            w.store(chunks.next().map_or(0, word_of), Relaxed);
        }
    }

    /// Sets `key` to `value`, inserting it if absent (`lpm_trie`: the prefix, bits of the address
    /// past its length ignored).
    pub fn update(&self, key: &[u8], value: &[u8]) -> Result<(), MapError> {
        if let Some(p) = &self.prefixes {
            let exact = super::lpm::Prefixes::exact(key)?;
            let key = &exact[..key.len()];
            return p.insert(self, key, || self.update_exact(key, value));
        }
        self.update_exact(key, value)
    }

    #[inline(always)]
    fn update_exact(&self, key: &[u8], value: &[u8]) -> Result<(), MapError> {
        loop {
            match self.find(key) {
                Some((i, h)) => {
                    if self.write_slot(i, h, |w| Self::store_value(value, w)).is_some() {
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
    /// inserted as zero first. The add claims the entry's slot: if the key was deleted (and its
    /// slot reused) since it was found, the claim fails and the key is looked up again, so a delta
    /// never lands on another key.
    pub fn add(&self, key: &[u8], word: usize, delta: u64) -> Result<u64, MapError> {
        if let Some(p) = &self.prefixes {
            let exact = super::lpm::Prefixes::exact(key)?;
            let key = &exact[..key.len()];
            return p.insert(self, key, || self.add_exact(key, word, delta));
        }
        self.add_exact(key, word, delta)
    }

    fn add_exact(&self, key: &[u8], word: usize, delta: u64) -> Result<u64, MapError> {
        let add = |w: &[AtomicU64]| {
            let v = w[word].load(Relaxed).wrapping_add(delta);
            w[word].store(v, Relaxed);
            v
        };
        loop {
            match self.find(key) {
                Some((i, h)) => {
                    if let Some(v) = self.write_slot(i, h, add) {
                        return Ok(v);
                    }
                }
                None if self.spec.kind.is_array() => return Err(MapError::BadIndex),
                None => {
                    self.insert(key, |w| w.iter().for_each(|w| w.store(0, Relaxed)))?;
                }
            }
        }
    }

    /// Inserts `key` with its value set by `init`, under the table's lock; false when another
    /// writer inserted it meanwhile (the caller then writes through the entry found).
    fn insert(&self, key: &[u8], init: impl FnOnce(&[AtomicU64])) -> Result<bool, MapError> {
        let mut cursors = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        let now = if self.layout.ttl { self.now_ms() } else { 0 };
        if self.layout.lru {
            // This insert's use clock: entries used since are younger than every older insert.
            self.clock.store(self.clock.load(Relaxed) + 1, Relaxed);
        }
        // No deletion runs while the lock is held: a miss here is exact.
        if let Some((i, _)) = self.find_once(key) {
            let slot = self.slot(i);
            if self.live(slot, now) {
                return Ok(false);
            }
            // Expired: the key is absent; its slot takes the new entry.
            let h = claim_settled(&slot[0]);
            init(self.value(slot));
            self.touch(slot, now);
            release(&slot[0], h, FULL);
            self.expired.fetch_add(1, Relaxed);
            return Ok(true);
        }
        if self.layout.ttl {
            self.reap(&mut cursors, now);
        }
        if self.len() >= self.spec.capacity && !self.make_room(&mut cursors, now) {
            return Err(MapError::Full);
        }
        let mut kw = [0u64; 8];
        let kw = &mut kw[..self.layout.key_words];
        words_of(key, kw);
        let mut i = self.home(kw);
        // Below capacity with twice the slots: an empty slot is on the chain.
        loop {
            let slot = self.slot(i);
            let h = settled(&slot[0]);
            // Only inserts and deletions write empty slots, and they hold the lock.
            if !is_full(h) && claim(&slot[0], h) {
                for (w, k) in self.key_words(slot).iter().zip(kw.iter()) {
                    w.store(*k, Relaxed);
                }
                init(self.value(slot));
                if self.stamped() {
                    self.touch(slot, now);
                }
                release(&slot[0], h, FULL);
                self.len.fetch_add(1, Relaxed);
                return Ok(true);
            }
            i = (i + 1) & self.mask();
        }
    }

    /// Removes `key` (arrays: zeroes the entry); false when absent. The entries after it on its
    /// probe chain that may move back into the slots freed move (backward-shift deletion), so no
    /// slot stays deleted and chains never grow with churn.
    pub fn delete(&self, key: &[u8]) -> bool {
        if let Some(p) = &self.prefixes {
            let Ok(exact) = super::lpm::Prefixes::exact(key) else { return false };
            let key = &exact[..key.len()];
            return p.delete(key, || self.delete_exact(key));
        }
        self.delete_exact(key)
    }

    fn delete_exact(&self, key: &[u8]) -> bool {
        if self.spec.kind.is_array() {
            return self.update(key, &[]).is_ok();
        }
        let _held = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        let Some((i, _)) = self.find_once(key) else { return false };
        let live = !self.layout.ttl || self.live(self.slot(i), self.now_ms());
        self.delete_at(i);
        if !live {
            self.expired.fetch_add(1, Relaxed);
        }
        live
    }

    /// Frees an expired entry or evicts the least recently used of [`EVICTION_SAMPLE`] entries from
    /// the cursor on (LRU maps); false when nothing may go (a full map without LRU, nothing expired
    /// among the sample). The lock is held. The map is full, so at least a quarter of its slots hold
    /// entries (it has at most twice the power of two above twice its capacity): the scan reads about
    /// four slots an entry, and never more than the table.
    fn make_room(&self, cursors: &mut Cursors, now: u64) -> bool {
        if !self.stamped() {
            return false;
        }
        let mask = self.mask();
        let mut oldest: Option<(u64, usize)> = None;
        let (mut seen, mut k) = (0, 0);
        while seen < EVICTION_SAMPLE && k < self.layout.slots {
            let i = (cursors.hand + k) & mask;
            k += 1;
            let slot = self.slot(i);
            if !is_full(settled(&slot[0])) {
                continue;
            }
            seen += 1;
            if !self.live(slot, now) {
                cursors.hand = (i + 1) & mask;
                self.delete_at(i);
                self.expired.fetch_add(1, Relaxed);
                return true;
            }
            if self.layout.lru {
                let used = slot[self.layout.stamps()].load(Relaxed);
                if oldest.is_none_or(|(u, _)| used < u) {
                    oldest = Some((used, i));
                }
            }
        }
        cursors.hand = (cursors.hand + k) & mask;
        let Some((_, i)) = oldest else { return false };
        self.delete_at(i);
        self.evicted.fetch_add(1, Relaxed);
        true
    }

    /// Frees the expired entries among the next [`REAP_STEP`] slots of the sweep. The lock is held.
    fn reap(&self, cursors: &mut Cursors, now: u64) {
        let mask = self.mask();
        for _ in 0..REAP_STEP {
            let i = cursors.reap;
            let slot = self.slot(i);
            if is_full(settled(&slot[0])) && !self.live(slot, now) {
                // An entry after it may have moved into slot `i`: looked at by the next step.
                self.delete_at(i);
                self.expired.fetch_add(1, Relaxed);
            } else {
                cursors.reap = (i + 1) & mask;
            }
        }
    }

    /// Removes the entry in slot `i`, shifting back the entries after it that may move. The lock
    /// is held.
    fn delete_at(&self, i: usize) {
        let done = self.moves.begin();
        let mask = self.mask();
        let (mut hole, mut hole_h) = (i, claim_settled(&self.slot(i)[0]));
        let mut j = (i + 1) & mask;
        loop {
            let slot = self.slot(j);
            let h = settled(&slot[0]);
            if !is_full(h) {
                break;
            }
            // Its key cannot change: keys are written under the lock.
            let mut kw = [0u64; 8];
            let kw = &mut kw[..self.layout.key_words];
            kw.iter_mut().zip(self.key_words(slot)).for_each(|(k, w)| *k = w.load(Relaxed));
            let home = self.home(kw);
            // The entry may fill the hole when the hole is on its chain: from its home to it.
            if j.wrapping_sub(home) & mask >= j.wrapping_sub(hole) & mask {
                let h = claim_settled(&slot[0]);
                let to = self.slot(hole);
                to[1..].iter().zip(&slot[1..]).for_each(|(t, f)| t.store(f.load(Relaxed), Relaxed));
                release(&to[0], hole_h, FULL);
                (hole, hole_h) = (j, h);
            }
            j = (j + 1) & mask;
        }
        release(&self.slot(hole)[0], hole_h, EMPTY);
        self.len.fetch_sub(1, Relaxed);
        self.moves.end(done);
    }

    /// Slots of the table: the cursor range of [`Table::visit`].
    pub fn slots(&self) -> usize {
        self.layout.slots
    }

    /// Calls `f` with each entry's key and value bytes (a consistent copy of each entry, not of the
    /// whole table: an entry a deletion moves meanwhile may be shown twice or not at all), from slot
    /// `from` on, until `f` returns false; returns the slot to go on from (None: the end). For paged
    /// dumps: nothing is held between two calls.
    pub fn visit(&self, from: usize, mut f: impl FnMut(&[u8], &[u8]) -> bool) -> Option<usize> {
        let (ks, vs) = (self.spec.key_size as usize, self.spec.value_size as usize);
        let (mut key, mut value) = ([0u8; 8 * 8], [0u8; 8 * 128]);
        let now = if self.layout.ttl { self.now_ms() } else { 0 };
        for i in from..self.layout.slots {
            if self.read_entry(i, now, &mut key, Some(&mut value)) && !f(&key[..ks], &value[..vs]) {
                return Some(i + 1);
            }
        }
        None
    }

    /// The next key of a walk from `cursor` (0: the start) into `key` (`key_size` bytes), reading at
    /// most [`map::NEXT_KEY_SLOTS`] slots. The walk starts at an empty slot (found by the first
    /// call) and goes down from it, wrapping, to it: a deletion moves entries back along their
    /// probe chain, which never crosses an empty slot, so deleting the key just returned never
    /// hides an entry not yet returned. An entry inserted during the walk, or moved by a deletion
    /// during the walk across the starting slot once an insert filled it, may be returned twice or
    /// not at all. The cursor holds the starting slot (high 32 bits) and one past the walk's
    /// position (low 32); one the host did not give ends the walk.
    ///
    /// [`map::NEXT_KEY_SLOTS`]: wasmdp_abi::map::NEXT_KEY_SLOTS
    pub fn next_key(&self, cursor: u64, key: &mut [u8]) -> Walk {
        let slots = self.layout.slots;
        let window = wasmdp_abi::map::NEXT_KEY_SLOTS as usize;
        let (start, mut pos, mut budget) = if cursor == 0 {
            // The highest empty slot among a window's worth from the top; none (arrays, or a long
            // run at the top): slot 0, so the walk goes from the top down.
            let empty = (0..window.min(slots)).map(|d| slots - 1 - d).find(|&i| !is_full(settled(&self.slot(i)[0])));
            let start = empty.unwrap_or(0);
            (start, 0, window - (slots - 1 - empty.unwrap_or(slots - 1)).min(window - 1))
        } else {
            let (start, pos) = ((cursor >> 32) as usize, (cursor & 0xFFFF_FFFF) as usize);
            if start >= slots || pos == 0 || pos > slots {
                return Walk::End;
            }
            (start, pos - 1, window)
        };
        let mut words = [0u8; 8 * 8];
        let now = if self.layout.ttl { self.now_ms() } else { 0 };
        let at = |pos: usize| (start + slots - 1 - pos) % slots;
        while pos < slots && budget > 0 {
            budget -= 1;
            pos += 1;
            if self.read_entry(at(pos - 1), now, &mut words, None) {
                key.copy_from_slice(&words[..key.len()]);
                return Walk::Key((start as u64) << 32 | (pos as u64 + 1));
            }
        }
        if pos == slots {
            Walk::End
        } else {
            Walk::Window((start as u64) << 32 | (pos as u64 + 1))
        }
    }

    /// Copies slot `i`'s entry's key (and value) bytes, if it holds a live one, consistently.
    fn read_entry(&self, i: usize, now: u64, key: &mut [u8; 64], mut value: Option<&mut [u8; 1024]>) -> bool {
        let slot = self.slot(i);
        loop {
            let h = settled(&slot[0]);
            if !is_full(h) || !self.live(slot, now) {
                return false;
            }
            if self.spec.kind.is_array() {
                key[..4].copy_from_slice(&(i as u32).to_le_bytes());
            } else {
                for (w, chunk) in self.key_words(slot).iter().zip(key.chunks_mut(8)) {
                    chunk.copy_from_slice(&w.load(Relaxed).to_le_bytes());
                }
            }
            if let Some(value) = value.as_deref_mut() {
                for (w, chunk) in self.value(slot).iter().zip(value.chunks_mut(8)) {
                    chunk.copy_from_slice(&w.load(Relaxed).to_le_bytes());
                }
            }
            if unchanged(&slot[0], h) {
                return true;
            }
        }
    }

    /// Every entry, key and value bytes (tests, and pin files at stop).
    pub fn entries(&self) -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut out = Vec::new();
        self.visit(0, |k, v| {
            out.push((k.to_vec(), v.to_vec()));
            true
        });
        out
    }

    /// The slots a lookup of `key` reads (tests: chain lengths).
    #[cfg(test)]
    pub(super) fn probe_length(&self, key: &[u8]) -> usize {
        let mut kw = [0u64; 8];
        let kw = &mut kw[..self.layout.key_words];
        words_of(key, kw);
        let mut i = self.home(kw);
        let mut n = 1;
        while is_full(settled(&self.slot(i)[0]))
            && self.key_words(self.slot(i)).iter().zip(kw.iter()).any(|(a, b)| a.load(Relaxed) != *b)
        {
            i = (i + 1) & self.mask();
            n += 1;
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugin::maps::MapKind;
    use std::sync::Arc;

    #[test]
    fn a_word_of_each_length_is_its_bytes_little_endian() {
        let bytes: Vec<u8> = (1..=8).map(|i| 0x10 * i + i).collect();
        for n in 0..=8 {
            let want = bytes[..n].iter().rev().fold(0u64, |w, &b| w << 8 | u64::from(b));
            assert_eq!(word_of(&bytes[..n]), want, "{n} bytes");
        }
    }

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
        MapSpec { name: "t".into(), kind, key_size, value_size, capacity, ttl_ms: 0 }
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

    /// The mean and the longest probe of `n` keys (`key(i)`) absent from `t`.
    fn misses(t: &Table, n: u64, key: impl Fn(u64) -> Vec<u8>) -> (f64, usize) {
        let lengths: Vec<usize> = (0..n).map(|i| t.probe_length(&key(i))).collect();
        (lengths.iter().sum::<usize>() as f64 / n as f64, *lengths.iter().max().unwrap())
    }

    #[test]
    fn a_million_inserts_and_deletes_leave_misses_as_cheap_as_on_a_fresh_map() {
        // 1000 of 1024 entries live, then a million cycles of one key deleted and a new one
        // inserted: with tombstones, every miss ended up walking the whole table (2048 slots).
        let t = Table::new(&spec(MapKind::Hash, 8, 8, 1024));
        let key = |i: u64| i.wrapping_mul(0x9E37_79B9_7F4A_7C15).to_le_bytes().to_vec();
        for i in 0..1000 {
            t.update(&key(i), &[1; 8]).unwrap();
        }
        let absent = |i: u64| key(u64::MAX - i);
        let (fresh, _) = misses(&t, 10_000, absent);
        for i in 0..1_000_000u64 {
            assert!(t.delete(&key(i)), "cycle {i}");
            t.update(&key(i + 1000), &[2; 8]).unwrap();
        }
        assert_eq!(t.len(), 1000);
        let (churned, longest) = misses(&t, 10_000, absent);
        println!("a miss reads {fresh:.2} slots fresh, {churned:.2} after a million cycles (longest {longest})");
        assert!(churned <= 2.0 * fresh, "a miss reads {churned:.2} slots after churn, {fresh:.2} fresh");
        assert!(longest < 100, "longest miss {longest} slots");
        let mut out = [0u8; 8];
        assert!((1_000_000..1_001_000).all(|i| t.lookup(&key(i), &mut out) && out == [2; 8]), "every live key found");
    }

    #[test]
    fn keys_differing_only_in_their_last_words_high_bits_spread_like_random_keys() {
        // IPv6 interface ids: 16-byte keys whose last word differs only in its top byte. The
        // multiply-shift hash before foldhash never let those bits reach the slot index: all 256
        // shared one chain.
        let t = Table::new(&spec(MapKind::Hash, 16, 4, 1024));
        let key = |i: u64| [0x2001_0db8_0000_0000u64.to_le_bytes(), (i << 56 | 1).to_le_bytes()].concat();
        for i in 0..256 {
            t.update(&key(i), &[0; 4]).unwrap();
        }
        let longest = (0..256).map(|i| t.probe_length(&key(i))).max().unwrap();
        assert!(longest <= 12, "a chain of {longest} slots among 256 keys in 2048 slots");
        let (mean, _) = misses(&t, 256, |i| key(i + 256));
        assert!(mean < 1.5, "misses read {mean:.2} slots");
    }

    #[test]
    fn sequential_keys_take_as_many_slots_as_random_ones() {
        // 1024 keys of two words, one constant and one counting up (a source address and port
        // range): random keys take 2048 x (1 - e^-0.5) = 806 of 2048 home slots. foldhash's fast
        // variant gave 683 on average (644 at worst of 300 keys); its quality variant 806.
        for _ in 0..20 {
            let t = Table::new(&spec(MapKind::Hash, 13, 8, 1024));
            let homes: std::collections::HashSet<usize> =
                (0..1024u64).map(|i| t.home(&[i | 0x0707_0707 << 32, 0x07_0707_0707])).collect();
            assert!(homes.len() > 750, "{} distinct home slots of 1024 sequential keys", homes.len());
        }
    }

    #[test]
    fn a_deletion_moves_the_entries_after_it_where_lookups_find_them() {
        // A full small table (8 entries, 16 slots) has chains; delete each key in turn, in several
        // orders, and check every remaining key after each deletion.
        for order in [[0u32, 1, 2, 3, 4, 5, 6, 7], [7, 6, 5, 4, 3, 2, 1, 0], [3, 0, 6, 1, 7, 2, 5, 4]] {
            let t = Table::new(&spec(MapKind::Hash, 4, 4, 8));
            for k in 0..8u32 {
                t.update(&k.to_le_bytes(), &(k + 100).to_le_bytes()).unwrap();
            }
            for (n, &gone) in order.iter().enumerate() {
                assert!(t.delete(&gone.to_le_bytes()));
                let mut out = [0u8; 4];
                for &k in &order[n + 1..] {
                    assert!(t.lookup(&k.to_le_bytes(), &mut out), "key {k} after deleting {:?}", &order[..=n]);
                    assert_eq!(u32::from_le_bytes(out), k + 100);
                }
                assert!(!t.lookup(&gone.to_le_bytes(), &mut out));
            }
            assert!(t.is_empty() && t.entries().is_empty());
        }
    }

    #[test]
    fn an_add_racing_a_delete_and_a_reinsert_never_lands_on_another_key() {
        // One thread adds 1 to key A over and over; another deletes A and inserts B (value 0), often
        // into A's slot. A delta that landed on B would show as B != 0.
        let t = Arc::new(Table::new(&spec(MapKind::Hash, 4, 8, 2)));
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let adder = {
            let (t, stop) = (t.clone(), stop.clone());
            std::thread::spawn(move || {
                while !stop.load(Relaxed) {
                    let _ = t.add(b"AAAA", 0, 1);
                }
            })
        };
        let mut out = [0u8; 8];
        for _ in 0..20_000 {
            t.delete(b"AAAA");
            t.update(b"BBBB", &[0; 8]).unwrap();
            assert!(t.lookup(b"BBBB", &mut out) && out == [0; 8], "a delta for A landed on B");
            t.delete(b"BBBB");
        }
        stop.store(true, Relaxed);
        adder.join().unwrap();
    }

    #[test]
    fn a_flood_of_new_keys_into_an_lru_map_evicts_the_flood_not_the_key_in_use() {
        // A 1024-entry flow map, one established flow looked up as its packets come, and 3000
        // spoofed sources: a plain hash map fills and refuses the rest (the flow survives, but no
        // new flow can start); an LRU map takes every new key and evicts spoofed ones.
        let t = Table::new(&MapSpec { ttl_ms: 0, ..spec(MapKind::LruHash, 13, 8, 1024) });
        let key = |i: u32| [i.to_le_bytes().as_slice(), &[7; 9]].concat();
        let flow = key(u32::MAX);
        t.update(&flow, &[1; 8]).unwrap();
        let mut out = [0u8; 8];
        for i in 0..3000 {
            t.update(&key(i), &[2; 8]).unwrap();
            if i % 16 == 0 {
                assert!(t.lookup(&flow, &mut out), "the flow evicted after {i} spoofed keys");
            }
        }
        assert!(t.lookup(&flow, &mut out) && out == [1; 8]);
        assert_eq!(t.len(), 1024);
        assert_eq!(t.evictions(), (3001 - 1024, 0));
        assert!(t.lookup(&key(2999), &mut out), "the newest key is in");
        let (mean, longest) = misses(&t, 10_000, |i| key(10_000 + i as u32));
        println!("after the flood a miss reads {mean:.2} slots (longest {longest})");
        assert!(mean < 6.0, "evictions clustered the entries: a miss reads {mean:.2} slots");
    }

    #[test]
    fn a_small_lru_map_evicts_its_least_recently_used_entry() {
        // 4 entries in 8 slots: the eviction sample is the whole table. Recency is counted in
        // inserts (the use clock): entries used since the same insert are equally recent.
        let t = Table::new(&spec(MapKind::LruHash, 4, 4, 4));
        for k in [b"aaaa", b"bbbb", b"cccc", b"dddd"] {
            t.update(k, &[0; 4]).unwrap();
        }
        let mut out = [0u8; 4];
        let has = |k: &[u8; 4]| t.entries().iter().any(|(e, _)| e == k);
        t.update(b"eeee", &[0; 4]).unwrap();
        assert!(!has(b"aaaa") && has(b"bbbb"), "a, the oldest, went");
        assert!(t.lookup(b"bbbb", &mut out), "b used");
        t.update(b"ffff", &[0; 4]).unwrap();
        assert!(!has(b"cccc") && has(b"bbbb"), "then c, not b (used since)");
        t.add(b"bbbb", 0, 1).unwrap();
        t.update(b"gggg", &[0; 4]).unwrap();
        assert!(!has(b"dddd") && has(b"bbbb"), "then d");
        assert_eq!((t.len(), t.evictions()), (4, (3, 0)));
    }

    #[test]
    fn expired_entries_are_invisible_then_freed_by_inserts_without_a_list() {
        let t = Table::new(&MapSpec { ttl_ms: 1000, ..spec(MapKind::Hash, 8, 8, 64) });
        let mut out = [0u8; 8];
        for i in 0u64..64 {
            t.update(&i.to_le_bytes(), &i.to_le_bytes()).unwrap();
        }
        assert_eq!(t.update(&64u64.to_le_bytes(), &[0; 8]), Err(MapError::Full), "full, nothing expired");
        t.skew_ms.store(900, Relaxed);
        assert!(t.lookup(&5u64.to_le_bytes(), &mut out), "a use renews key 5");
        t.skew_ms.store(1500, Relaxed);
        assert!(t.lookup(&5u64.to_le_bytes(), &mut out) && out == 5u64.to_le_bytes(), "used 600 ms ago");
        assert!(!t.lookup(&6u64.to_le_bytes(), &mut out), "unused for 1500 ms: expired");
        assert!(t.entries().iter().all(|(k, _)| k == &5u64.to_le_bytes()), "dumps show only the live");
        assert_eq!(t.add(&6u64.to_le_bytes(), 0, 3), Ok(3), "an expired key counts again from zero");
        // A full map of expired entries takes new keys: each insert frees what it meets.
        for i in 100u64..160 {
            t.update(&i.to_le_bytes(), &[1; 8]).unwrap();
        }
        let (evicted, expired) = t.evictions();
        assert_eq!(evicted, 0);
        assert!(expired >= 60, "{expired} expired entries freed");
        assert!(t.len() <= 64);
        assert!(!t.delete(&7u64.to_le_bytes()) || t.len() <= 64, "an expired key deletes as absent");
    }

    #[test]
    fn expiry_is_refused_on_arrays_and_beyond_a_year() {
        let array = MapSpec { ttl_ms: 5, ..spec(MapKind::Array, 4, 4, 4) };
        assert!(array.check().unwrap_err().contains("expiry is for hash kinds"));
        let long = MapSpec { ttl_ms: wasmdp_abi::map::MAX_TTL_MS + 1, ..spec(MapKind::Hash, 4, 4, 4) };
        assert!(long.check().unwrap_err().contains("ttl_ms"));
    }

    /// Every key of a walk of `t` that deletes what it is given when `delete`, and the calls made.
    fn walk(t: &Table, delete: bool) -> (Vec<Vec<u8>>, usize) {
        let (mut cursor, mut keys, mut calls) = (0, Vec::new(), 0);
        let mut key = vec![0u8; t.spec().key_size as usize];
        loop {
            calls += 1;
            match t.next_key(cursor, &mut key) {
                Walk::Key(next) => {
                    keys.push(key.clone());
                    if delete {
                        assert!(t.delete(&key));
                    }
                    cursor = next;
                }
                Walk::Window(next) => cursor = next,
                Walk::End => return (keys, calls),
            }
        }
    }

    #[test]
    fn a_walk_returns_every_key_once_even_deleting_each_as_it_goes() {
        // 700 keys after churn (chains and wrapped chains), walked twice: reading, then deleting
        // each key as it is returned (an ageing pass), which must not hide any other key.
        let t = Table::new(&spec(MapKind::Hash, 8, 8, 1024));
        for i in 0..5000u64 {
            t.update(&i.to_le_bytes(), &[0; 8]).unwrap();
            if i >= 700 {
                assert!(t.delete(&(i - 700).to_le_bytes()));
            }
        }
        let want: std::collections::BTreeSet<Vec<u8>> = (4300..5000u64).map(|i| i.to_le_bytes().to_vec()).collect();
        let (keys, _) = walk(&t, false);
        assert_eq!(keys.len(), 700);
        assert_eq!(keys.iter().cloned().collect::<std::collections::BTreeSet<_>>(), want);
        let (keys, _) = walk(&t, true);
        assert_eq!(keys.iter().cloned().collect::<std::collections::BTreeSet<_>>(), want, "deleting while walking");
        assert!(t.is_empty());
    }

    #[test]
    fn each_walk_call_reads_a_bounded_window_of_a_sparse_table() {
        // One entry in 2^21 slots: a call never reads more than NEXT_KEY_SLOTS slots, so the walk
        // takes slots / NEXT_KEY_SLOTS calls, each bounded, and finds the one key.
        let t = Table::new(&spec(MapKind::Hash, 4, 4, 1 << 20));
        t.update(&[9, 9, 9, 9], &[1; 4]).unwrap();
        let (keys, calls) = walk(&t, false);
        assert_eq!(keys, [vec![9, 9, 9, 9]]);
        assert!(calls <= t.slots() / wasmdp_abi::map::NEXT_KEY_SLOTS as usize + 2, "{calls} calls");
        // An array walks its indexes.
        let a = Table::new(&spec(MapKind::Array, 4, 4, 3));
        assert_eq!(walk(&a, false).0, [2u32, 1, 0].map(|i| i.to_le_bytes().to_vec()));
    }

    #[test]
    fn a_cursor_the_host_did_not_give_ends_the_walk_without_reading_out_of_the_table() {
        // The cursor lives in the plugin's memory: any value may come back. A start slot past the
        // table, a position past it or zero end the walk; nothing is read out of bounds.
        let t = Table::new(&spec(MapKind::Hash, 4, 4, 8));
        t.update(&[1, 2, 3, 4], &[0; 4]).unwrap();
        let mut key = [0u8; 4];
        let slots = t.slots() as u64;
        for cursor in [slots << 32 | 1, 1 << 32, (slots - 1) << 32 | (slots + 1), u64::MAX, 0xFFFF_FFFF] {
            assert_eq!(t.next_key(cursor, &mut key), Walk::End, "{cursor:#x}");
        }
        // A forged cursor within the table is only a walk from elsewhere: bounded, then over.
        let mut cursor = 3 << 32 | 2;
        for _ in 0..=t.slots() {
            match t.next_key(cursor, &mut key) {
                Walk::Key(next) | Walk::Window(next) => cursor = next,
                Walk::End => return,
            }
        }
        panic!("a walk from a forged cursor did not end");
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
