//! A stream: (rx port, rx queue) -> engine -> (tx port, tx queue), with its burst and counters.

use crate::engines::{EngineFn, FwdCtx};
use crate::mbuf::{Burst, Marks, PoolCache};
use crate::offload::{self, TxOffloads};
use crate::ports::{RxQueue, Template, TxQueue, TxRefused};
use crate::stats::{Drops, Flow, StreamCounters, StreamInfo};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Bounded TX retry: after a partial TX, wait `delay` and try again, at most `count` times.
#[derive(Debug, Clone, Copy, Default)]
pub struct Retry {
    /// Attempts after the first.
    pub count: u32,
    /// Wait before each.
    pub delay: Duration,
}

/// Everything a stream is built from.
pub struct StreamParts {
    /// Where it goes.
    pub info: StreamInfo,
    /// The RX queue it owns.
    pub rxq: Box<dyn RxQueue>,
    /// The TX queue it owns.
    pub txq: Box<dyn TxQueue>,
    /// Engine function for the chosen kernel variant.
    pub run: EngineFn,
    /// Whether to receive before the engine.
    pub needs_rx: bool,
    /// Packets per burst.
    pub burst_size: usize,
    /// TX retry.
    pub retry: Retry,
    /// What the TX port does with offload requests.
    pub offloads: offload::Caps,
    /// TX port offloads.
    pub tx: TxOffloads,
    /// TX port MAC.
    pub tx_mac: [u8; 6],
    /// TX port peer MAC.
    pub peer_mac: [u8; 6],
    /// TX port template.
    pub template: Arc<Template>,
    /// Bursts of template frames to send before forwarding (tx_first).
    pub seed_bursts: usize,
    /// The RX port's WebAssembly policy chain, deciding per burst; `run` is then the stand-in of a
    /// link that fails open.
    pub policy: Option<crate::plugin::Chain>,
    /// Packets plugins sent to this stream's TX port (`send_to`), transmitted by this stream.
    pub inject: Option<Arc<crate::ports::Inject>>,
    /// What the `icmpecho` engine answers for (the RX port's `icmpecho:`).
    pub echo: Arc<crate::engines::EchoAddrs>,
    /// The tunnels of the RX and TX ports (the tunnel engines).
    pub tunnels: Arc<crate::engines::Tunnels>,
    /// Whether engines prefetch the second metadata line (`prefetch_flow_meta`).
    pub prefetch_flow: bool,
    /// Live capture of the RX and TX ports (`wasmdp ctl capture`).
    pub tap: crate::capture::StreamTap,
}

/// What one round counted, published to the shared counters once.
#[derive(Default)]
struct Round {
    flow: Flow,
    drops: Drops,
}

/// A stream ready to poll. On cache lines of its own (as the queues, see `ports::RxQueue`): the
/// streams of all workers are built on the main thread, next to each other on the heap, and each
/// is written on every burst by its worker.
#[repr(align(128))]
pub struct Stream {
    p: StreamParts,
    flow: u32,
    burst: Burst,
    scratch: Burst,
    counters: Arc<StreamCounters>,
    /// The dataplane's stop flag: seeding and TX retries end early when it is set.
    stop: Arc<AtomicBool>,
    /// What the TX queue refused in the round being sent.
    refused: TxRefused,
    /// The cache of the stream's own pool, once its plugin asked for direct packet access
    /// (`crate::plugin::DirectSlot`): every packet of the stream is then in that pool. Boxed: each
    /// round takes it out of the stream and puts it back (the round borrows the stream), which was a
    /// copy of the whole cache each way.
    own: Option<Box<PoolCache>>,
}

impl Stream {
    /// Builds a stream; its counters start at zero (its policy's links count into their own).
    pub fn new(p: StreamParts) -> Stream {
        Stream {
            p,
            flow: 0,
            burst: Burst::new(),
            scratch: Burst::new(),
            counters: Arc::new(StreamCounters::default()),
            stop: Arc::default(),
            refused: TxRefused::default(),
            own: None,
        }
        .adopting_direct()
    }

    fn adopting_direct(mut self) -> Stream {
        self.adopt_direct();
        self
    }

    /// Takes the stream's own pool when its policy made one (direct packet access); kept from then
    /// on, whatever policy runs later (between bursts: the stream holds no packet now).
    fn adopt_direct(&mut self) {
        let Some(pool) = self.p.policy.as_ref().and_then(|p| p.direct_pool()) else { return };
        if self.own.as_ref().is_none_or(|c| !Arc::ptr_eq(c.pool(), pool)) {
            self.own = Some(Box::new(pool.cache()));
        }
    }

    /// The flag that stops the dataplane: a stream checks it between retries and seeded bursts.
    pub fn set_stop(&mut self, stop: Arc<AtomicBool>) {
        self.stop = stop;
    }

    /// Switches to new live settings between two bursts (nothing is in the stream then); returns the
    /// policy runners it no longer runs, to be dropped off the hot path.
    pub fn apply(&mut self, u: crate::reload::StreamUpdate) -> Vec<crate::plugin::Runner> {
        self.p.run = u.run;
        self.p.needs_rx = u.needs_rx;
        self.p.burst_size = u.burst_size;
        self.p.tx = u.tx;
        self.p.info.engine = u.engine;
        let Some(plan) = u.policy else { return Vec::new() };
        let (chain, gone) = crate::plugin::Chain::rebuild(self.p.policy.take(), plan);
        self.p.policy = chain;
        self.adopt_direct();
        gone
    }

    /// Where it goes.
    pub fn info(&self) -> &StreamInfo {
        &self.p.info
    }

    /// Its counters, shared with the display.
    pub fn counters(&self) -> Arc<StreamCounters> {
        self.counters.clone()
    }

    /// One round: receive a burst, run the engine (or the policy), take what plugins of other
    /// streams sent to this TX port, transmit. Returns the packets handled. `cache` is the lcore's;
    /// a stream with its own pool (direct packet access) allocates and frees there instead.
    #[inline]
    pub fn poll(&mut self, cache: &mut PoolCache) -> usize {
        match self.own.take() {
            None => self.round_any(cache, None),
            Some(mut own) => {
                let n = self.round_any(&mut own, Some(cache));
                self.own = Some(own);
                n
            }
        }
    }

    /// A round, tapped or not: whether a capture or trace runs on the stream's ports is looked at
    /// once per round (one relaxed load), and a round without one is compiled without any of
    /// their work (`TAPPED`), so that the taps cost the forwarding loop nothing else.
    #[inline(always)]
    fn round_any(&mut self, cache: &mut PoolCache, outside: Option<&mut PoolCache>) -> usize {
        if self.p.tap.active() {
            self.round::<true>(cache, outside)
        } else {
            self.round::<false>(cache, outside)
        }
    }

    /// [`Stream::poll`] with the stream's cache, and the lcore's as `outside` when they differ.
    #[inline(always)]
    fn round<const TAPPED: bool>(&mut self, cache: &mut PoolCache, mut outside: Option<&mut PoolCache>) -> usize {
        let mut round = Round::default();
        if self.p.needs_rx {
            let rx = self.p.rxq.rx_burst(cache, &mut self.burst, self.p.burst_size);
            round.flow.rx_nombuf = rx.nombuf as u64;
            round.flow.rx_packets = rx.packets as u64;
            round.flow.rx_bytes = rx.bytes;
            if rx.packets == 0 {
                if let Some(policy) = &mut self.p.policy {
                    policy.idle();
                }
                return self.flush_injected::<TAPPED>(cache, outside, round);
            }
            if let Some(out) = outside.as_deref_mut().filter(|_| self.p.rxq.foreign()) {
                round.flow.rx_nombuf += adopt_foreign(&mut self.burst, cache, out);
            }
        }
        if TAPPED {
            self.p.tap.received(&self.burst, self.p.info.engine);
        }
        let mut ctx = FwdCtx {
            cache,
            tx: self.p.tx,
            tx_mac: self.p.tx_mac,
            peer_mac: self.p.peer_mac,
            template: &self.p.template,
            flow: &mut self.flow,
            burst_size: self.p.burst_size,
            drops: Drops::default(),
            generated: 0,
            alloc_failed: 0,
            redirected_out: 0,
            echo: &self.p.echo,
            scratch: &mut self.scratch,
            tunnels: &self.p.tunnels,
            prefetch_flow: self.p.prefetch_flow,
            tunnel: Default::default(),
            outside: outside.as_deref_mut(),
        };
        match &mut self.p.policy {
            // A traced round: each link's step recorded (out of line).
            Some(policy) if TAPPED && self.p.tap.following().is_some() => {
                policy.on_burst_traced(&mut ctx, &mut self.burst, self.p.run, &mut self.p.tap)
            }
            Some(policy) => policy.on_burst(&mut ctx, &mut self.burst, self.p.run),
            None => (self.p.run)(&mut ctx, &mut self.burst),
        }
        if TAPPED {
            // What a trace's packets ask of the TX port, before software offloads clear it.
            self.p.tap.offloading(&self.burst);
        }
        round.drops = ctx.drops;
        round.flow.generated = ctx.generated;
        round.flow.rx_nombuf += ctx.alloc_failed;
        round.flow.redirected_out = ctx.redirected_out;
        round.flow.encapsulated = ctx.tunnel.encapsulated;
        round.flow.decapsulated = ctx.tunnel.decapsulated;
        round.flow.tunnel_passed = ctx.tunnel.passed;
        round.flow.redirected_in = self.take_injected(cache, outside.as_deref_mut(), &mut round);
        let n = self.burst.len();
        self.send(cache, outside, &mut round, TAPPED);
        n
    }

    /// Transmits what other streams' plugins sent to this TX port, when nothing was received.
    #[inline]
    fn flush_injected<const TAPPED: bool>(
        &mut self,
        cache: &mut PoolCache,
        mut outside: Option<&mut PoolCache>,
        mut round: Round,
    ) -> usize {
        round.flow.redirected_in = self.take_injected(cache, outside.as_deref_mut(), &mut round);
        let n = self.burst.len();
        if n != 0 {
            self.send(cache, outside, &mut round, TAPPED);
        } else {
            self.p.txq.flush();
            if round.flow.rx_nombuf != 0 {
                self.counters.add(&round.flow);
            }
        }
        n
    }

    /// Appends packets waiting in this TX port's inject queue (a plugin's `send_to`); with
    /// `outside` (the stream has its own pool), each is copied into the stream's pool, as they come
    /// from other pools (one that cannot be is counted `rx_nombuf`).
    /// The test for an empty queue (every round of most streams) in line, the taking out of line:
    /// left to the inliner, the whole came out of line in some builds, a call a round.
    #[inline(always)]
    fn take_injected(&mut self, cache: &mut PoolCache, outside: Option<&mut PoolCache>, round: &mut Round) -> u64 {
        match &self.p.inject {
            Some(q) if !q.is_empty() => self.take_queued(cache, outside, round),
            _ => 0,
        }
    }

    #[inline(never)]
    fn take_queued(&mut self, cache: &mut PoolCache, mut outside: Option<&mut PoolCache>, round: &mut Round) -> u64 {
        let Some(q) = &self.p.inject else { return 0 };
        let mut n = 0;
        // Whole batches only, so that none is split (the rest waits for the next round).
        while self.burst.len() + crate::ports::INJECT_BATCH <= crate::mbuf::MAX_BURST {
            let Some(batch) = q.pop() else { break };
            n += batch.len() as u64;
            for p in batch {
                match outside.as_deref_mut() {
                    None => self.burst.push(p),
                    Some(out) => match cache.adopt(p, out) {
                        Some(p) => self.burst.push(p),
                        None => round.flow.rx_nombuf += 1,
                    },
                }
            }
        }
        n
    }

    /// Offloads, transmit with retry, count the round. A stream with its own pool whose TX queue
    /// hands packets to another thread (a `ring` port) first copies them out of its pool.
    // One copy, out of line, with `prepare_tx` and `transmit` inside: letting the compiler choose
    // per caller (a copy per `TAPPED`) moved `transmit` out of line or changed its loops, which
    // cost the forwarding loop more than the taps' two tests here.
    #[inline(never)]
    fn send(&mut self, cache: &mut PoolCache, outside: Option<&mut PoolCache>, round: &mut Round, tapped: bool) {
        let cache = match outside {
            Some(out) if self.p.txq.crosses_threads() => {
                round.flow.rx_nombuf += adopt_foreign_all(&mut self.burst, out, cache);
                out
            }
            _ => cache,
        };
        let bytes = self.prepare_tx(cache, &mut round.drops);
        // The taps' work out of line, around the one call of `transmit` (a second call site
        // would keep it from being inlined).
        if tapped {
            self.capture_sending(round);
        }
        self.transmit(cache, bytes, round);
        if tapped {
            self.capture_sent(round);
        }
        self.counters.add(&round.flow);
        self.counters.drops(round.drops);
    }

    /// Counts the bytes to send and, on software ports, carries out TX offloads, dropping (and
    /// counting) packets where that is impossible. One pass over the burst.
    #[inline(always)]
    fn prepare_tx(&mut self, cache: &mut PoolCache, drops: &mut Drops) -> u64 {
        let (bytes, refused) = prepare(&mut self.burst, self.p.offloads, cache);
        drops.offload += refused;
        bytes
    }

    /// A capture of the TX port copies each packet before the transmit (only while one runs).
    #[cold]
    #[inline(never)]
    fn capture_sending(&mut self, round: &Round) {
        self.p.tap.sending(&self.burst, &round.drops);
    }

    /// ... and publishes the copies with their fate after it.
    #[cold]
    #[inline(never)]
    fn capture_sent(&mut self, round: &Round) {
        self.p.tap.transmitted(round.drops.tx_full);
    }

    /// Transmits the burst with bounded retry; frees and counts (`tx_full`) what is left.
    #[inline(always)]
    fn transmit(&mut self, cache: &mut PoolCache, bytes: u64, round: &mut Round) {
        if self.burst.is_empty() {
            return;
        }
        let mut sent = self.p.txq.tx_burst(cache, &mut self.burst, &mut self.refused);
        let mut tries = 0;
        while !self.burst.is_empty() && tries < self.p.retry.count && !self.stop.load(Relaxed) {
            spin_for(self.p.retry.delay);
            sent += self.p.txq.tx_burst(cache, &mut self.burst, &mut self.refused);
            tries += 1;
        }
        let mut unsent_bytes = 0;
        // Kept in the stream and zero but for a refusal: no reset per burst.
        if self.refused.oversize | self.refused.error != 0 {
            unsent_bytes = self.take_refused(round);
        }
        if !self.burst.is_empty() {
            round.drops.tx_full += self.burst.len() as u64;
            unsent_bytes = self.burst.iter().map(|p| p.len() as u64).sum();
            cache.free_burst(&mut self.burst);
        }
        round.flow.tx_packets += sent as u64;
        round.flow.tx_bytes += bytes - unsent_bytes;
    }

    /// Counts what the TX queue refused, and zeroes it; returns its bytes (out of line: it is
    /// rare).
    #[cold]
    #[inline(never)]
    fn take_refused(&mut self, round: &mut Round) -> u64 {
        let r = std::mem::take(&mut self.refused);
        round.drops.tx_oversize += r.oversize;
        round.drops.tx_error += r.error;
        r.bytes
    }

    /// Allocates the stream's bursts (and its own pool's cache's box) again, from the thread that
    /// calls it: the worker's, at its start. Built on the main thread, every stream's burst arrays
    /// lay next to each other on its heap, so two workers could write one cache line; a thread's
    /// allocations come from its own heap arena. Empty bursts only (nothing is in the stream before
    /// it polls).
    pub fn rehome(&mut self) {
        debug_assert!(self.burst.is_empty() && self.scratch.is_empty());
        (self.burst, self.scratch) = (Burst::new(), Burst::new());
        self.own = self.own.take().map(|c| Box::new(*c));
    }

    /// Sends the tx_first bursts: template frames of the TX port, counted as generated.
    pub fn seed(&mut self, cache: &mut PoolCache) {
        for _ in 0..self.p.seed_bursts {
            if self.stop.load(Relaxed) {
                return;
            }
            let mut round = Round::default();
            if !cache.alloc_bulk(&mut self.burst, self.p.burst_size) {
                round.flow.rx_nombuf = self.p.burst_size as u64;
                self.counters.add(&round.flow);
                continue;
            }
            for p in self.burst.iter_mut() {
                self.p.template.fill(p, &mut self.flow);
            }
            round.flow.generated = self.burst.len() as u64;
            self.send(cache, None, &mut round, false);
        }
    }

    /// Frees what waits in the RX queue (at stop); returns how many packets that was.
    pub fn drain(&mut self, cache: &mut PoolCache) -> u64 {
        let cache = self.own.as_deref_mut().unwrap_or(cache);
        cache.free_burst(&mut self.burst);
        self.p.txq.flush();
        self.p.rxq.drain(cache)
    }
}

/// Copies into `cache`'s pool each packet of `burst` that is not in it (freeing the original to
/// `from`); returns how many were lost for want of a buffer. A per-packet address test: only
/// streams with their own pool make it.
fn adopt_foreign(burst: &mut Burst, cache: &mut PoolCache, from: &mut PoolCache) -> u64 {
    let pool = cache.pool();
    if burst.iter().all(|p| pool.holds(p)) {
        return 0;
    }
    adopt_foreign_all(burst, cache, from)
}

/// Every packet of `burst` not in `cache`'s pool copied into it, the original freed to `from`;
/// how many were lost for want of a buffer. Not cold: a stream with its own pool that transmits on
/// a `ring` port copies every burst out through it.
fn adopt_foreign_all(burst: &mut Burst, cache: &mut PoolCache, from: &mut PoolCache) -> u64 {
    let mut lost = 0;
    let mut i = 0;
    while i < burst.len() {
        if cache.pool().holds(&burst[i]) {
            i += 1;
            continue;
        }
        let p = burst.remove(i);
        match cache.adopt(p, from) {
            Some(q) => {
                burst.insert(i, q);
                i += 1;
            }
            None => lost += 1,
        }
    }
    lost
}

/// Busy-waits: a retry delay of microseconds is shorter than any sleep the OS could give.
fn spin_for(d: Duration) {
    if d.is_zero() {
        return;
    }
    let until = Instant::now() + d;
    while Instant::now() < until {
        std::hint::spin_loop();
    }
}

/// [`Stream::prepare_tx`]'s pass: the bytes of the packets to send and, on a software port, their
/// TX offloads carried out; the packets whose offloads cannot be are removed (the others keep their
/// order), freed and counted. Returns the bytes and how many were removed.
#[inline(always)]
fn prepare(burst: &mut Burst, caps: offload::Caps, cache: &mut PoolCache) -> (u64, u64) {
    if !caps.software {
        return (burst.iter().map(|p| p.len() as u64).sum(), 0);
    }
    // The refused packets marked, and removed after the pass: the pass itself is then a loop over a
    // slice, with the port's capabilities and the running sum in registers rather than reloaded
    // around a removal that almost never happens.
    let (mut bytes, mut refused, mut n) = (0, Marks::default(), 0);
    for (i, p) in burst.iter_mut().enumerate() {
        if offload::apply_sw(p, caps).is_err() {
            refused.set(i);
            n += 1;
        } else {
            bytes += p.len() as u64;
        }
    }
    if n != 0 {
        burst.remove_marked(&refused, |p| cache.free(p));
    }
    (bytes, n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mbuf::{flags, Pool, PoolConfig};

    #[test]
    fn packets_whose_offloads_cannot_be_done_are_removed_counted_and_the_rest_keep_order_and_bytes() {
        let pool = Pool::new(PoolConfig { size: 16, cache_size: 4, ..Default::default() }).unwrap();
        let mut cache = pool.cache();
        let mut burst = Burst::new();
        for len in 20..28 {
            let mut p = cache.alloc().unwrap();
            p.copy_from(&vec![len as u8; len]).unwrap();
            if len == 21 || len == 24 || len == 27 {
                // MACsec asked of a port that cannot: refused.
                p.meta_mut().set_ol_flags(flags::TX_MACSEC);
            }
            burst.push(p);
        }
        let no_macsec = offload::Caps { software: true, macsec: false };
        let (bytes, refused) = prepare(&mut burst, no_macsec, &mut cache);
        let lens: Vec<usize> = burst.iter().map(|p| p.len()).collect();
        assert_eq!((lens, bytes, refused), (vec![20, 22, 23, 25, 26], 116, 3));
        assert!(burst.iter().all(|p| p.data().iter().all(|&b| b as usize == p.len())), "bytes kept");
        // A port that does no offloads in software sends them all.
        let hardware = offload::Caps { software: false, macsec: false };
        assert_eq!(prepare(&mut burst, hardware, &mut cache), (116, 0));
        cache.free_burst(&mut burst);
        drop(cache);
        assert_eq!(pool.available(), 16, "the refused packets went back to the pool");
    }
}
