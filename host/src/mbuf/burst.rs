//! [`Burst`]: the packets of one rx/engine/tx round, in a vector allocated once.

use super::Pkt;

/// Largest burst the poll loop handles (testpmd's MAX_PKT_BURST).
pub const MAX_BURST: usize = wasmdp_abi::MAX_BURST as usize;

/// Up to [`MAX_BURST`] packets. The storage is allocated once, when the stream is built; pushing
/// within the capacity never allocates.
#[derive(Debug)]
pub struct Burst {
    pkts: Vec<Pkt>,
}

impl Default for Burst {
    fn default() -> Self {
        Self::new()
    }
}

impl Burst {
    /// An empty burst with room for [`MAX_BURST`] packets.
    pub fn new() -> Burst {
        Burst { pkts: Vec::with_capacity(MAX_BURST) }
    }

    /// An empty burst with no storage (a placeholder while the real one is borrowed elsewhere).
    pub const fn unallocated() -> Burst {
        Burst { pkts: Vec::new() }
    }

    /// Number of packets.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.pkts.len()
    }

    /// True when empty.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.pkts.is_empty()
    }

    /// Adds a packet at the end. A burst is never pushed past MAX_BURST by the dataplane; if it were,
    /// the vector would grow (allocate) rather than lose the packet.
    #[inline(always)]
    pub fn push(&mut self, p: Pkt) {
        debug_assert!(self.pkts.len() < MAX_BURST);
        self.pkts.push(p);
    }

    /// Appends packets from an exact-size iterator (one capacity check for all of them).
    #[inline(always)]
    pub fn extend_from(&mut self, it: impl ExactSizeIterator<Item = Pkt>) {
        debug_assert!(self.pkts.len() + it.len() <= MAX_BURST);
        self.pkts.extend(it);
    }

    /// Appends what `f` makes of each of `items` (as many as the burst has room for), in order,
    /// skipping each `None`: how many. One pass with one capacity check, the length written once
    /// (a receive loop that checks each descriptor as it makes it a packet).
    #[inline(always)]
    pub(crate) fn extend_some<T>(&mut self, items: &[T], mut f: impl FnMut(&T) -> Option<Pkt>) -> usize {
        let len = self.pkts.len();
        let items = &items[..items.len().min(MAX_BURST.saturating_sub(len))];
        self.pkts.reserve(items.len());
        // SAFETY: room for `items.len()` after `len` (reserved; within the capacity allocated
        // once); `dst` moves one slot per packet written, at most once an item, and the length
        // covers them only once all are written (a panic in `f` leaves it at `len`: packets
        // leaked, none read twice).
        unsafe {
            let start = self.pkts.as_mut_ptr().add(len);
            let mut dst = start;
            for item in items {
                if let Some(p) = f(item) {
                    dst.write(p);
                    dst = dst.add(1);
                }
            }
            let added = dst.offset_from(start) as usize;
            self.pkts.set_len(len + added);
            added
        }
    }

    /// Moves the last `n` packets of `from` (all of them when it has fewer) to the end of the
    /// burst, in order, each through `f`: how a cache hands out buffers.
    ///
    /// A loop of its own, always inlined, rather than `Vec::extend` over a drain: that is one
    /// generic function shared by every receive path, and whether the compiler inlined it turned
    /// on the size of unrelated code elsewhere in the crate (about 4 instructions a packet on every
    /// path, up or down with edits that did not touch receiving); a loop of pushes costs more.
    #[inline(always)]
    pub(crate) fn take_tail(&mut self, from: &mut Vec<Pkt>, n: usize, mut f: impl FnMut(Pkt) -> Pkt) {
        let n = n.min(from.len());
        debug_assert!(self.pkts.len() + n <= MAX_BURST);
        self.pkts.reserve(n);
        let (start, len) = (from.len() - n, self.pkts.len());
        // SAFETY: `from[start..start + n]` are initialised and, with `from` cut to `start` first,
        // read exactly once (a panic in `f` leaks the rest, never reads one twice); the burst has
        // room for `n` more after `len` (reserved), and its length covers them only once all are
        // written.
        unsafe {
            from.set_len(start);
            let src = from.as_ptr().add(start);
            let dst = self.pkts.as_mut_ptr().add(len);
            for i in 0..n {
                dst.add(i).write(f(src.add(i).read()));
            }
            self.pkts.set_len(len + n);
        }
    }

    /// Removes the last packet.
    #[inline(always)]
    pub fn pop(&mut self) -> Option<Pkt> {
        self.pkts.pop()
    }

    /// The packets.
    #[inline(always)]
    pub fn as_slice(&self) -> &[Pkt] {
        &self.pkts
    }

    /// The packets, writable.
    #[inline(always)]
    pub fn as_mut_slice(&mut self) -> &mut [Pkt] {
        &mut self.pkts
    }

    /// Removes and yields the packets from `from` on.
    #[inline]
    pub fn drain_from(&mut self, from: usize) -> std::vec::Drain<'_, Pkt> {
        let from = from.min(self.pkts.len());
        self.pkts.drain(from..)
    }

    /// Removes and yields the first `n` packets, keeping the rest in order.
    #[inline]
    pub fn drain_front(&mut self, n: usize) -> std::vec::Drain<'_, Pkt> {
        let n = n.min(self.pkts.len());
        self.pkts.drain(..n)
    }

    /// Removes and yields the packets in `range`, keeping the rest in order.
    #[inline]
    pub fn drain_range(&mut self, range: std::ops::Range<usize>) -> std::vec::Drain<'_, Pkt> {
        self.pkts.drain(range)
    }

    /// Moves every packet of `other` into this burst at position `at` (in order), leaving `other`
    /// empty. Within MAX_BURST this does not allocate.
    #[inline]
    pub fn splice_in(&mut self, at: usize, other: &mut Burst) {
        let at = at.min(self.pkts.len());
        self.pkts.splice(at..at, other.pkts.drain(..));
    }

    /// Removes the packet at `i`, replacing it with the last one (order is not kept).
    #[inline]
    pub fn swap_remove(&mut self, i: usize) -> Pkt {
        self.pkts.swap_remove(i)
    }

    /// Removes the packet at `i`, keeping the order of the others.
    #[inline]
    pub fn remove(&mut self, i: usize) -> Pkt {
        self.pkts.remove(i)
    }

    /// Inserts `p` at `i`, keeping the order of the others.
    #[inline]
    pub fn insert(&mut self, i: usize, p: Pkt) {
        self.pkts.insert(i, p);
    }

    /// Replaces the packet at `i` and returns the old one.
    #[inline]
    pub fn replace(&mut self, i: usize, p: Pkt) -> Pkt {
        std::mem::replace(&mut self.pkts[i], p)
    }

    /// Keeps the packets for which `keep` is true, in order; hands the others to `reject`.
    pub fn partition(&mut self, mut keep: impl FnMut(&Pkt) -> bool, mut reject: impl FnMut(Pkt)) {
        let mut i = 0;
        while i < self.pkts.len() {
            if keep(&self.pkts[i]) {
                i += 1;
            } else {
                reject(self.pkts.remove(i));
            }
        }
    }
}

/// A set of indexes into a burst (packets to remove, requests of a plugin).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Marks([u64; MAX_BURST / 64]);

impl Marks {
    /// Whether `i` is in the set.
    #[inline(always)]
    pub fn has(&self, i: usize) -> bool {
        self.0[i / 64] & (1 << (i % 64)) != 0
    }

    /// Adds `i`.
    #[inline(always)]
    pub fn set(&mut self, i: usize) {
        self.0[i / 64] |= 1 << (i % 64);
    }

    /// The set whose word `w` holds indexes `64 * w ..`, bit `i % 64` for index `i`.
    #[inline(always)]
    pub fn from_words(words: [u64; MAX_BURST / 64]) -> Marks {
        Marks(words)
    }

    /// The indexes in either set.
    #[inline(always)]
    pub fn union(&self, other: &Marks) -> Marks {
        Marks(std::array::from_fn(|w| self.0[w] | other.0[w]))
    }

    /// Whether no index is in the set: the words ORed in line, where `== Marks::default()` was a
    /// call into memcmp.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.0.iter().fold(0, |any, &w| any | w) == 0
    }

    /// The first index in `from..end` that is in the set (`set: true`) or not in it (`false`).
    pub fn next(&self, from: usize, end: usize, set: bool) -> Option<usize> {
        let end = end.min(MAX_BURST);
        let mut i = from;
        while i < end {
            let word = if set { self.0[i / 64] } else { !self.0[i / 64] } >> (i % 64);
            if word != 0 {
                let at = i + word.trailing_zeros() as usize;
                return (at < end).then_some(at);
            }
            i = (i / 64 + 1) * 64;
        }
        None
    }
}

impl Burst {
    /// Removes the packets at the `marked` indexes, keeping the order of the others, and hands each
    /// removed packet to `removed` (in order).
    pub fn remove_marked(&mut self, marked: &Marks, removed: impl FnMut(Pkt)) {
        let mut i = 0;
        self.pkts
            .extract_if(.., |_| {
                i += 1;
                marked.has(i - 1)
            })
            .for_each(removed);
    }
}

impl Burst {
    /// Moves the packets at the `marked` indexes to the end of `into`, in order, keeping the order
    /// of the others. Branch-free per packet: how a policy's drops leave the burst.
    pub fn split_marked(&mut self, marked: &Marks, into: &mut Burst) {
        let (len, n) = (self.pkts.len(), self.pkts.len().min(MAX_BURST));
        into.pkts.reserve(n);
        let (src, base) = (self.pkts.as_mut_ptr(), into.pkts.len());
        let dst = into.pkts.as_mut_ptr();
        let (mut kept, mut moved) = (0, 0);
        // SAFETY: both vectors' lengths are set to what they own before anything can panic (nothing
        // below can), and again at the end. Each packet `i < len` is read once from `src[i]` and
        // written to `src[kept]` (`kept <= i`, a slot already read) and to `dst[base + moved]` (within
        // the capacity reserved); exactly one of the two copies is counted, by the increments,
        // and an uncounted one is overwritten or lies past the length: no handle is owned twice.
        unsafe {
            self.pkts.set_len(0);
            for (w, word) in marked.0.iter().enumerate().take(n.div_ceil(64)) {
                let mut bits = *word;
                for i in w * 64..n.min(w * 64 + 64) {
                    let p = src.add(i).read();
                    let m = (bits & 1) as usize;
                    bits >>= 1;
                    dst.add(base + moved).write(std::ptr::read(&p));
                    src.add(kept).write(p);
                    moved += m;
                    kept += 1 - m;
                }
            }
            // Past MAX_BURST (never, in the dataplane) no index is marked: kept.
            for i in n..len {
                src.add(kept).write(src.add(i).read());
                kept += 1;
            }
            self.pkts.set_len(kept);
            into.pkts.set_len(base + moved);
        }
    }
}

impl std::ops::Deref for Burst {
    type Target = [Pkt];
    fn deref(&self) -> &[Pkt] {
        &self.pkts
    }
}

impl std::ops::DerefMut for Burst {
    fn deref_mut(&mut self) -> &mut [Pkt] {
        &mut self.pkts
    }
}

impl Drop for Burst {
    fn drop(&mut self) {
        debug_assert!(
            self.pkts.is_empty() || std::thread::panicking(),
            "burst dropped with {} packets",
            self.pkts.len()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mbuf::{Pool, PoolConfig};
    use proptest::prelude::*;

    const N: usize = MAX_BURST + 8;

    /// A fresh packet whose two bytes are `tag`.
    fn tagged(cache: &mut crate::mbuf::PoolCache, tag: u16) -> Pkt {
        let mut p = cache.alloc().unwrap();
        p.set_data_len(2).unwrap();
        p.data_mut().copy_from_slice(&tag.to_le_bytes());
        p
    }

    /// The tag of a packet from [`tagged`].
    fn tag(p: &Pkt) -> u16 {
        u16::from_le_bytes([p.data()[0], p.data()[1]])
    }

    /// Set words: empty, full or any, so that whole words are skipped too.
    fn words() -> impl Strategy<Value = [u64; MAX_BURST / 64]> {
        proptest::array::uniform8(prop_oneof![Just(0u64), Just(u64::MAX), any::<u64>()])
    }

    proptest! {
        /// `next` finds what a scan of `has` finds.
        #[test]
        fn next_is_the_first_index_in_or_out_of_the_set(
            words in words(), from in 0usize..=N, end in 0usize..=N, set: bool,
        ) {
            let m = Marks::from_words(words);
            let want = (from..end.min(MAX_BURST)).find(|&i| m.has(i) == set);
            prop_assert_eq!(m.next(from, end, set), want);
        }

        /// `is_empty` is `has` for no index at all.
        #[test]
        fn is_empty_agrees_with_has(words in words()) {
            let m = Marks::from_words(words);
            prop_assert_eq!(m.is_empty(), (0..MAX_BURST).all(|i| !m.has(i)));
        }

        /// Every packet ends up exactly once: the unmarked ones in the burst, the marked ones after
        /// what `into` held, each side in its order (burst lengths past [`MAX_BURST`] included:
        /// nothing is marked there).
        #[test]
        fn split_marked_keeps_each_packet_once_in_order(
            len in 0usize..=N, words in words(), held in 0usize..3,
        ) {
            let cfg = PoolConfig { size: 2 * N, cache_size: 0, headroom: 0, data_room: 64 };
            let pool = Pool::new(cfg).unwrap();
            let mut cache = pool.cache();
            let (mut burst, mut into) = (Burst::new(), Burst::new());
            (0..len).for_each(|i| burst.pkts.push(tagged(&mut cache, i as u16)));
            (0..held).for_each(|i| into.push(tagged(&mut cache, 60_000 + i as u16)));
            let marks = Marks::from_words(words);
            burst.split_marked(&marks, &mut into);
            let marked = |i: usize| i < MAX_BURST && marks.has(i);
            let want_kept: Vec<u16> = (0..len).filter(|&i| !marked(i)).map(|i| i as u16).collect();
            let want_into: Vec<u16> =
                (0..held).map(|i| 60_000 + i as u16).chain((0..len).filter(|&i| marked(i)).map(|i| i as u16)).collect();
            prop_assert_eq!(burst.iter().map(tag).collect::<Vec<_>>(), want_kept);
            prop_assert_eq!(into.iter().map(tag).collect::<Vec<_>>(), want_into);
            cache.free_burst(&mut burst);
            cache.free_burst(&mut into);
            drop(cache);
            prop_assert_eq!(pool.available(), pool.capacity());
        }

        /// `extend_some` appends exactly what its closure gave, in order, asks for no more than
        /// the burst holds, and loses nothing it was given.
        #[test]
        fn extend_some_appends_what_it_is_given_up_to_a_burst(
            held in 0usize..=MAX_BURST, n in 0usize..=N, words in words(),
        ) {
            let cfg = PoolConfig { size: 2 * N + MAX_BURST, cache_size: 0, headroom: 0, data_room: 64 };
            let pool = Pool::new(cfg).unwrap();
            let mut cache = pool.cache();
            let mut burst = Burst::new();
            (0..held).for_each(|i| burst.push(tagged(&mut cache, 60_000 + i as u16)));
            let give = Marks::from_words(words);
            let items: Vec<usize> = (0..n).collect();
            let mut asked = Vec::new();
            let added = burst.extend_some(&items, |&k| {
                asked.push(k);
                give.has(k % MAX_BURST).then(|| tagged(&mut cache, k as u16))
            });
            let room = MAX_BURST - held;
            prop_assert_eq!(asked, (0..n.min(room)).collect::<Vec<_>>());
            let given: Vec<u16> = (0..n.min(room)).filter(|&k| give.has(k % MAX_BURST)).map(|k| k as u16).collect();
            prop_assert_eq!(added, given.len());
            let want: Vec<u16> = (0..held).map(|i| 60_000 + i as u16).chain(given).collect();
            prop_assert_eq!(burst.iter().map(tag).collect::<Vec<_>>(), want);
            cache.free_burst(&mut burst);
            drop(cache);
            prop_assert_eq!(pool.available(), pool.capacity());
        }
    }
}
