//! Batches on maps of a fixed shape: keys of one or two words (up to 16 bytes: addresses, flow
//! hashes, an IPv4 5-tuple), values of one word, with or without the LRU and expiry stamps. The
//! slots are seen as arrays of a stride known at compile time and the key and value are read in
//! one seqlock pass, where the general path finds the slot through slices of any length, then
//! copies the value and checks again; the hasher, slots and clock are loaded once per batch.

use super::{claim, hash_words, probe, release, Moves, Table, WordBatch, FULL};
use crate::plugin::maps::sync::AtomicU64;
use foldhash::quality::SeedableRandomState;
use std::sync::atomic::Ordering::Relaxed;

/// The slots [`Table::lookup_home`] reads in line, from the home slot on: at most a third of the
/// slots being full, nearly every present key is within them.
pub(super) const HOME_STEPS: usize = 4;

/// A map's slots as `[AtomicU64; S]`: the header, `KW` key words, the value word, the stamps.
#[derive(Clone, Copy)]
struct Slots<'a, const KW: usize, const S: usize> {
    slots: &'a [[AtomicU64; S]],
    hasher: &'a SeedableRandomState,
    moves: &'a Moves,
}

impl<const KW: usize, const S: usize> Slots<'_, KW, S> {
    /// The slot, header and value of `key`, read in one pass; None: absent (checked against the
    /// deletions counted `moves` before the probe, or before a run of probes); Err: a deletion
    /// overlapped the miss, or the probe's steps `left` ([`probe`]) were spent.
    #[inline(always)]
    fn find(self, key: [u64; KW], moves: u64, left: &mut usize) -> Result<Option<(usize, u64, u64)>, ()> {
        let read =
            |s: &&[AtomicU64; S]| (0..KW).all(|j| s[1 + j].load(Relaxed) == key[j]).then(|| s[1 + KW].load(Relaxed));
        // SAFETY: `probe` reads slots below the count it is given, the slice's length.
        let slot_of = |i| Some(unsafe { self.slots.get_unchecked(i) });
        match probe(self.slots.len(), hash_words(self.hasher, &key), left, slot_of, read) {
            Some(found) => Ok(Some(found)),
            None if *left > 0 && self.moves.miss_holds(moves) => Ok(None),
            None => Err(()),
        }
    }
}

/// `$t.$method::<KW, S, LRU, TTL>(args)` (or `$f::<KW, S, LRU, TTL, extra...>(args)`, or the
/// function `$f::<KW, S, LRU, TTL, extra...>` itself) for the fixed shape of table `$t`
/// ([`Table::fixed_shape`]: key words, stamps; `S` the words a slot), None when it has none: each
/// shape monomorphised, its stride and stamps known at compile time. The one table of the shapes.
macro_rules! on_fixed {
    ($t:expr, $method:ident($($arg:expr),*)) => {
        on_fixed!(@shapes $t, |KW, S, LRU, TTL| $t.$method::<KW, S, LRU, TTL>($($arg),*))
    };
    ($t:expr, ptr $f:ident) => {
        on_fixed!(@shapes $t, |KW, S, LRU, TTL| $f::<KW, S, LRU, TTL> as _)
    };
    ($t:expr, ptr $f:ident::<$($c:tt),*>) => {
        on_fixed!(@shapes $t, |KW, S, LRU, TTL| $f::<KW, S, LRU, TTL, $($c),*> as _)
    };
    ($t:expr, fn $f:ident::<$($c:tt),*>($($arg:expr),*)) => {
        on_fixed!(@shapes $t, |KW, S, LRU, TTL| $f::<KW, S, LRU, TTL, $($c),*>($($arg),*))
    };
    (@shapes $t:expr, |$kw:ident, $s:ident, $lru:ident, $ttl:ident| $run:expr) => {
        match $t.fixed_shape() {
            Some((1, false, false)) => Some(on_fixed!(@one 1, 3, false, false, |$kw, $s, $lru, $ttl| $run)),
            Some((1, true, false)) => Some(on_fixed!(@one 1, 4, true, false, |$kw, $s, $lru, $ttl| $run)),
            Some((1, false, true)) => Some(on_fixed!(@one 1, 4, false, true, |$kw, $s, $lru, $ttl| $run)),
            Some((1, true, true)) => Some(on_fixed!(@one 1, 5, true, true, |$kw, $s, $lru, $ttl| $run)),
            Some((2, false, false)) => Some(on_fixed!(@one 2, 4, false, false, |$kw, $s, $lru, $ttl| $run)),
            Some((2, true, false)) => Some(on_fixed!(@one 2, 5, true, false, |$kw, $s, $lru, $ttl| $run)),
            Some((2, false, true)) => Some(on_fixed!(@one 2, 5, false, true, |$kw, $s, $lru, $ttl| $run)),
            Some((2, true, true)) => Some(on_fixed!(@one 2, 6, true, true, |$kw, $s, $lru, $ttl| $run)),
            _ => None,
        }
    };
    (@one $a:literal, $b:literal, $c:literal, $d:literal, |$kw:ident, $s:ident, $lru:ident, $ttl:ident| $run:expr) => {{
        const $kw: usize = $a;
        const $s: usize = $b;
        const $lru: bool = $c;
        const $ttl: bool = $d;
        $run
    }};
}
pub(crate) use on_fixed;

/// A fixed shape: key words, and whether slots carry the LRU and the expiry stamps (then after
/// the value, in that order).
pub(crate) type Shape = (usize, bool, bool);

impl Table {
    /// The fixed shape of this map if its batches can take this path (hash kinds with keys of up to
    /// 16 bytes and values of up to 8); None: the general path.
    pub(crate) fn fixed_shape(&self) -> Option<Shape> {
        let l = &self.layout;
        let hashed = self.prefixes.is_none() && !self.spec.kind.is_array();
        (hashed && l.value_words == 1 && (1..=2).contains(&l.key_words)).then_some((l.key_words, l.lru, l.ttl))
    }

    /// The slots as `[AtomicU64; S]`, with `hasher`: a copy of the table's the batch made, which the
    /// compiler may keep in registers (through `&self`, whose atomics any store might change for
    /// all it knows, it loaded the hasher again for every key).
    #[inline(always)]
    fn fixed<'a, const KW: usize, const S: usize>(&'a self, hasher: &'a SeedableRandomState) -> Slots<'a, KW, S> {
        debug_assert_eq!(self.layout.stride, S);
        let slots = &self.words.as_chunks::<S>().0[..self.layout.slots];
        // Hash maps have slots (three an entry, and at least one entry): said here, before the
        // batch's loop, so that the probe's test of it is not made for every key.
        assert!(!slots.is_empty(), "a hash map without slots");
        Slots { slots, hasher, moves: &self.moves }
    }

    /// Whether [`lookup_home`](Table::lookup_home) may take this table's slots as arrays of its
    /// shape's stride: a hash map of a fixed shape with as many slots of that stride as its layout
    /// says (so that a slot index below `layout.slots` is inside `words`). Checked once, when a
    /// path is chosen for the table.
    pub(super) fn has_home_slots(&self) -> bool {
        self.fixed_shape().is_some()
            && self.layout.slots > 0
            && self.words.len() == self.layout.slots * self.layout.stride
    }

    /// The value of `key` if it sits, fresh and settled, in its home slot (the slot its hash
    /// picks) or the next three: where a lookup of a present key ends almost always, the table being at
    /// most a third full. Read in one seqlock pass and marked used as [`lookup_fixed`] does; None
    /// for anything else (further on, absent, expired, a write under way, a rewrite overlapping the
    /// read), which the full probe then answers. A found key needs no check of the deletions (its
    /// slot's seqlock vouches for the pair), so Some is a complete answer.
    ///
    /// No probe loop with its step count, no deletion count, no call: a single lookup that ends
    /// here keeps its values in the registers a call may clobber, where the probe and its
    /// out-of-line waits made the compiler save six others on every call.
    ///
    /// [`lookup_fixed`]: Table::lookup_fixed
    ///
    /// # Safety
    ///
    /// [`has_home_slots`](Table::has_home_slots) holds for this table, and `(KW, LRU, TTL)` is its
    /// [`fixed_shape`](Table::fixed_shape), `S` its stride (as [`on_fixed`] gives them).
    #[inline(always)]
    pub(super) unsafe fn lookup_home<const KW: usize, const S: usize, const LRU: bool, const TTL: bool>(
        &self,
        key: [u64; KW],
    ) -> Option<u64> {
        // SAFETY: this function's contract.
        let (slot, h) = unsafe { self.home_slot::<KW, S>(key) }?;
        let value = slot[1 + KW].load(Relaxed);
        if !super::unchanged(&slot[0], h) {
            return None;
        }
        let now = if TTL { self.now_ms() } else { 0 };
        if !Self::fresh::<KW, S, LRU, TTL>(slot, now, self.spec.ttl_ms) {
            return None;
        }
        // (The use clock read only where there is one: an atomic load the compiler keeps.)
        let clock = if LRU { self.clock.load(Relaxed) } else { 0 };
        Self::touch_fixed::<KW, S, LRU, TTL>(slot, clock, now);
        Some(value)
    }

    /// Rewrites the value word of `key` with `write` (given the word, it stores the new one and
    /// returns what the call answers) if the key sits, fresh, in the slots
    /// [`lookup_home`](Table::lookup_home) reads: in place under the slot's claim and marked used,
    /// as [`update_fixed`](Table::update_fixed) rewrites a present key. None for anything else
    /// (further on, absent, expired, a write under way, the slot claimed first by another write),
    /// which the full path then writes.
    ///
    /// # Safety
    ///
    /// [`lookup_home`](Table::lookup_home)'s.
    #[inline(always)]
    pub(super) unsafe fn write_home<const KW: usize, const S: usize, const LRU: bool, const TTL: bool>(
        &self,
        key: [u64; KW],
        write: impl FnOnce(&AtomicU64) -> u64,
    ) -> Option<u64> {
        // SAFETY: this function's contract.
        let (slot, h) = unsafe { self.home_slot::<KW, S>(key) }?;
        let now = if TTL { self.now_ms() } else { 0 };
        // The claim fails if the slot changed since its key was read under `h`.
        if !Self::fresh::<KW, S, LRU, TTL>(slot, now, self.spec.ttl_ms) || !claim(&slot[0], h) {
            return None;
        }
        let answer = write(&slot[1 + KW]);
        let clock = if LRU { self.clock.load(Relaxed) } else { 0 };
        Self::touch_fixed::<KW, S, LRU, TTL>(slot, clock, now);
        release(&slot[0], h, FULL);
        Some(answer)
    }

    /// The slot of `key` among its home slot and the next three, and the header under which its
    /// key was read (settled and full; whether it still holds is the caller's to check): None when
    /// the key is not seen there (further on, absent, a write under way).
    ///
    /// # Safety
    ///
    /// [`lookup_home`](Table::lookup_home)'s.
    #[inline(always)]
    unsafe fn home_slot<const KW: usize, const S: usize>(&self, key: [u64; KW]) -> Option<(&[AtomicU64; S], u64)> {
        debug_assert!(self.has_home_slots() && self.layout.stride == S);
        let n = self.layout.slots;
        let mut i = super::slot_of_hash(hash_words(&self.hasher, &key), n);
        for step in 0..HOME_STEPS {
            // SAFETY: i < layout.slots (the high word of hash * slots, then `next_slot`), and
            // `words` holds layout.slots slots of S words (the caller's `has_home_slots`, S the
            // stride).
            let slot = unsafe { &*self.words.as_ptr().add(i * S).cast::<[AtomicU64; S]>() };
            let h = super::settled_full_now(&slot[0])?;
            if (0..KW).all(|j| slot[1 + j].load(Relaxed) == key[j]) {
                return Some((slot, h));
            }
            if step + 1 < HOME_STEPS {
                i = super::next_slot(i, n);
            }
        }
        None
    }

    /// Whether the entry of `slot` has not expired at `now` (`ttl_ms`; expiry's stamp at word
    /// `2 + KW + LRU`).
    #[inline(always)]
    fn fresh<const KW: usize, const S: usize, const LRU: bool, const TTL: bool>(
        slot: &[AtomicU64; S],
        now: u64,
        ttl_ms: u64,
    ) -> bool {
        !TTL || now.saturating_sub(slot[2 + KW + usize::from(LRU)].load(Relaxed)) <= ttl_ms
    }

    /// [`Slots::find`] after a miss raced a deletion (rare): out of line, so that the batch loop's
    /// values stay in registers (the mutex this may take is a call the loop would save them for).
    #[cold]
    #[inline(never)]
    fn find_raced<const KW: usize, const S: usize>(
        &self,
        slots: Slots<'_, KW, S>,
        key: [u64; KW],
    ) -> Option<(usize, u64, u64)> {
        self.miss_checked(|| slots.find(key, self.moves.read(), &mut slots.slots.len()).ok().flatten())
    }

    /// Marks slot `i` used at use clock `clock` (LRU) and millisecond `now` (expiry), as
    /// [`touch`](Table::touch) does.
    #[inline(always)]
    fn touch_fixed<const KW: usize, const S: usize, const LRU: bool, const TTL: bool>(
        slot: &[AtomicU64; S],
        clock: u64,
        now: u64,
    ) {
        if LRU && slot[2 + KW].load(Relaxed) != clock {
            slot[2 + KW].store(clock, Relaxed);
        }
        let t = 2 + KW + usize::from(LRU);
        if TTL && slot[t].load(Relaxed) != now {
            slot[t].store(now, Relaxed);
        }
    }

    /// Looks the keys of `io` up in turn, in a map of the fixed shape `(KW, LRU, TTL)` with
    /// `S` words a slot; returns the hits (counted as the misses, the rarer case a flow table's
    /// lookups meet, taken from the keys). A hit marks its entry used, as
    /// [`lookup`](Table::lookup) does (with the use clock as the batch began).
    #[inline(always)]
    pub(crate) fn lookup_fixed<const KW: usize, const S: usize, const LRU: bool, const TTL: bool>(
        &self,
        io: &mut impl WordBatch,
    ) -> usize {
        let hasher = self.hasher.clone();
        let slots = self.fixed::<KW, S>(&hasher);
        let now = if TTL { self.now_ms() } else { 0 };
        let (clock, ttl_ms) = (self.clock.load(Relaxed), self.spec.ttl_ms);
        let (mut misses, mut i, n) = (0, 0, io.len());
        let mut answer = |io: &mut _, i, found: Option<(usize, u64, u64)>| {
            let found = found.filter(|&(at, ..)| Self::fresh::<KW, S, LRU, TTL>(&slots.slots[at], now, ttl_ms));
            if let Some((at, ..)) = found {
                Self::touch_fixed::<KW, S, LRU, TTL>(&slots.slots[at], clock, now);
            }
            misses += usize::from(found.is_none());
            // SAFETY: the callers below pass i < n = io.len().
            unsafe { WordBatch::put(io, i, found.map(|(.., v)| v)) };
        };
        while i < n {
            // A run of keys with no call in it, up to a lookup that raced a deletion, finished out
            // of line (so the loop's values stay in registers and a found entry is never
            // merged with the slow path's through the stack). The deletion count read once for
            // the run, before each of its probes, and the probes' steps a budget of the run's.
            let (moves, mut left) = (self.moves.read(), slots.slots.len());
            while i < n {
                // SAFETY: i < n = io.len(); KW words is this table's key shape.
                let Ok(found) = slots.find(unsafe { io.key::<KW>(i) }, moves, &mut left) else { break };
                answer(&mut *io, i, found);
                i += 1;
            }
            if i < n {
                // SAFETY: as above.
                let found = self.find_raced(slots, unsafe { io.key::<KW>(i) });
                answer(&mut *io, i, found);
                i += 1;
            }
        }
        n - misses
    }

    /// Sets the keys of `io` to its values in turn, in a map of the fixed shape; returns how
    /// many were written before the first refused ([`MapError::Full`]). A key present is rewritten
    /// in place (marked used); an absent or expired one takes the general insert.
    ///
    /// [`MapError::Full`]: super::MapError::Full
    #[inline(always)]
    pub(crate) fn update_fixed<const KW: usize, const S: usize, const LRU: bool, const TTL: bool>(
        &self,
        io: &impl WordBatch,
    ) -> usize {
        let hasher = self.hasher.clone();
        let slots = self.fixed::<KW, S>(&hasher);
        let now = if TTL { self.now_ms() } else { 0 };
        let ttl_ms = self.spec.ttl_ms;
        let (mut i, n) = (0, io.len());
        while i < n {
            // A run of rewrites in place with no call in it (so the loop's values stay in
            // registers), up to a key that raced a deletion or is to be inserted, which the slow
            // path finishes out of line. The deletion count and the use clock read once for the
            // run (an insert may evict, a deletion, and advances the clock).
            let (moves, clock, mut left) = (self.moves.read(), self.clock.load(Relaxed), slots.slots.len());
            while i < n {
                // SAFETY: i < n = io.len(); KW words is this table's key shape.
                let (key, value) = unsafe { (io.key::<KW>(i), io.value(i)) };
                let Ok(found) = slots.find(key, moves, &mut left) else { break };
                if !Self::rewrite::<KW, S, LRU, TTL>(slots, found, value, (clock, now, ttl_ms)) {
                    break;
                }
                i += 1;
            }
            if i < n {
                // SAFETY: as above.
                let (key, value) = unsafe { (io.key::<KW>(i), io.value(i)) };
                if !self.update_slow::<KW, S, LRU, TTL>(slots, key, value, now) {
                    return i;
                }
                i += 1;
            }
        }
        n
    }

    /// Rewrites the value of the entry `find` found (`found`), in place and marked used, if it has
    /// not expired and its slot could be claimed; false: the general path is to write it.
    #[inline(always)]
    fn rewrite<const KW: usize, const S: usize, const LRU: bool, const TTL: bool>(
        slots: Slots<'_, KW, S>,
        found: Option<(usize, u64, u64)>,
        value: u64,
        (clock, now, ttl_ms): (u64, u64, u64),
    ) -> bool {
        let fresh = found.filter(|&(at, ..)| Self::fresh::<KW, S, LRU, TTL>(&slots.slots[at], now, ttl_ms));
        fresh.is_some_and(|(at, h, _)| {
            let slot = &slots.slots[at];
            if !claim(&slot[0], h) {
                return false;
            }
            slot[1 + KW].store(value, Relaxed);
            Self::touch_fixed::<KW, S, LRU, TTL>(slot, clock, now);
            release(&slot[0], h, FULL);
            true
        })
    }

    /// [`update_fixed`](Table::update_fixed) for a key its run stopped at: found again with the
    /// deletion count read anew (it may have raced a deletion) and rewritten in place, or else
    /// inserted by the general path. Out of line: it may lock. False: refused
    /// ([`MapError::Full`](super::MapError::Full)).
    #[cold]
    #[inline(never)]
    fn update_slow<const KW: usize, const S: usize, const LRU: bool, const TTL: bool>(
        &self,
        slots: Slots<'_, KW, S>,
        key: [u64; KW],
        value: u64,
        now: u64,
    ) -> bool {
        let found = self.find_raced(slots, key);
        let clock = self.clock.load(Relaxed);
        Self::rewrite::<KW, S, LRU, TTL>(slots, found, value, (clock, now, self.spec.ttl_ms))
            || self.insert_fixed(&key, value)
    }

    /// [`update_fixed`](Table::update_fixed)'s insert (or rewrite of an entry it could not claim):
    /// the general path, out of line (it locks, so it is a call the loop would save its values
    /// for). False: refused ([`MapError::Full`](super::MapError::Full)).
    #[cold]
    #[inline(never)]
    fn insert_fixed(&self, key: &[u64], value: u64) -> bool {
        let (ks, vs) = (self.spec.key_size as usize, self.spec.value_size as usize);
        let mut k = [0u8; 16];
        for (j, w) in key.iter().enumerate() {
            k[8 * j..8 * j + 8].copy_from_slice(&w.to_le_bytes());
        }
        self.update_exact(&k[..ks], &value.to_le_bytes()[..vs]).is_ok()
    }
}
