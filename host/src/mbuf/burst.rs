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
