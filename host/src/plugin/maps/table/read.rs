//! Reading a table: finding a key's slot along its probe chain and copying its value, checked
//! against the slot's sequence number and, for a miss, against the deletions that may have moved
//! the key behind the probe (the protocol of `maps::slot`).

use super::*;

/// A lookup that saw deletions run this many times in a row takes the table's lock (which holds
/// them off) to finish: a plugin deleting keys in a loop on another queue cannot keep a reader
/// probing forever.
pub(super) const MISS_RETRIES: u32 = 8;

impl Table {
    /// Runs `once` until its answer holds: a key found, or a miss no deletion overlapped. After
    /// [`MISS_RETRIES`] overlapped misses, runs it holding the table's lock (no deletion then).
    #[inline(always)]
    pub(super) fn miss_checked<T>(&self, once: impl Fn() -> Option<T>) -> Option<T> {
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
    pub(super) fn miss<T>(&self, once: impl Fn() -> Option<T>) -> Option<T> {
        let _held = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        once()
    }

    /// The slot holding `key` and the header seen there, or None. Arrays: the index's slot.
    #[inline(always)]
    pub(super) fn find(&self, key: &[u8]) -> Option<(usize, u64)> {
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
    pub(super) fn find_once(&self, key: &[u8]) -> Option<(usize, u64)> {
        if self.layout.key_words == 1 {
            // One word (keys up to 8 bytes: the examples' flow hashes and addresses): compared as
            // such, not through slices of any length.
            let key = word_of(key);
            let found = probe(
                self.layout.slots,
                hash_words(&self.hasher, &[key]),
                &mut self.layout.slots.clone(),
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
                hash_words(&self.hasher, &[a, b]),
                &mut self.layout.slots.clone(),
                |i| Some(self.slot(i)),
                |s| (s[1].load(Relaxed) == a && s[2].load(Relaxed) == b).then_some(()),
            );
            return found.map(|(i, h, ())| (i, h));
        }
        let mut kw = [0u64; 8];
        let kw = &mut kw[..self.layout.key_words];
        words_of(key, kw);
        let same = |slot: &[AtomicU64]| self.key_words(slot).iter().zip(kw.iter()).all(|(a, b)| a.load(Relaxed) == *b);
        let (slots, hash) = (self.layout.slots, hash_words(&self.hasher, kw));
        let found = probe(slots, hash, &mut slots.clone(), |i| Some(self.slot(i)), |s| same(s).then_some(()));
        found.map(|(i, h, ())| (i, h))
    }

    /// Copies the value of `key` into `out` (`value_size` bytes); false when absent. `lpm_trie`:
    /// the value of the longest prefix holding the key's address. On the path chosen for the map's
    /// shape (`table::single`).
    #[inline]
    pub fn lookup(&self, key: &[u8], out: &mut [u8]) -> bool {
        self.lookup_coded(key, out) == Lookup::Found
    }

    /// [`lookup`](Table::lookup) answering with `map_lookup`'s result code, which the path returns
    /// as it is (no conversion after the call, which `map_lookup` can then end with).
    #[inline]
    pub fn lookup_coded(&self, key: &[u8], out: &mut [u8]) -> Lookup {
        // SAFETY: `single` is the path `single_path` chose for this table (set when it was made,
        // never changed).
        unsafe { (self.single)(self, key, out) }
    }

    /// [`lookup`](Table::lookup) on the general path (every shape): what batches of shapes without
    /// paths of their own call for each key.
    pub(crate) fn lookup_general(&self, key: &[u8], out: &mut [u8]) -> bool {
        if let Some(p) = &self.prefixes {
            return p.lookup(self, key, out);
        }
        self.lookup_exact(key, out)
    }

    /// Whether `key` itself is present (`lpm_trie`: the exact prefix; a hint, racing writers).
    pub(in crate::plugin::maps) fn contains_exact(&self, key: &[u8]) -> bool {
        self.find(key).is_some()
    }

    /// [`lookup`](Table::lookup) of `key` itself.
    #[inline(always)]
    pub(in crate::plugin::maps) fn lookup_exact(&self, key: &[u8], out: &mut [u8]) -> bool {
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
}
