//! Writing a table: rewriting an entry under its slot's claim, inserting and deleting under the
//! table's lock (backward-shift deletion), and making room in LRU maps and maps with expiry.

use super::*;

/// Entries an insert into a full LRU map (or a full map with expiry) looks at for the one to evict:
/// the least recently used of those (an expired one at once). Bounds the insert's time; BPF's
/// LRU maps are approximate likewise.
pub(super) const EVICTION_SAMPLE: usize = 64;

/// Slots each insert into a map with expiry looks at for expired entries to free, from where the
/// last one stopped: the table is swept as it is used, without a list kept by the plugin.
pub(super) const REAP_STEP: usize = 4;

impl Table {
    /// Runs `write` on the value words of slot `i`, whose header was `h`, with the slot claimed;
    /// None when it changed since (look again).
    #[inline(always)]
    pub(super) fn write_slot<R>(&self, i: usize, h: u64, write: impl FnOnce(&[AtomicU64]) -> R) -> Option<R> {
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

    pub(super) fn store_value(value: &[u8], words: &[AtomicU64]) {
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
            let exact = crate::plugin::maps::lpm::Prefixes::exact(key)?;
            let key = &exact[..key.len()];
            return p.insert(self, key, || self.update_exact(key, value));
        }
        // SAFETY: `single_update` is the path `single_update_path` chose for this table (set when
        // it was made, never changed).
        unsafe { (self.single_update)(self, key, value) }
    }

    #[inline(always)]
    pub(super) fn update_exact(&self, key: &[u8], value: &[u8]) -> Result<(), MapError> {
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
            let exact = crate::plugin::maps::lpm::Prefixes::exact(key)?;
            let key = &exact[..key.len()];
            return p.insert(self, key, || self.add_exact(key, word, delta));
        }
        // SAFETY: `single_add` is the path `single_add_path` chose for this table (set when it was
        // made, never changed).
        unsafe { (self.single_add)(self, key, word, delta) }
    }

    pub(super) fn add_exact(&self, key: &[u8], word: usize, delta: u64) -> Result<u64, MapError> {
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
                    self.insert_zeroed(key)?;
                }
            }
        }
    }

    /// Inserts `key` with its value zeroed, for [`add_exact`](Table::add_exact) of a key not yet
    /// present: out of line, so that an add to a present key (the common case) does not set up
    /// the insert's work (LLVM hoisted it above the find).
    #[cold]
    #[inline(never)]
    fn insert_zeroed(&self, key: &[u8]) -> Result<bool, MapError> {
        self.insert(key, |w| w.iter().for_each(|w| w.store(0, Relaxed)))
    }

    /// Inserts `key` with its value set by `init`, under the table's lock; false when another
    /// writer inserted it meanwhile (the caller then writes through the entry found).
    pub(super) fn insert(&self, key: &[u8], init: impl FnOnce(&[AtomicU64])) -> Result<bool, MapError> {
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
            i = self.next(i);
        }
    }

    /// Removes `key` (arrays: zeroes the entry); false when absent. The entries after it on its
    /// probe chain that may move back into the slots freed move (backward-shift deletion), so no
    /// slot stays deleted and chains never grow with churn.
    pub fn delete(&self, key: &[u8]) -> bool {
        if let Some(p) = &self.prefixes {
            let Ok(exact) = crate::plugin::maps::lpm::Prefixes::exact(key) else { return false };
            let key = &exact[..key.len()];
            return p.delete(key, || self.delete_exact(key));
        }
        self.delete_exact(key)
    }

    pub(super) fn delete_exact(&self, key: &[u8]) -> bool {
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
    /// among the sample). The lock is held. The map is full, so a third of its slots hold entries
    /// ([`SLOTS_PER_ENTRY`]): the scan reads about three slots an entry, and never more than the
    /// table.
    pub(super) fn make_room(&self, cursors: &mut Cursors, now: u64) -> bool {
        if !self.stamped() {
            return false;
        }
        let slots = self.layout.slots;
        let mut oldest: Option<(u64, usize)> = None;
        let (mut seen, mut k) = (0, 0);
        while seen < EVICTION_SAMPLE && k < self.layout.slots {
            let i = (cursors.hand + k) % slots;
            k += 1;
            let slot = self.slot(i);
            if !is_full(settled(&slot[0])) {
                continue;
            }
            seen += 1;
            if !self.live(slot, now) {
                cursors.hand = self.next(i);
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
        cursors.hand = (cursors.hand + k) % slots;
        let Some((_, i)) = oldest else { return false };
        self.delete_at(i);
        self.evicted.fetch_add(1, Relaxed);
        true
    }

    /// Frees the expired entries among the next [`REAP_STEP`] slots of the sweep. The lock is held.
    pub(super) fn reap(&self, cursors: &mut Cursors, now: u64) {
        for _ in 0..REAP_STEP {
            let i = cursors.reap;
            let slot = self.slot(i);
            if is_full(settled(&slot[0])) && !self.live(slot, now) {
                // An entry after it may have moved into slot `i`: looked at by the next step.
                self.delete_at(i);
                self.expired.fetch_add(1, Relaxed);
            } else {
                cursors.reap = self.next(i);
            }
        }
    }

    /// Removes the entry in slot `i`, shifting back the entries after it that may move. The lock
    /// is held.
    pub(super) fn delete_at(&self, i: usize) {
        let done = self.moves.begin();
        let slots = self.layout.slots;
        let (mut hole, mut hole_h) = (i, claim_settled(&self.slot(i)[0]));
        let mut j = self.next(i);
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
            if distance(home, j, slots) >= distance(hole, j, slots) {
                let h = claim_settled(&slot[0]);
                let to = self.slot(hole);
                to[1..].iter().zip(&slot[1..]).for_each(|(t, f)| t.store(f.load(Relaxed), Relaxed));
                release(&to[0], hole_h, FULL);
                (hole, hole_h) = (j, h);
            }
            j = self.next(j);
        }
        release(&self.slot(hole)[0], hole_h, EMPTY);
        self.len.fetch_sub(1, Relaxed);
        self.moves.end(done);
    }
}
