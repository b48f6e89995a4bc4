//! A fake host for native unit tests (every target but `wasm32`, feature `mock`): the
//! [`sys`](crate::sys) wrappers call this instead of the imports, so a policy's code runs unchanged
//! under `cargo test`. One file per concern, as the host's: `packets`, `decide`, `info`, `maps`,
//! `area`; here the state, the test's API and the [`Host`](crate::native::Host) impl.
//!
//! The state is per thread (tests run in parallel). It checks arguments as the ABI says the host does
//! (indexes, ranges, dropped packets, flags, "outside a burst") and returns the same codes. Engines are
//! recorded in [`MockHost::calls`]; of their effects only `macswap` (the MAC swap, also for the
//! `macswap` engine) and `drop` (`rxonly`: the packets are marked dropped) are emulated.
//!
//! ```
//! use wasmdp_sdk::{mock, Burst, Engine};
//! mock::reset();
//! mock::begin_burst(&[&[1u8; 60], &[2u8; 60]]);
//! let burst = Burst::current().unwrap();
//! burst.run_engine(Engine::Drop, 1..2).unwrap();
//! let out = mock::end_burst();
//! assert!(!out[0].dropped && out[1].dropped);
//! ```

use std::cell::RefCell;
use std::string::{String, ToString};
use std::vec::Vec;

use wasmdp_abi::err;

mod area;
mod decide;
mod info;
mod maps;
mod packets;

use area::{apply_area, burst_area, fill_area};
pub use area::{set_area, MockArea};
use decide::{clear_sticky, drop_pkt, macswap, run_engine, send_to, set_offloads, set_sticky};
pub use info::MockContext;
use info::{
    context, counter_add, counter_register, event_emit, event_register, gauge_register, gauge_set, log, now_ns,
    param_get, random,
};
pub use maps::MockMap;
use maps::{
    map_add, map_declare, map_declare_ttl, map_delete, map_lookup, map_lookup_batch, map_next_key, map_update,
    map_update_batch,
};
use packets::{burst_len, pkt_adjust, pkt_copy, pkt_len, pkt_read, pkt_room, pkt_write};

/// One packet of the fake burst, with what the plugin did to it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MockPacket {
    /// The frame bytes.
    pub data: Vec<u8>,
    /// TX offload flags requested with `set_offloads` (OR-ed together).
    pub flags: u64,
    /// Inner VLAN TCI requested.
    pub vlan_tci: u16,
    /// Outer VLAN TCI requested.
    pub vlan_tci_outer: u16,
    /// Dropped with `drop_pkt` or the `drop` engine.
    pub dropped: bool,
    /// Port given to `send_to`.
    pub sent_to: Option<u32>,
    /// Ids of the engines run on this packet, in order.
    pub engines: Vec<u32>,
    /// Bytes that can be prepended (128 by default, as the host's buffers).
    pub headroom: usize,
    /// Bytes that can be appended (to 2048 bytes of buffer by default).
    pub tailroom: usize,
    /// Dropped because a length change did not fit (the host counts it as `headroom`).
    pub no_room: bool,
}

impl MockPacket {
    /// A packet with these bytes and nothing done to it, in a 2048-byte buffer after 128 bytes of
    /// headroom.
    pub fn new(data: &[u8]) -> Self {
        let tailroom = (2048 - 128usize).saturating_sub(data.len());
        MockPacket { data: data.to_vec(), headroom: 128, tailroom, ..Default::default() }
    }
}

/// A sticky decision recorded by `set_sticky`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MockSticky {
    /// Engine id.
    pub engine: u32,
    /// Offload flags.
    pub flags: u64,
    /// Inner VLAN TCI.
    pub vlan_tci: u16,
    /// Outer VLAN TCI.
    pub vlan_tci_outer: u16,
    /// Bursts (-1: until cleared).
    pub bursts: i32,
}

/// A range call, in the order made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Call {
    /// `run_engine(engine, start, count)`.
    RunEngine {
        /// Engine id.
        engine: u32,
        /// First packet.
        start: u32,
        /// Packets.
        count: u32,
    },
    /// `macswap(start, count)`.
    Macswap {
        /// First packet.
        start: u32,
        /// Packets.
        count: u32,
    },
    /// `set_offloads(idx, ...)` (`idx` -1 for all).
    SetOffloads {
        /// Packet index or -1.
        idx: i32,
        /// Flags.
        flags: u64,
    },
}

/// The whole fake host state of this thread.
#[derive(Debug, Clone)]
pub struct MockHost {
    /// Whether a burst is current (calls that need one return `NO_BURST` otherwise).
    pub in_burst: bool,
    /// The current burst.
    pub packets: Vec<MockPacket>,
    /// Number of ports `send_to` accepts (default 2).
    pub ports: u32,
    /// `params:` of the plugin, as text.
    pub params: Vec<(String, String)>,
    /// Registered counters and their values, by id.
    pub counters: Vec<(String, i64)>,
    /// Logged messages with their level.
    pub logs: Vec<(u32, String)>,
    /// The sticky decision in force.
    pub sticky: Option<MockSticky>,
    /// What `now_ns` returns.
    pub now_ns: i64,
    /// The state of what `random` returns: a seeded generator's (0 after [`reset`]; set it to draw
    /// another sequence), so tests repeat.
    pub random_seed: u64,
    /// Range calls made, in order.
    pub calls: Vec<Call>,
    /// The burst area registered (`burst_area`), filled by [`begin_burst`] and carried out by
    /// [`end_burst`].
    pub area: Option<MockArea>,
    /// Maps declared, by id.
    pub maps: Vec<MockMap>,
    /// Gauges and their values, by id.
    pub gauges: Vec<(String, i64)>,
    /// Kinds of event registered (name, record size), by id.
    pub event_kinds: Vec<(String, usize)>,
    /// Events emitted, in order: kind name and bytes.
    pub events: Vec<(String, Vec<u8>)>,
    /// What `context` reports.
    pub context: MockContext,
}

impl Default for MockHost {
    fn default() -> Self {
        MockHost {
            in_burst: false,
            packets: Vec::new(),
            ports: 2,
            params: Vec::new(),
            counters: Vec::new(),
            logs: Vec::new(),
            sticky: None,
            now_ns: 0,
            random_seed: 0,
            calls: Vec::new(),
            area: None,
            maps: Vec::new(),
            gauges: Vec::new(),
            event_kinds: Vec::new(),
            events: Vec::new(),
            context: MockContext::default(),
        }
    }
}

std::thread_local! {
    static HOST: RefCell<MockHost> = RefCell::new(MockHost::default());
}

/// Runs `f` on this thread's fake host.
pub fn with<R>(f: impl FnOnce(&mut MockHost) -> R) -> R {
    HOST.with(|h| f(&mut h.borrow_mut()))
}

/// Resets this thread's fake host (no burst, no params, no counters, no logs) and makes it answer
/// the thread's imports (natively, with no fake host installed, every import fails: `NO_BURST`).
pub fn reset() {
    with(|h| *h = MockHost::default());
    // A zero-sized host: leaking it allocates nothing.
    crate::backend::install_fallback(std::boxed::Box::leak(std::boxed::Box::new(MockImports)));
}

/// The fake host as a [`Host`](crate::native::Host): each import answered by this module's function
/// of the same name.
struct MockImports;

macro_rules! answer_from_mock {
    ($( $(#[doc = $doc:literal])* [$since:literal $when:ident] $konst:ident $name:ident
        ($($arg:ident: $wty:ident $(=> $nty:ty)?),*) -> $ret:tt; )*) => {
        impl crate::backend::Host for MockImports {
            $( fn $name(&mut self, $($arg: wasmdp_abi::native_ty!($wty $(, $nty)?)),*) -> $ret { $name($($arg),*) } )*
        }
    };
}

wasmdp_abi::for_each_import!(answer_from_mock);

/// Sets a `params:` entry.
pub fn set_param(key: &str, value: &str) {
    with(|h| {
        h.params.retain(|(k, _)| k != key);
        h.params.push((key.to_string(), value.to_string()));
    });
}

/// Starts a burst of these frames (and clears the recorded calls); with a burst area registered,
/// fills it as the host does.
pub fn begin_burst(frames: &[&[u8]]) {
    let _ = crate::verdict::take();
    with(|h| {
        h.packets = frames.iter().map(|f| MockPacket::new(f)).collect();
        h.in_burst = true;
        h.calls.clear();
        fill_area(h);
    });
}

/// Ends the burst and returns its packets with what was done to them: with a burst area, its
/// decisions are carried out first, then the engine [`Burst::pass_with`](crate::Burst::pass_with)
/// left for the end of the call, as the host does after `on_burst` returns `Ok`.
pub fn end_burst() -> Vec<MockPacket> {
    with(apply_area);
    if let Some(e) = crate::verdict::take() {
        let n = with(|h| h.packets.len()) as i32;
        run_engine(e as i32, 0, n);
    }
    with(|h| {
        h.in_burst = false;
        core::mem::take(&mut h.packets)
    })
}

/// The value of the counter called `name`.
pub fn counter(name: &str) -> Option<i64> {
    with(|h| h.counters.iter().find(|(n, _)| n == name).map(|&(_, v)| v))
}

/// Messages logged so far, with their level.
pub fn logs() -> Vec<(u32, String)> {
    with(|h| h.logs.clone())
}

impl MockHost {
    fn burst(&mut self) -> Result<&mut Vec<MockPacket>, i32> {
        if self.in_burst {
            Ok(&mut self.packets)
        } else {
            Err(err::NO_BURST)
        }
    }

    fn pkt(&mut self, idx: i32) -> Result<&mut MockPacket, i32> {
        let p = self.burst()?.get_mut(usize::try_from(idx).map_err(|_| err::BAD_INDEX)?).ok_or(err::BAD_INDEX)?;
        if p.dropped || p.sent_to.is_some() {
            return Err(err::GONE);
        }
        Ok(p)
    }

    fn range(&mut self, start: i32, count: i32) -> Result<core::ops::Range<usize>, i32> {
        let n = self.burst()?.len();
        let (Ok(start), Ok(count)) = (usize::try_from(start), usize::try_from(count)) else {
            return Err(err::BAD_INDEX);
        };
        match start.checked_add(count) {
            Some(end) if end <= n => Ok(start..end),
            _ => Err(err::BAD_INDEX),
        }
    }
}

fn rc(r: Result<i32, i32>) -> i32 {
    r.unwrap_or_else(|e| e)
}

/// The events emitted so far (kind name, bytes), in order.
pub fn events() -> Vec<(String, Vec<u8>)> {
    with(|h| h.events.clone())
}

/// The value of gauge `name`.
pub fn gauge(name: &str) -> Option<i64> {
    with(|h| h.gauges.iter().find(|(n, _)| n == name).map(|&(_, v)| v))
}

fn put(b: &mut [u8], at: usize, v: &[u8]) {
    b[at..at + v.len()].copy_from_slice(v);
}

/// A repeatable stream of 64-bit words from `seed` (xorshift64; a seed of 0 gives only zeros), for
/// a policy's tests that build random frames and rules, such as a test that a fast path and the
/// general one agree: the same seed, the same frames, run after run.
pub fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    }
}
