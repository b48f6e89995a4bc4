//! What a plugin's store holds: limits, its memory, and, during a call, the burst it works on.

use super::counters::PluginCounters;
use crate::engines::FwdCtx;
use crate::mbuf::{Burst, MAX_BURST};
use crate::ports::Inject;
use std::collections::BTreeMap;
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

/// The burst and forwarding context of the call in progress; null outside a call.
pub(crate) struct Call {
    pub burst: *mut Burst,
    pub ctx: *mut FwdCtx<'static>,
}

// SAFETY: the pointers are set by the runner on the thread that owns the store, right before a call
// into the plugin, and cleared right after it; host functions run synchronously inside that call on
// the same thread. Outside a call they are null and never dereferenced.
unsafe impl Send for Call {}

/// Store data of one plugin instance.
pub(crate) struct HostState {
    pub limits: StoreLimits,
    pub memory: Option<Memory>,
    pub call: Call,
    /// Packets the plugin dropped in the current call, one bit per index.
    pub drops: [u64; MAX_BURST / 64],
    /// Packets the plugin sent to another port in the current call, one bit per index...
    pub sent: [u64; MAX_BURST / 64],
    /// ... and the port each was sent to.
    pub targets: [u16; MAX_BURST],
    /// Whether `drops` or `sent` has a bit set.
    pub requested: bool,
    /// Inject queue per port (None: no stream transmits there, so `send_to` it is `BAD_PORT`).
    pub injects: Arc<[Option<Arc<Inject>>]>,
    /// Scratch burst for engines run on part of a burst (allocated once).
    pub scratch: Burst,
    pub sticky: Option<Sticky>,
    pub params: Arc<BTreeMap<String, String>>,
    pub counters: Arc<PluginCounters>,
    pub simd: crate::simd::Simd,
    pub label: Arc<str>,
    pub in_init: bool,
}

impl HostState {
    /// The burst of the call in progress.
    pub fn burst(&mut self) -> Option<&mut Burst> {
        if self.call.burst.is_null() {
            return None;
        }
        // SAFETY: non-null only during a call, when it points to the stream's burst, which the
        // runner borrows mutably for the whole call (see `Call`).
        Some(unsafe { &mut *self.call.burst })
    }

    /// The burst and the forwarding context of the call in progress.
    pub fn burst_and_ctx(&mut self) -> Option<(&mut Burst, &mut FwdCtx<'static>, &mut Burst)> {
        if self.call.burst.is_null() || self.call.ctx.is_null() {
            return None;
        }
        // SAFETY: as in `burst`; the context is likewise borrowed mutably by the runner for the call,
        // and is a different object from the burst and the scratch burst.
        Some(unsafe { (&mut *self.call.burst, &mut *self.call.ctx, &mut self.scratch) })
    }

    /// Whether packet `i` was dropped or sent elsewhere in this call.
    pub fn gone(&self, i: usize) -> bool {
        (self.drops[i / 64] | self.sent[i / 64]) & (1 << (i % 64)) != 0
    }

    /// Forgets the requests of the previous call (nothing to do when it made none).
    #[inline]
    pub fn reset_requests(&mut self) {
        if self.requested {
            self.drops = [0; MAX_BURST / 64];
            self.sent = [0; MAX_BURST / 64];
            self.requested = false;
        }
    }

    /// Records a drop (`sent == false`) or a send of packet `i`.
    #[inline]
    pub fn request(&mut self, i: usize, sent: bool) {
        let set = if sent { &mut self.sent } else { &mut self.drops };
        set[i / 64] |= 1 << (i % 64);
        self.requested = true;
    }
}
