//! The concurrency protocol of a map table, on its own: a seqlock per slot, and a table-wide count
//! of deletions for the readers' misses. Model-checked with loom (`loom_tests`).
//!
//! **Slots.** A slot's first word is its header: its state (empty or full), a write bit, and a
//! sequence number that every write bumps. A writer claims the slot by setting the write bit with a
//! compare-and-swap from the header it saw (so a writer that saw an older header fails and looks
//! again), then a release fence, then writes the words, then stores the header back with the
//! sequence bumped (release). A reader waits until the write bit is clear (acquire), reads the
//! words (relaxed), an acquire fence, and reads the header again: if it is the same, no write
//! overlapped the read. (If the reader read any word a writer stored, the writer's release fence
//! synchronises with the reader's acquire fence, so the second header read sees at least the claim.)
//! Every word is an atomic, so a torn read is a retry, never undefined behaviour.
//!
//! **Deletions.** A deletion shifts the entries after the deleted one back along their probe chain
//! (backward-shift deletion: no tombstones, so chains stay as short as the keys present make
//! them, whatever the churn). An entry may then move to a slot a reader has already passed, and
//! the reader would report a present key absent. So every deletion runs inside a seqcount of the
//! table ([`Moves`]): odd while it runs, with a release fence before its first slot write and a
//! release store of the even count after the last. A reader reads the count (acquire) before it
//! probes; when it finds nothing, it checks (acquire fence, then the count) that the count was
//! even and has not changed: else it probes again. The same fence pairing as above: a reader that
//! saw any slot write of a deletion sees the deletion's odd count. A key found needs no such check
//! (its slot's seqlock vouches for the pair of key and value).
//!
//! Inserts and deletions hold the table's lock, so they never race each other; rewrites of an
//! existing entry (updates, adds) do not: they race each other and the deletions' moves through the
//! slots' write bits.

use super::sync::{back_off, fence, AtomicU64};
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};

/// Slot states (the header's low bit). Full is 0, so that "full, no write under way", the test
/// of every slot a probe reads, is one test of two bits against zero.
pub(super) const EMPTY: u64 = 1;
pub(super) const FULL: u64 = 0;
const STATE: u64 = 1;
/// A write is under way.
const WRITING: u64 = 4;
/// One step of the sequence number.
const SEQ_ONE: u64 = 8;

/// Whether the header says the slot holds an entry.
#[inline(always)]
pub(super) fn is_full(h: u64) -> bool {
    h & STATE == FULL
}

/// The header once no write is under way.
#[inline(always)]
pub(super) fn settled(header: &AtomicU64) -> u64 {
    let h = header.load(Acquire);
    if h & WRITING == 0 {
        return h;
    }
    settled_after_wait(header)
}

/// The header of a full slot once no write is under way; None: the slot is empty. One test for
/// the common case (full, no write), where [`settled`] then [`is_full`] made two per slot a probe
/// passes.
#[inline(always)]
pub(super) fn settled_full(header: &AtomicU64) -> Option<u64> {
    let h = header.load(Acquire);
    if h & (STATE | WRITING) == FULL {
        return Some(h);
    }
    let h = if h & WRITING == 0 { h } else { settled_after_wait(header) };
    is_full(h).then_some(h)
}

/// The header of a full slot with no write under way, read once; None otherwise (empty, or a
/// write under way: no wait). For a fast path that leaves every other case to a full probe.
#[inline(always)]
pub(super) fn settled_full_now(header: &AtomicU64) -> Option<u64> {
    let h = header.load(Acquire);
    (h & (STATE | WRITING) == FULL).then_some(h)
}

/// [`settled`] when a write is under way: waits, out of line (a call inside a lookup's loop, even
/// one never taken, made the compiler keep the loop's values on the stack).
#[cold]
#[inline(never)]
fn settled_after_wait(header: &AtomicU64) -> u64 {
    let mut round = 0u32;
    loop {
        round += 1;
        back_off(round);
        let h = header.load(Acquire);
        if h & WRITING == 0 {
            return h;
        }
    }
}

/// After reading a slot whose header was `seen`: true when no write overlapped the read.
#[inline(always)]
pub(super) fn unchanged(header: &AtomicU64, seen: u64) -> bool {
    fence(Acquire);
    header.load(Relaxed) == seen
}

/// Claims a slot whose header was `seen` for writing: false when it changed since (another write
/// came first: look again).
#[inline(always)]
pub(super) fn claim(header: &AtomicU64, seen: u64) -> bool {
    if header.compare_exchange(seen, seen | WRITING, Acquire, Relaxed).is_err() {
        return false;
    }
    // Orders the claim before the words written next (see the module's argument).
    fence(Release);
    true
}

/// Claims the slot whatever writes come first (waits for them): the header claimed.
pub(super) fn claim_settled(header: &AtomicU64) -> u64 {
    loop {
        let h = settled(header);
        if claim(header, h) {
            return h;
        }
    }
}

/// Ends a write claimed from the header `seen`: the slot is now `state`, its sequence bumped.
#[inline(always)]
pub(super) fn release(header: &AtomicU64, seen: u64, state: u64) {
    header.store((seen & !(STATE | WRITING)) + SEQ_ONE + state, Release);
}

/// The table's count of deletions under way and done (see the module's argument).
#[derive(Debug)]
pub(super) struct Moves(AtomicU64);

impl Moves {
    pub(super) fn new() -> Moves {
        Moves(AtomicU64::new(0))
    }

    /// Before a probe: the count to check a miss against.
    #[inline(always)]
    pub(super) fn read(&self) -> u64 {
        self.0.load(Acquire)
    }

    /// After a probe that found nothing: whether that is the answer (no deletion ran meanwhile).
    #[inline(always)]
    pub(super) fn miss_holds(&self, read: u64) -> bool {
        fence(Acquire);
        read & 1 == 0 && self.0.load(Relaxed) == read
    }

    /// Before a deletion's first slot write (the table's lock held): the count to end it with.
    pub(super) fn begin(&self) -> u64 {
        let m = self.0.load(Relaxed);
        self.0.store(m + 1, Relaxed);
        fence(Release);
        m + 2
    }

    /// After a deletion's last slot write.
    pub(super) fn end(&self, done: u64) {
        self.0.store(done, Release);
    }
}
