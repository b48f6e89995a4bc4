//! Keys and values as little-endian words, and the path of hash maps whose keys and values are
//! one word each (up to 8 bytes: flow hashes, addresses, counters), batches included.

use super::*;

/// Little-endian words of `bytes`, zero-padded.
pub(super) fn words_of(bytes: &[u8], out: &mut [u64]) {
    for (w, chunk) in out.iter_mut().zip(bytes.chunks(8)) {
        *w = word_of(chunk);
    }
}

/// Up to 8 bytes as a little-endian word, zero-padded, without a loop or a memcpy call (a
/// `copy_from_slice` of a length not known at compile time is one): a whole word is one load; 4-7
/// bytes two overlapping 4-byte loads (the bytes both hold land on the same bits), 2-3 bytes two
/// 2-byte loads likewise, 1 byte a byte.
#[inline(always)]
pub(crate) fn word_of(chunk: &[u8]) -> u64 {
    let n = chunk.len();
    if let Ok(b) = <[u8; 8]>::try_from(chunk) {
        return u64::from_le_bytes(b);
    }
    let u32_at = |at: usize| u64::from(u32::from_le_bytes(chunk[at..at + 4].try_into().expect("four bytes")));
    let u16_at = |at: usize| u64::from(u16::from_le_bytes(chunk[at..at + 2].try_into().expect("two bytes")));
    match n {
        4..=7 => u32_at(0) | u32_at(n - 4) << (8 * (n - 4)),
        2..=3 => u16_at(0) | u16_at(n - 2) << (8 * (n - 2)),
        1 => u64::from(chunk[0]),
        _ => 0,
    }
}

/// The `KW` little-endian words of the key `bytes`.
#[inline(always)]
pub(crate) fn key_words_of<const KW: usize>(bytes: &[u8]) -> [u64; KW] {
    let n = bytes.len();
    if KW == 2 && (9..=16).contains(&n) {
        // Two loads, the second ending at the key's end and shifted down past the bytes the first
        // had: no dispatch on the length (a 13-byte 5-tuple's case).
        let at = |i: usize| u64::from_le_bytes(bytes[i..i + 8].try_into().expect("eight bytes"));
        let mut out = [0; KW];
        (out[0], out[1]) = (at(0), at(n - 8) >> (8 * (16 - n)));
        return out;
    }
    std::array::from_fn(|j| bytes.get(8 * j..).map_or(0, |rest| word_of(&rest[..rest.len().min(8)])))
}

/// The first `out.len()` (at most 8) bytes of `w`, little-endian, into `out`; as [`word_of`]
/// without a memcpy call or a dispatch on the length: 4-8 bytes two overlapping 4-byte stores
/// (the bytes both write get the same bits), 2-3 bytes two 2-byte stores likewise, 1 byte a byte.
#[inline(always)]
pub(crate) fn put_word(w: u64, out: &mut [u8]) {
    let n = out.len().min(8);
    if n >= 4 {
        let u32_to =
            |out: &mut [u8], at: usize| out[at..at + 4].copy_from_slice(&((w >> (8 * at)) as u32).to_le_bytes());
        u32_to(out, 0);
        u32_to(out, n - 4);
    } else if n >= 2 {
        let u16_to =
            |out: &mut [u8], at: usize| out[at..at + 2].copy_from_slice(&((w >> (8 * at)) as u16).to_le_bytes());
        u16_to(out, 0);
        u16_to(out, n - 2);
    } else if n == 1 {
        out[0] = w as u8;
    }
}

/// A hash map of one-word keys and values, as slots of three words (header, key, value), with
/// its hasher: copied out of the [`Table`] for a batch, so that the compiler keeps them in
/// registers (through `&Table`, whose atomics any store might change for all it knows, they were
/// loaded again for every key).
#[derive(Clone)]
pub(super) struct WordSlots<'a> {
    slots: &'a [[AtomicU64; 3]],
    hasher: SeedableRandomState,
    moves: &'a Moves,
}

impl WordSlots<'_> {
    /// The value of `key`, read with it in one seqlock pass; None: absent (checked against the
    /// deletions: [`Table::miss`], with `moves` the count read before this probe, or before a
    /// run of probes: a miss holds if no deletion began since). `left`: the probe's steps
    /// ([`probe`]); Err also when they were spent.
    #[inline(always)]
    fn lookup(&self, key: u64, moves: u64, left: &mut usize) -> Result<Option<u64>, ()> {
        let read = |s: &&[AtomicU64; 3]| (s[1].load(Relaxed) == key).then(|| s[2].load(Relaxed));
        // SAFETY: `probe` reads slots below the count it is given, the slice's length.
        let slot_of = |i| Some(unsafe { self.slots.get_unchecked(i) });
        match probe(self.slots.len(), hash_words(&self.hasher, &[key]), left, slot_of, read) {
            Some((_, _, value)) => Ok(Some(value)),
            None if *left > 0 && self.moves.miss_holds(moves) => Ok(None),
            None => Err(()),
        }
    }
}

/// Where a batch ([`Table::lookup_words`], [`Table::lookup_fixed`], [`Table::update_fixed`]) reads
/// its keys (and values) and writes what it found; key `i` is read after entry `i - 1` was written
/// (the plugin's ranges may overlap).
///
/// The entry methods are `unsafe` so that a batch in the plugin's memory, checked once for all its
/// entries, reads and writes them without a check per key (two compares and branches a key, with
/// the dispatch on a key's length, of a lookup's few dozen instructions).
///
/// # Safety
///
/// Callers of `key`, `value` and `put` pass `i < self.len()`; of `key`, also `KW` the words of the
/// batch's keys (a key of `ks` bytes: `8 * (KW - 1) < ks <= 8 * KW`), as the table's shape gives.
pub(crate) trait WordBatch {
    /// Entries in the batch.
    fn len(&self) -> usize;
    /// Key `i` as `KW` little-endian words (zero-padded).
    ///
    /// # Safety
    ///
    /// `i < self.len()`, and `KW` words hold the batch's keys.
    unsafe fn key<const KW: usize>(&self, i: usize) -> [u64; KW];
    /// Value `i` of an update batch as a word.
    ///
    /// # Safety
    ///
    /// `i < self.len()`.
    unsafe fn value(&self, i: usize) -> u64;
    /// Entry `i`'s value, None when absent (the value bytes are then left as they are).
    ///
    /// # Safety
    ///
    /// `i < self.len()`.
    unsafe fn put(&mut self, i: usize, value: Option<u64>);
}

impl Table {
    /// Whether this is a hash map whose keys and values are one word each (up to 8 bytes: the
    /// examples' flow tables and buckets), which [`lookup_words`](Table::lookup_words) serves.
    pub fn one_word(&self) -> bool {
        self.layout.key_words == 1 && self.layout.value_words == 1 && !self.stamped()
    }

    /// Looks the keys of `io` up in turn, in a map where [`one_word`](Table::one_word)
    /// holds; returns the hits. One loop for the batch: the hasher and slots are loaded
    /// once (through `lookup` per key, a call with its size dispatch for each).
    /// Inlined into a function of its own for each kind of batch (the batch then in registers, not
    /// passed through memory), with the race's retry out of line: the loop gets the registers to
    /// itself (in a larger caller's frame it kept the hasher, slots and counters on the stack).
    #[inline(always)]
    pub(crate) fn lookup_words(&self, io: &mut impl WordBatch) -> usize {
        debug_assert!(self.one_word());
        let slots = self.word_slots();
        // The hits counted as the misses, the rarer case a flow table's lookups meet.
        let (mut misses, mut i, n) = (0, 0, io.len());
        while i < n {
            // A run of keys with no call in it (so its values stay in registers), up to a lookup
            // that raced a deletion, which the outer loop finishes. The deletion count is read
            // once for the run: read before each of its probes, so it vouches for their misses;
            // the probes' steps are a budget of the run's (spent: as a race).
            let (moves, mut left) = (slots.moves.read(), slots.slots.len());
            while i < n {
                // SAFETY: i < n = io.len(); one word is this table's key shape (`one_word`).
                let [key] = unsafe { io.key::<1>(i) };
                let Ok(value) = slots.lookup(key, moves, &mut left) else { break };
                misses += usize::from(value.is_none());
                // SAFETY: i < n.
                unsafe { io.put(i, value) };
                i += 1;
            }
            if i < n {
                // SAFETY: as above.
                let [key] = unsafe { io.key::<1>(i) };
                let value = self.lookup_word_raced(key);
                misses += usize::from(value.is_none());
                // SAFETY: i < n.
                unsafe { io.put(i, value) };
                i += 1;
            }
        }
        n - misses
    }

    /// [`lookup`](Table::lookup) in a hash map whose keys and values are one word each. Slots are
    /// three words at a fixed stride, and the key and the value are read in one seqlock pass, where
    /// the general path finds the slot, then copies the value and checks again. A probe that raced
    /// a deletion is finished out of line (so the slots need not be kept in memory for it).
    #[inline(always)]
    pub(in crate::plugin::maps) fn lookup_word(&self, key: u64) -> Option<u64> {
        let slots = self.word_slots();
        match slots.lookup(key, self.moves.read(), &mut slots.slots.len()) {
            Ok(value) => value,
            Err(()) => self.lookup_word_raced(key),
        }
    }

    /// [`lookup_word`](Table::lookup_word) after a lookup raced a deletion (rare: out of line):
    /// probes until a miss holds, [`miss_checked`](Table::miss_checked).
    #[cold]
    #[inline(never)]
    pub(super) fn lookup_word_raced(&self, key: u64) -> Option<u64> {
        let slots = self.word_slots();
        self.miss_checked(|| slots.lookup(key, self.moves.read(), &mut slots.slots.len()).ok().flatten())
    }

    /// The slots of a hash map of one-word keys and values (three words each).
    #[inline(always)]
    pub(super) fn word_slots(&self) -> WordSlots<'_> {
        let slots = &self.words.as_chunks::<3>().0[..self.layout.slots];
        // As in `Table::fixed`: the probe's test of it not made for every key.
        assert!(!slots.is_empty(), "a hash map without slots");
        WordSlots { slots, hasher: self.hasher.clone(), moves: &self.moves }
    }
}
