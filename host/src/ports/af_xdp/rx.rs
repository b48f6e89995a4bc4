//! RX. With the pool as the UMEM ([`super::pooled`]), a descriptor's buffer becomes the packet
//! once its address is checked against the buffers this queue lent, and a fresh pool buffer takes
//! its place on the fill ring; buffers the pool could not give at once are lent at a later call.
//! With a UMEM of the queue's own, descriptors from the RX ring are copied into pool buffers and
//! their frames go straight back on the fill ring, in the same burst. The RX half of the UMEM
//! (ring_size frames) circulates between the two rings of ring_size slots, so the fill ring always
//! has room for what RX gave.
//!
//! Every descriptor is checked against the UMEM before it is read: address and length must lie in
//! one frame. With multi-buffer frames (`XDP_USE_SG`), a packet is the run of descriptors up to one
//! without `XDP_PKT_CONTD`, put together in one pool buffer (as long as `pool.data_room` allows:
//! else dropped whole, counted `rx_oversize`); a run cut by the end of what the ring holds is read
//! again whole at the next call. The socket's drop counters (XDP_STATISTICS, cumulative) are read every 100 ms and at
//! stop into `rx_missed` / `rx_ring_full`.

use super::pooled::{Lent, PoolUmem};
use super::ring::Ring;
use super::xsk::{self, Xsk};
use crate::mbuf::{Burst, Pkt, PoolCache};
use crate::ports::counted::{StatsClock, Unfit};
use crate::ports::{Rx, RxQueue};
use crate::stats::PortStats;
use std::os::fd::AsRawFd;
use std::sync::Arc;

/// Most descriptors of one packet: the kernel's MAX_SKB_FRAGS (17) plus its head.
pub(super) const MAX_FRAGS: usize = 18;

/// One queue's RX side. Its rings are unmapped before the socket may close (fields drop in
/// order, `sock` last).
#[repr(align(128))] // lines of its own: see `RxQueue`
pub(super) struct XdpRx {
    rx: Ring<libc::xdp_desc>,
    fill: Ring<u64>,
    busy_poll: bool,
    port: u16,
    queue: u16,
    stats: Arc<PortStats>,
    clock: StatsClock,
    unfit: Unfit,
    /// The socket's cumulative drops and RX-ring-full counts, as last added to the port's.
    seen: (u64, u64),
    /// Complete TCP/UDP checksums a local sender left partial (`af_xdp.complete_checksums`).
    complete_checksums: bool,
    /// With the pool as the UMEM: the buffers lent to the kernel.
    pooled: Option<RxPool>,
    /// Anything besides this queue alive that holds the port's XDP program attached.
    _keep: Arc<dyn Send + Sync>,
    sock: Arc<Xsk>,
}

/// RX state when the pool is the UMEM.
struct RxPool {
    umem: Arc<PoolUmem>,
    lent: Lent,
    /// Fill-ring slots without a buffer: the pool had none when one was needed.
    short: u32,
    /// The metadata of a received packet, but for its lengths (kept in memory: copied from there
    /// it is a few vector moves per packet).
    received: crate::mbuf::Meta,
    /// Buffers for the fill ring when the stream's cache is another pool's (a stream with its own
    /// pool for direct packet access; its packets are copied in by the stream: `foreign`).
    spare: crate::mbuf::PoolCache,
}

/// What an `XdpRx` is made of.
pub(super) struct RxParts {
    pub sock: Arc<Xsk>,
    pub rx: Ring<libc::xdp_desc>,
    pub fill: Ring<u64>,
    pub busy_poll: bool,
    pub port: u16,
    pub queue: u16,
    pub stats: Arc<PortStats>,
    pub keep: Arc<dyn Send + Sync>,
    pub complete_checksums: bool,
}

impl XdpRx {
    /// The RX side, with every frame of the RX half of the UMEM given to the kernel, or with the
    /// pool as the UMEM, `frames` pool buffers.
    pub(super) fn new(p: RxParts, frames: u32) -> XdpRx {
        let mut fill = p.fill;
        let pooled = p.sock.pooled.clone().map(|umem| {
            let mut rp = RxPool {
                lent: Lent::new(umem.geo()),
                short: fill.free(frames),
                received: umem.received_meta(p.port, p.queue),
                spare: umem.pool().cache(),
                umem,
            };
            rp.top_up(&mut fill, None);
            rp
        });
        if pooled.is_none() {
            let frame = p.sock.umem.frame as u64;
            let n = fill.free(frames);
            for i in 0..n {
                fill.put(i, u64::from(i) * frame);
            }
            fill.submit(n);
        }
        XdpRx {
            pooled,
            unfit: Unfit::new("af_xdp", p.port, p.queue, p.stats.clone()),
            sock: p.sock,
            rx: p.rx,
            fill,
            busy_poll: p.busy_poll,
            port: p.port,
            queue: p.queue,
            stats: p.stats,
            clock: StatsClock::new(),
            seen: (0, 0),
            complete_checksums: p.complete_checksums,
            _keep: p.keep,
        }
    }

    /// Asks the kernel to look at the fill ring (or, busy polling, to run the driver's NAPI here).
    #[cold]
    fn kick(&self) {
        // SAFETY: a zero-length receive on our socket with no buffers; it only drives the kernel.
        unsafe {
            libc::recvfrom(
                self.sock.fd.as_raw_fd(),
                std::ptr::null_mut(),
                0,
                libc::MSG_DONTWAIT,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        };
    }

    /// Adds what the socket dropped since the last read to the port's counters.
    fn read_stats(&mut self, now: bool) {
        if !self.clock.due(now) {
            return;
        }
        if let Ok(st) = xsk::statistics(self.sock.fd.as_raw_fd()) {
            // rx_dropped covers frames the kernel had no fill-ring frame for or that were too big
            // for a frame; a full RX ring is counted apart.
            let (dropped, full) = (st.rx_dropped + st.rx_ring_full, st.rx_ring_full);
            PortStats::add(&self.stats.missed, dropped.saturating_sub(self.seen.0));
            PortStats::add(&self.stats.ring_full, full.saturating_sub(self.seen.1));
            self.seen = (dropped.max(self.seen.0), full.max(self.seen.1));
        }
    }
}

/// What [`XdpRx::gather`] found.
enum Gathered {
    /// A whole packet's descriptors, consumed up to `next`, their frames put on the fill ring up
    /// to `refill`; the packet, unless it was refused (counted).
    Whole { next: u32, refill: u32, pkt: Option<crate::mbuf::Pkt> },
    /// Its last descriptor is not on the ring yet: read it whole at a later call.
    NotYet,
    /// No pool buffer for it.
    NoBuffer,
}

impl XdpRx {
    /// Marks a received packet as this queue's, and completes its checksum if asked.
    #[inline(always)]
    fn finish(&self, p: &mut crate::mbuf::Pkt) {
        if self.complete_checksums {
            finish_checksum(&self.stats, p);
        }
        p.meta_mut().set_input(self.port, self.queue);
    }

    /// Puts together the packet whose descriptors start at ring position `at` (multi-buffer: a run
    /// up to one without `XDP_PKT_CONTD`, at most [`MAX_FRAGS`]) in one pool buffer; their frames
    /// go on the fill ring from slot `refill`. A descriptor outside the UMEM, a run longer than
    /// the kernel makes or a packet over `pool.data_room` drops the packet whole (counted).
    #[cold]
    #[inline(never)]
    fn gather(&mut self, cache: &mut PoolCache, at: u32, refill: u32) -> Gathered {
        let avail = self.fill.free(self.rx.ready(at + MAX_FRAGS as u32));
        let frame = self.sock.umem.frame as u64;
        let Some(mut p) = cache.alloc() else { return Gathered::NoBuffer };
        let (mut i, mut r, mut why) = (at, refill, None);
        loop {
            if i == avail || i - at == MAX_FRAGS as u32 {
                if i - at == MAX_FRAGS as u32 {
                    // Longer than the kernel makes: not a packet; consumed so the ring moves on.
                    why.get_or_insert("a run of descriptors longer than a packet has");
                    break;
                }
                cache.free(p);
                return Gathered::NotYet;
            }
            let d = self.rx.get(i);
            i += 1;
            match self.sock.umem.bytes(d.addr, d.len as usize) {
                None => {
                    why.get_or_insert("a descriptor outside the UMEM's RX frames");
                }
                Some(bytes) => {
                    if why.is_none() {
                        let fits = if i - 1 == at {
                            p.copy_from(bytes).is_ok()
                        } else {
                            p.append(bytes.len()).map(|room| room.copy_from_slice(bytes)).is_ok()
                        };
                        if !fits {
                            why = Some("larger than a buffer: raise pool.data_room");
                        }
                    }
                    self.fill.put(r, d.addr - d.addr % frame);
                    r += 1;
                }
            }
            if d.options & libc::XDP_PKT_CONTD == 0 {
                break;
            }
        }
        let pkt = match why {
            Some(why) => {
                self.unfit.count(why, p.len() as u32);
                cache.free(p);
                None
            }
            None => {
                self.finish(&mut p);
                Some(p)
            }
        };
        Gathered::Whole { next: i, refill: r, pkt }
    }
}

/// Completes the packet's TCP or UDP checksum when the sender's kernel left it partial (counted
/// as `rx_csum_completed`).
#[inline(always)]
fn finish_checksum(stats: &PortStats, p: &mut crate::mbuf::Pkt) {
    let frame = p.data_mut();
    let h = crate::wire::parse(frame);
    if crate::wire::finish_partial_l4(frame, &h) == crate::wire::L4Checksum::Completed {
        PortStats::add(&stats.csum_completed, 1);
    }
}

impl RxPool {
    /// Lends buffers from `cache` (or the spare cache) to the fill-ring slots that have none, as
    /// many as it gives.
    #[inline(always)]
    fn top_up(&mut self, fill: &mut Ring<u64>, cache: Option<&mut PoolCache>) {
        let cache = cache.unwrap_or(&mut self.spare);
        let g = self.umem.geo();
        let mut lent = self.lent.slots();
        let n = fill.free(self.short);
        let (to_end, from_start) = fill.free_runs(n);
        // Written in ring order, without a gap: up to the first buffer the cache could not give.
        let mut put = 0;
        'runs: for run in [to_end, from_start] {
            for chunk in run.chunks_mut(crate::mbuf::MAX_BURST) {
                // The buffers lent are the kernel's until RX takes them back by address.
                let k = cache.lend_bulk(chunk.len(), |bufs| lend_each(g, &mut lent, bufs, chunk));
                put += k;
                if k < chunk.len() {
                    break 'runs;
                }
            }
        }
        fill.submit(put as u32);
        self.short -= put as u32;
    }
}

/// Lends the buffers `from` to the fill-ring slots `to`, in order, as many as both hold: how many.
/// Always this pool's buffers (the cache is checked); were one not, it and the rest are not lent.
/// Out of line like `receive`, for the same reason.
#[inline(never)]
fn lend_each(
    g: &super::pooled::Geometry,
    lent: &mut super::pooled::LentSlots<'_>,
    from: &[Pkt],
    to: &mut [u64],
) -> usize {
    let mut k = 0;
    for (b, slot) in from.iter().zip(to) {
        let Some(hdr) = g.header(b) else { break };
        *slot = lent.lend(hdr);
        k += 1;
    }
    k
}

impl XdpRx {
    /// [`RxQueue::rx_burst`] with the pool as the UMEM: no copy. Two loops: the descriptors
    /// turned into packets, then as many fresh buffers lent to the fill ring.
    #[inline(always)]
    fn rx_pooled(&mut self, given: &mut PoolCache, out: &mut Burst, ready: u32) -> Rx {
        let Some(rp) = self.pooled.as_mut() else { return Rx::default() };
        let g = rp.umem.geo();
        let before = out.len();
        // No more than the burst holds: the rest stay on the ring for the next call.
        let ready = ready.min(crate::mbuf::MAX_BURST.saturating_sub(before) as u32);
        // The loop twice, with and without the checksum pass, so that neither tests it a packet;
        // over each run of descriptors (up to the ring's end, and from its start).
        let (meta, mut lent) = (&rp.received, rp.lent.slots());
        let mut bytes = 0;
        let (to_end, from_start) = self.rx.ready_runs(ready);
        for run in [to_end, from_start] {
            if run.is_empty() {
                continue;
            }
            bytes += if self.complete_checksums {
                receive::<true>(g, &mut lent, meta, run, out, &mut self.unfit, &self.stats)
            } else {
                receive::<false>(g, &mut lent, meta, run, out, &mut self.unfit, &self.stats)
            };
        }
        let packets = out.len() - before;
        self.rx.release(ready);
        // Each descriptor read freed the fill slot its buffer came from.
        rp.short += ready;
        let same = Arc::ptr_eq(given.pool(), rp.umem.pool());
        rp.top_up(&mut self.fill, same.then_some(given));
        Rx { packets, bytes, nombuf: 0 }
    }
}

/// The descriptors of `run` (as many as `out` has room for) turned into packets appended to
/// `out`, each checked against the buffers `lent` (one that is not is counted in `unfit` and
/// skipped); `CSUM`: complete partial checksums. Returns the bytes received.
///
/// A function of its own, over a slice, with nothing live in its loop but what the loop uses, so
/// that all of that stays in registers.
#[inline(never)]
fn receive<const CSUM: bool>(
    g: &super::pooled::Geometry,
    lent: &mut super::pooled::LentSlots<'_>,
    meta: &crate::mbuf::Meta,
    run: &[libc::xdp_desc],
    out: &mut Burst,
    unfit: &mut Unfit,
    stats: &PortStats,
) -> u64 {
    let data_room = g.data_room();
    let mut bytes = 0u64;
    out.extend_some(run, |d| {
        let taken = if d.len <= data_room { lent.take(d.addr) } else { None };
        let Some(fill) = taken else {
            // Not a buffer this queue lent, not where its data starts, or longer than its data
            // room: nothing is read through it, nor is it lent again.
            unfit.count("a descriptor that is not a buffer this queue lent", d.len);
            return None;
        };
        // SAFETY: the buffer at fill address `fill` was lent by this queue's fill ring (its mark,
        // now cleared, said so) and the kernel returned it on this queue's RX ring; the frame's
        // length is within the data room (checked).
        let mut p = unsafe { g.received(fill, d.len, meta) };
        if CSUM {
            finish_checksum(stats, &mut p);
        }
        bytes += u64::from(d.len);
        Some(p)
    });
    bytes
}

impl RxQueue for XdpRx {
    /// With the pool as the UMEM, packets are the pool's buffers, not the given cache's.
    fn foreign(&self) -> bool {
        self.pooled.is_some()
    }

    fn rx_burst(&mut self, cache: &mut PoolCache, out: &mut Burst, max: usize) -> Rx {
        self.read_stats(false);
        let ready = self.rx.ready(max as u32);
        if ready == 0 {
            if let Some(rp) = self.pooled.as_mut().filter(|rp| rp.short != 0) {
                let same = Arc::ptr_eq(cache.pool(), rp.umem.pool());
                rp.top_up(&mut self.fill, same.then_some(cache));
            }
            if self.busy_poll || self.fill.needs_wakeup() {
                self.kick();
            }
            return Rx::default();
        }
        if self.pooled.is_some() {
            return self.rx_pooled(cache, out, ready);
        }
        // Always `ready` by construction (see the module docs); min() keeps it true regardless.
        let n = self.fill.free(ready);
        let frame = self.sock.umem.frame as u64;
        let mut rx = Rx::default();
        let (mut done, mut refill) = (0, 0);
        while done < n {
            let d = self.rx.get(done);
            if d.options & libc::XDP_PKT_CONTD != 0 {
                // The first of several descriptors (multi-buffer): out of line, off the common path.
                match self.gather(cache, done, refill) {
                    Gathered::Whole { next, refill: r, pkt } => {
                        (done, refill) = (next, r);
                        if let Some(p) = pkt {
                            rx.packets += 1;
                            rx.bytes += p.len() as u64;
                            out.push(p);
                        }
                        continue;
                    }
                    Gathered::NotYet => break,
                    Gathered::NoBuffer => {
                        rx.nombuf += 1;
                        break;
                    }
                }
            }
            match self.sock.umem.bytes(d.addr, d.len as usize) {
                None => {
                    // Not a frame of the RX half: not ours to read, nor to give to the fill ring.
                    self.unfit.count("a descriptor outside the UMEM's RX frames", d.len);
                    done += 1;
                    continue;
                }
                Some(bytes) => {
                    let Some(mut p) = cache.alloc() else {
                        rx.nombuf += 1;
                        break;
                    };
                    if p.copy_from(bytes).is_err() {
                        cache.free(p);
                        self.unfit.count("larger than a buffer: raise pool.data_room", d.len);
                    } else {
                        self.finish(&mut p);
                        rx.packets += 1;
                        rx.bytes += u64::from(d.len);
                        out.push(p);
                    }
                }
            }
            self.fill.put(refill, d.addr - d.addr % frame);
            refill += 1;
            done += 1;
        }
        self.rx.release(done);
        self.fill.submit(refill);
        PortStats::add(&self.stats.umem_copies, rx.packets as u64);
        rx
    }

    /// At stop: the frames still in the RX ring (received by the kernel, never by us) are given
    /// back and counted in flight; the socket's drop counters are read a last time.
    fn drain(&mut self, _cache: &mut PoolCache) -> u64 {
        let mut n = 0u64;
        if self.pooled.is_some() {
            // Their buffers stay lent (marked): they go back to the pool when the socket closes.
            loop {
                let ready = self.rx.ready(u32::MAX);
                if ready == 0 {
                    break;
                }
                self.rx.release(ready);
                n += u64::from(ready);
            }
            self.read_stats(true);
            return n;
        }
        loop {
            let ready = self.fill.free(self.rx.ready(u32::MAX));
            if ready == 0 {
                break;
            }
            let frame = self.sock.umem.frame as u64;
            let mut refill = 0;
            for i in 0..ready {
                let d = self.rx.get(i);
                if self.sock.umem.bytes(d.addr, 0).is_some() {
                    self.fill.put(refill, d.addr - d.addr % frame);
                    refill += 1;
                }
            }
            self.rx.release(ready);
            self.fill.submit(refill);
            n += u64::from(ready);
        }
        self.read_stats(true);
        n
    }
}

impl Drop for XdpRx {
    /// Buffers still lent (on the fill or RX ring) are parked with the socket, to go back to the
    /// pool once it is closed.
    fn drop(&mut self) {
        if let Some(rp) = &mut self.pooled {
            self.sock.park(rp.lent.drain());
        }
    }
}
