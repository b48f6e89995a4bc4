//! Walking a table: paged dumps for the control socket, the plugin's `map_next_key` cursor, and
//! the probe lengths the tests measure.

use super::*;

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

impl Table {
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
    pub(super) fn read_entry(
        &self,
        i: usize,
        now: u64,
        key: &mut [u8; 64],
        mut value: Option<&mut [u8; 1024]>,
    ) -> bool {
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
    pub(crate) fn probe_length(&self, key: &[u8]) -> usize {
        let mut kw = [0u64; 8];
        let kw = &mut kw[..self.layout.key_words];
        words_of(key, kw);
        let mut i = self.home(kw);
        let mut n = 1;
        while is_full(settled(&self.slot(i)[0]))
            && self.key_words(self.slot(i)).iter().zip(kw.iter()).any(|(a, b)| a.load(Relaxed) != *b)
        {
            i = self.next(i);
            n += 1;
        }
        n
    }
}
