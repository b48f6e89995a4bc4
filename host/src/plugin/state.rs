//! What a plugin's store holds: limits, its memory, its deadline watch, and, during a call, the burst
//! it works on with the plugin's view of it.
//!
//! **Stable indexes.** A plugin names packets by their index in the burst as it was when
//! `wasmdp_on_burst` was called, and that index names the same packet (or the copy an engine made
//! of it) until the call returns, whatever happens to the burst meanwhile. Engines run on part of a
//! burst may free packets (the `copy` engine without buffers) or reorder them; [`View`] then maps
//! each plugin index to the packet's current position, or marks it consumed. Drops and sends are
//! only requested during the call and carried out after it, in order.

use super::counters::InstanceCounters;
use super::deadline::Watch;
use super::logs::LogLimit;
use crate::engines::FwdCtx;
use crate::mbuf::{Burst, MAX_BURST};
use std::collections::BTreeMap;
use std::ptr::NonNull;
use std::sync::Arc;
use wasmtime::{Memory, StoreLimits};

/// A sticky decision: run `engine` with these offloads, without calling the plugin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Sticky {
    /// Engine id (ABI numbering).
    pub engine: u32,
    /// Offload flags.
    pub flags: u64,
    /// Inner TCI.
    pub vlan_tci: u16,
    /// Outer TCI.
    pub vlan_tci_outer: u16,
    /// Bursts left; u64::MAX: until cleared.
    pub left: u64,
}

/// A set of plugin indexes.
pub(crate) type Bits = crate::mbuf::Marks;

/// The plugin's view of the burst during one call.
pub(crate) struct View {
    /// Packets in the burst when the call began: plugin indexes are `0..len`.
    pub len: usize,
    /// Requested drops (a policy's, unless `engine_drops` or `room_drops` says otherwise).
    pub drops: Bits,
    /// Drops by the `rxonly` engine run from the plugin (counted as `engine`).
    pub engine_drops: Bits,
    /// Packets whose length change did not fit (counted as `headroom`).
    pub room_drops: Bits,
    /// Requested sends (`send_to`), with their target ports.
    pub sent: Bits,
    pub targets: [u16; MAX_BURST],
    /// Indexes whose packet an engine freed (counted by the engine).
    pub consumed: Bits,
    /// Whether positions differ from indexes; then `pos` holds them.
    pub shifted: bool,
    pub pos: [u16; MAX_BURST],
    /// Whether `drops`, `sent` or `consumed` has a bit set.
    pub dirty: bool,
    /// Whether `engine_drops` or `room_drops` has a bit set (otherwise every drop is the policy's).
    pub other_drops: bool,
}

impl View {
    fn new() -> View {
        View {
            len: 0,
            drops: Bits::default(),
            engine_drops: Bits::default(),
            room_drops: Bits::default(),
            sent: Bits::default(),
            targets: [0; MAX_BURST],
            consumed: Bits::default(),
            shifted: false,
            pos: [0; MAX_BURST],
            dirty: false,
            other_drops: false,
        }
    }

    /// Starts a call on a burst of `len` packets.
    #[inline(always)]
    pub fn begin(&mut self, len: usize) {
        self.len = len;
        if self.dirty || self.shifted {
            // Only the sets that may hold a bit: all five at once were a call into memset a burst
            // on every path that drops. `engine_drops` and `room_drops` are set only with
            // `other_drops`, `consumed` only once positions moved (`reposition` sets `shifted`).
            self.drops = Bits::default();
            self.sent = Bits::default();
            if self.other_drops {
                self.engine_drops = Bits::default();
                self.room_drops = Bits::default();
            }
            if self.shifted {
                self.consumed = Bits::default();
            }
            self.dirty = false;
            self.other_drops = false;
            self.shifted = false;
        }
    }

    /// Whether every index is still its packet's position and none was consumed or requested.
    #[inline(always)]
    pub fn untouched(&self) -> bool {
        !self.dirty && !self.shifted
    }

    /// Whether index `i` no longer names a packet the plugin may act on.
    #[inline(always)]
    pub fn gone(&self, i: usize) -> bool {
        self.dirty && (self.drops.has(i) || self.sent.has(i) || self.consumed.has(i))
    }

    /// The current position of index `i` (not consumed).
    #[inline(always)]
    pub fn position(&self, i: usize) -> usize {
        if self.shifted {
            usize::from(self.pos[i])
        } else {
            i
        }
    }

    /// Records a drop (`send: None`) or a send of index `i`.
    #[inline]
    pub fn request(&mut self, i: usize, send: Option<u16>) {
        match send {
            None => self.drops.set(i),
            Some(port) => {
                self.sent.set(i);
                self.targets[i] = port;
            }
        }
        self.dirty = true;
    }

    /// Records a drop by the `rxonly` engine.
    #[inline]
    pub fn request_engine_drop(&mut self, i: usize) {
        self.engine_drops.set(i);
        self.other_drops = true;
        self.request(i, None);
    }

    /// Records the drop of a packet whose length change did not fit.
    #[inline]
    pub fn request_room_drop(&mut self, i: usize) {
        self.room_drops.set(i);
        self.other_drops = true;
        self.request(i, None);
    }

    /// Where the packets of the indexes in `range` are: the first position and how many (the
    /// packets of indexes not consumed are in the burst in index order, so they are contiguous).
    #[inline]
    pub fn present(&self, range: std::ops::Range<usize>) -> (usize, usize) {
        if !self.dirty {
            // Nothing consumed: every index is present, in place or shifted alike.
            return if range.is_empty() { (0, 0) } else { (self.position(range.start), range.len()) };
        }
        let mut live = range.clone().filter(|&i| !(self.dirty && self.consumed.has(i)));
        let Some(first) = live.next() else { return (0, 0) };
        (self.position(first), 1 + live.count())
    }

    /// After an engine ran on the packets of the indexes in `range` (taken from positions
    /// `first..`, each tagged with its index in `Meta::slot`) and left `out`: puts them back in index
    /// order, marks the indexes whose packet it freed as consumed, and moves the later positions.
    pub fn settle(&mut self, burst: &mut Burst, range: std::ops::Range<usize>, first: usize, out: &mut Burst) {
        let taken = self.present(range.clone()).1;
        // Engines a plugin can run never add packets: they keep, replace (one for one) or free them.
        debug_assert!(out.len() <= taken);
        let slots = out.as_mut_slice();
        slots.sort_by_key(|p| p.meta().slot);
        let removed = taken.saturating_sub(slots.len());
        if removed != 0 || self.shifted {
            self.reposition(range, first, out, removed);
        }
        burst.splice_in(first, out);
    }

    fn reposition(&mut self, range: std::ops::Range<usize>, first: usize, out: &Burst, removed: usize) {
        if !self.shifted {
            for i in 0..self.len {
                self.pos[i] = i as u16;
            }
            self.shifted = true;
        }
        let end = range.end;
        let mut k = 0;
        for i in range {
            if self.dirty && self.consumed.has(i) {
                continue;
            }
            if out.get(k).is_some_and(|p| usize::from(p.meta().slot) == i) {
                self.pos[i] = (first + k) as u16;
                k += 1;
            } else {
                self.consumed.set(i);
                self.dirty = true;
            }
        }
        for i in end..self.len {
            if !self.consumed.has(i) {
                self.pos[i] -= removed as u16;
            }
        }
    }
}

/// The burst and forwarding context of the call in progress; None outside a call.
///
/// The context's lifetime is erased to store it (a store's data must be `'static`); it is only ever
/// handed out reborrowed for a lifetime chosen by the caller of [`HostState::with_call`], which
/// cannot outlive the call, so no reference into it can escape.
#[derive(Default)]
pub(crate) struct Call {
    /// Both or neither, so that a host function tests one pointer for "in a call".
    current: Option<(NonNull<Burst>, NonNull<FwdCtx<'static>>)>,
}

// SAFETY: the pointers are set by the runner on the thread that owns the store, right before a call
// into the plugin, and cleared right after it; host functions run synchronously inside that call on
// the same thread. Outside a call they are None and never dereferenced.
unsafe impl Send for Call {}

/// Store data of one plugin instance.
pub(crate) struct HostState {
    pub limits: StoreLimits,
    pub memory: Option<Memory>,
    pub watch: Watch,
    call: Call,
    pub view: View,
    /// The stream it serves (context, `send_to` targets, maps).
    pub env: Arc<super::StreamEnv>,
    /// The burst area, once registered (1.1).
    pub area: Option<super::area::record::Area>,
    /// How far into its window any slot of the area may hold bytes of an earlier packet: what a
    /// shorter packet's fill zeroes after its own bytes.
    pub area_stale: usize,
    /// The stream's packet region, mapped when the area was registered with `DIRECT`.
    pub direct: Option<super::direct::Mapping>,
    /// Maps declared, by id.
    pub maps: Vec<Arc<super::maps::Table>>,
    /// Bytes of maps it may still declare (`limits.map_kib`).
    pub map_budget: u64,
    /// Scratch burst for engines run on part of a burst (allocated once).
    pub scratch: Burst,
    /// What a call sends to other ports, batched per port until its requests are carried out.
    pub sends: Box<super::sends::Sends>,
    pub sticky: Option<Sticky>,
    pub params: Arc<BTreeMap<String, String>>,
    pub counters: Arc<InstanceCounters>,
    pub simd: crate::simd::Simd,
    /// The engines it can name, by ABI id, resolved for `simd`.
    pub engines: [crate::engines::Resolved; wasmdp_abi::engine::COUNT as usize],
    pub label: Arc<str>,
    /// The plugin's name (its events say which plugin reported them).
    pub plugin: Arc<str>,
    /// The kinds of event this instance registered, by id: the port's kind and its size.
    pub events: Vec<(u16, u16)>,
    /// The typed layouts the module declares for its maps.
    pub layouts: Arc<crate::plugin::maps::Layouts>,
    /// The initial entries of its maps (`policy: map_entries:`), and why the first declaration of
    /// one of them was refused (the instance then fails with it: `Plugin::instantiate`).
    pub initial: Arc<crate::plugin::maps::Initials>,
    pub initial_refused: Option<String>,
    pub in_init: bool,
    pub logs: LogLimit,
    /// What `random` answers from: the instance's own generator, seeded from the OS when the
    /// instance is made (another instance, or the next one after a swap, draws another sequence).
    pub rng: fastrand::Rng,
}

/// A seed from the operating system (`getrandom`); should the OS fail to give one, std's
/// per-process random keys (also from the OS, once) mixed with the clock.
fn os_seed() -> u64 {
    getrandom::u64().unwrap_or_else(|_| {
        use std::hash::BuildHasher;
        std::collections::hash_map::RandomState::new().hash_one(super::counters::now_ns())
    })
}

impl HostState {
    /// State for a new instance.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        limits: StoreLimits,
        watch: Watch,
        env: Arc<super::StreamEnv>,
        map_budget: u64,
        params: Arc<BTreeMap<String, String>>,
        counters: Arc<InstanceCounters>,
        simd: crate::simd::Simd,
        label: Arc<str>,
        layouts: Arc<crate::plugin::maps::Layouts>,
    ) -> HostState {
        HostState {
            limits,
            memory: None,
            watch,
            call: Call::default(),
            view: View::new(),
            env,
            area: None,
            area_stale: 0,
            direct: None,
            maps: Vec::new(),
            map_budget,
            scratch: Burst::new(),
            sends: Box::default(),
            sticky: None,
            params,
            counters,
            simd,
            engines: crate::engines::resolve_abi(simd),
            plugin: Arc::default(),
            events: Vec::new(),
            label,
            layouts,
            initial: Arc::default(),
            initial_refused: None,
            in_init: true,
            logs: LogLimit::default(),
            rng: fastrand::Rng::with_seed(os_seed()),
        }
    }

    /// Makes `burst` and `ctx` the call's until [`HostState::end_call`].
    #[inline(always)]
    pub fn begin_call(&mut self, burst: &mut Burst, ctx: &mut FwdCtx<'_>) {
        self.view.begin(burst.len());
        // Only the context's lifetime changes (see `Call`).
        self.call.current = Some((NonNull::from(burst), NonNull::from(ctx).cast::<FwdCtx<'static>>()));
        self.watch.begin();
    }

    /// Forgets the call's burst and context.
    #[inline(always)]
    pub fn end_call(&mut self) {
        self.call = Call::default();
    }

    /// The burst of the call in progress.
    #[inline]
    pub fn burst(&mut self) -> Option<&mut Burst> {
        // SAFETY: set only during a call, when it points to the stream's burst, which the runner
        // borrows mutably for the whole call and does not touch meanwhile (see `Call`).
        self.call.current.map(|(mut b, _)| unsafe { b.as_mut() })
    }

    /// Runs `f` on the burst, the forwarding context, the scratch burst and the view of the call in
    /// progress (None outside a call). `f` works for any lifetime of the context, so it cannot keep
    /// anything borrowed from it.
    pub fn with_call<R>(
        &mut self,
        f: impl for<'x> FnOnce(&mut Burst, &mut FwdCtx<'x>, &mut Burst, &mut View) -> R,
    ) -> Option<R> {
        let (mut b, mut c) = self.call.current?;
        // SAFETY: as in `burst`; the context is likewise borrowed mutably by the runner for the
        // call and is a different object from the burst, the scratch burst and the view. Its
        // lifetime is shortened to `'x` (FwdCtx is covariant), which ends with `f`.
        let (burst, ctx) = unsafe { (b.as_mut(), c.as_mut()) };
        Some(f(burst, ctx, &mut self.scratch, &mut self.view))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn begin_leaves_no_request_of_the_last_call() {
        let mut v = View::new();
        v.begin(32);
        v.request_engine_drop(3);
        v.request_room_drop(4);
        v.request(5, Some(1));
        v.request(6, None);
        v.begin(32);
        assert!(v.untouched() && !v.other_drops);
        for i in 3..7 {
            assert!(!v.gone(i), "index {i}");
            assert!(!v.drops.has(i) && !v.engine_drops.has(i) && !v.room_drops.has(i) && !v.sent.has(i), "index {i}");
        }
        // Only a policy drop in this call: the sets of the other kinds stay empty after the next.
        v.request(7, None);
        v.begin(32);
        assert!(v.drops.is_empty() && v.engine_drops.is_empty() && v.room_drops.is_empty() && v.sent.is_empty());
        // An index consumed by an engine (which moves positions: `reposition` sets `shifted`).
        v.consumed.set(8);
        (v.dirty, v.shifted) = (true, true);
        v.begin(32);
        assert!(v.untouched() && v.consumed.is_empty() && !v.gone(8));
    }
}
