//! Per-stream counters: single writer, many readers.
//!
//! Each figure is declared once in `counters!`: that gives the plain snapshot struct, its sum, and
//! the shared atomic twin that the worker bumps and the display reads.

use std::ops::Add;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Declares a plain struct of u64 figures, its `Add`, and an atomic twin with `bump_*` adders and a
/// `snapshot`.
macro_rules! counters {
    ($(#[$m:meta])* $plain:ident / $shared:ident { $($(#[$fm:meta])* $f:ident),* $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
        pub struct $plain { $($(#[$fm])* pub $f: u64),* }

        impl $plain {
            /// Each figure with its name, in declaration order.
            pub fn named(&self) -> Vec<(&'static str, u64)> {
                vec![$((stringify!($f), self.$f)),*]
            }
        }

        impl Add for $plain {
            type Output = $plain;
            fn add(self, o: $plain) -> $plain {
                $plain { $($f: self.$f + o.$f),* }
            }
        }

        /// The shared, atomic form (one writer).
        #[derive(Debug, Default)]
        pub(crate) struct $shared { $($f: AtomicU64),* }

        impl $shared {
            /// Adds every figure of `v` (plain load and store: only the owning worker writes).
            #[inline(always)]
            pub(crate) fn bump(&self, v: &$plain) {
                $(if v.$f != 0 { self.$f.store(self.$f.load(Relaxed).wrapping_add(v.$f), Relaxed); })*
            }
            /// Reads every figure.
            pub(crate) fn snapshot(&self) -> $plain {
                $plain { $($f: self.$f.load(Relaxed)),* }
            }
        }
    };
}

counters!(
    /// Drops by reason.
    Drops / SharedDrops {
        /// TX queue still full after the retries (also: a packet a plugin sent to a full port).
        tx_full,
        /// No buffer for a copy.
        nombuf,
        /// The engine (or a plugin's `drop_pkt`) decided to drop.
        engine,
        /// A software TX offload could not be done (no headroom).
        offload,
        /// A failed plugin call under `fail_closed`.
        plugin,
        /// A policy's decision: `drop_pkt`, or a `DROP` verdict in the burst area.
        policy,
        /// A frame a decapsulation engine did not accept, under `tunnel_others: drop`.
        tunnel,
        /// No headroom left for the headers an engine prepends (an encapsulation's outer headers).
        headroom,
        /// Larger than the TX port can send: its MTU, an AF_XDP frame (the kernel's EMSGSIZE).
        tx_oversize,
        /// The kernel refused the frame for another reason (the interface down, a device error).
        tx_error,
    }
);

impl Drops {
    /// All reasons together.
    pub fn total(&self) -> u64 {
        self.tx_full
            + self.nombuf
            + self.engine
            + self.offload
            + self.plugin
            + self.policy
            + self.tunnel
            + self.headroom
            + self.tx_oversize
            + self.tx_error
    }
}

counters!(
    /// A stream's packet figures at one moment (drops apart).
    Flow / SharedFlow {
        /// Packets received.
        rx_packets,
        /// Bytes received.
        rx_bytes,
        /// Packets not received (or not generated) for lack of buffers.
        rx_nombuf,
        /// Packets created by the stream (txonly, tx_first).
        generated,
        /// Packets transmitted.
        tx_packets,
        /// Bytes transmitted.
        tx_bytes,
        /// Packets a plugin sent from this stream to another port (`send_to`).
        redirected_out,
        /// Packets other streams' plugins sent to this stream's TX port, transmitted here.
        redirected_in,
        /// Packets a tunnel engine encapsulated (transmitted or dropped later like any other).
        encapsulated,
        /// Packets a tunnel engine decapsulated.
        decapsulated,
        /// Frames a decapsulation engine passed on unchanged (`tunnel_others: pass`).
        tunnel_passed,
    }
);

/// A stream's figures at one moment. Every stream keeps
/// `rx_packets + generated + redirected_in == tx_packets + drops.total() + redirected_out`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Packets and bytes.
    pub flow: Flow,
    /// Drops by reason.
    pub drops: Drops,
}

impl Add for Counts {
    type Output = Counts;
    fn add(self, o: Counts) -> Counts {
        Counts { flow: self.flow + o.flow, drops: self.drops + o.drops }
    }
}

impl std::ops::Deref for Counts {
    type Target = Flow;
    fn deref(&self) -> &Flow {
        &self.flow
    }
}

/// The shared counters of one stream, on their own cache lines.
#[repr(align(128))]
#[derive(Debug, Default)]
pub struct StreamCounters {
    flow: SharedFlow,
    drops: SharedDrops,
}

impl StreamCounters {
    /// Adds packet figures.
    #[inline(always)]
    pub fn add(&self, f: &Flow) {
        self.flow.bump(f);
    }
    /// Adds drops.
    #[inline(always)]
    pub fn drops(&self, d: Drops) {
        if d != Drops::default() {
            self.drops.bump(&d);
        }
    }
    /// Reads every counter.
    pub fn snapshot(&self) -> Counts {
        Counts { flow: self.flow.snapshot(), drops: self.drops.snapshot() }
    }
}
