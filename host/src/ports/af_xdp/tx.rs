//! TX. With the pool as the UMEM ([`super::pooled`]), a packet of the pool is posted where its
//! data lies and its buffer kept until the kernel completes it (then freed to the pool); a packet
//! of another pool (a stream's own, for direct packet access) is copied into a pool buffer first
//! (counted `umem_copies`). With a UMEM of the queue's own, each packet is copied into a frame of
//! the TX half of the UMEM and posted on the TX ring; frames come back on the completion ring once
//! the kernel sent them (in copy mode, during the wake-up call). A burst first takes back what
//! completed, then posts as many packets as there are free frames and ring slots; the rest stays
//! at the front of the burst for the stream's retry.
//!
//! Nothing posted is left for "the next packet" to push out: the kernel is woken (a zero-length
//! sendto) while the TX ring says it needs it and frames are still on it, until it has taken them
//! all or takes no more (in copy mode each call sends at most 32 frames, and stops at the first frame
//! the device refuses). A packet the port can never send is dropped before it is posted, counted
//! `tx_oversize`: empty (the kernel would skip it without completing it, and the frame would never
//! come back), over the interface's MTU (what the device would drop after the kernel took it,
//! holding up the frames behind it) or over a UMEM frame (without multi-buffer; with it, over the
//! 17 frames the kernel takes for one packet). With multi-buffer (`XDP_USE_SG`) a packet longer
//! than a frame is written into as many frames as it needs, posted as one run of descriptors
//! (`XDP_PKT_CONTD` on all but the last), and goes only when the ring and the free frames hold
//! all of it. A frame the device refuses after it was
//! posted (the kernel says EBUSY) is counted `tx_error` in the burst that posted it; one found in a
//! later call (the kernel had said "busy" and took it afterwards) is counted on the port
//! (`tx_errors_late`), since its burst was already counted as sent.

use super::pooled::{pack, PoolUmem, Posted};
use super::ring::Ring;
use super::xsk::Xsk;
use crate::mbuf::{Burst, Pkt, PoolCache, MAX_BURST};
use crate::ports::counted::StatsClock;
use crate::ports::{TxQueue, TxRefused};
use crate::stats::PortStats;
use std::os::fd::AsRawFd;
use std::sync::Arc;

/// One queue's TX side. Its rings are unmapped before the socket may close (fields drop in
/// order, `sock` last).
#[repr(align(128))] // lines of its own: see `RxQueue`
pub(super) struct XdpTx {
    tx: Ring<libc::xdp_desc>,
    comp: Ring<u64>,
    /// TX frames not in the kernel's hands (UMEM addresses).
    free: Vec<u64>,
    /// The longest frame the interface sends untagged (MTU + Ethernet header), and its name (to
    /// read the MTU again now and then).
    max_len: usize,
    iface: String,
    clock: StatsClock,
    stats: Arc<PortStats>,
    /// Whether the kernel needs a call to send (copy mode); in zero-copy mode the driver sends by
    /// itself unless the ring says it needs waking.
    copy: bool,
    /// The longest packet the UMEM frames can carry: one frame, or with multi-buffer
    /// (`XDP_USE_SG`) as many as the kernel takes for one packet, each a descriptor.
    max_frames_len: usize,
    /// Per descriptor posted by a burst that has a packet of several, the packet it belongs to
    /// (to count a refused frame against its packet).
    owner: Vec<u16>,
    /// With the pool as the UMEM: the buffers posted.
    pooled: Option<TxPool>,
    /// Anything besides this queue alive that holds the port's XDP program attached.
    _keep: Arc<dyn Send + Sync>,
    sock: Arc<Xsk>,
}

/// TX state when the pool is the UMEM.
struct TxPool {
    umem: Arc<PoolUmem>,
    posted: Posted,
    /// Where completed buffers go when the stream's cache is another pool's (never, as streams
    /// hand this queue the lcore's cache: `crosses_threads`), and what `flush` frees to.
    spare: PoolCache,
}

/// What a TX side is made of.
pub(super) struct TxParts {
    pub sock: Arc<Xsk>,
    pub tx: Ring<libc::xdp_desc>,
    pub comp: Ring<u64>,
    /// Its UMEM frames: `first..first + frames`.
    pub first: u32,
    pub frames: u32,
    pub mtu: usize,
    pub iface: String,
    pub copy: bool,
    pub sg: bool,
    pub stats: Arc<PortStats>,
    pub keep: Arc<dyn Send + Sync>,
}

/// Most wake-up calls one burst makes (each sends up to 32 frames in copy mode): enough for a
/// whole ring, bounded however the kernel answers.
const MAX_KICKS: u32 = 600;

impl XdpTx {
    pub(super) fn new(p: TxParts) -> XdpTx {
        let frame = p.sock.umem.frame as u64;
        let free = (p.first..p.first + p.frames).rev().map(|i| u64::from(i) * frame).collect();
        let pooled = p.sock.pooled.clone().map(|umem| TxPool {
            // A shadow of the TX ring: as many entries as it has slots.
            posted: Posted::new(p.tx.size()),
            spare: umem.pool().cache(),
            umem,
        });
        let max_frames_len = match &pooled {
            Some(tp) => tp.umem.geo().chunk() - super::XDP_HEADROOM,
            None => p.sock.umem.frame * if p.sg { super::rx::MAX_FRAGS - 1 } else { 1 },
        };
        XdpTx {
            pooled,
            sock: p.sock,
            tx: p.tx,
            comp: p.comp,
            free,
            max_len: p.mtu + 14,
            iface: p.iface,
            clock: StatsClock::new(),
            stats: p.stats,
            copy: p.copy,
            max_frames_len,
            owner: vec![0; p.frames as usize],
            _keep: p.keep,
        }
    }

    /// Takes back the frames the kernel has sent (only frames of the TX half: a completion address
    /// outside it can only be a broken kernel, and is not ours to write into); with the pool as the
    /// UMEM, frees their buffers to `cache` (or the spare cache).
    #[inline(always)]
    fn reclaim(&mut self, cache: Option<&mut PoolCache>) {
        if let Some(tp) = &mut self.pooled {
            tp.reclaim(&mut self.comp, self.tx.produced(), cache, &self.stats);
            return;
        }
        let n = self.comp.ready(u32::MAX);
        let frame = self.sock.umem.frame as u64;
        for i in 0..n {
            let a = self.comp.get(i);
            let a = a - a % frame;
            if self.sock.umem.is_tx_frame(a) {
                self.free.push(a);
            }
        }
        self.comp.release(n);
    }

    /// Whether the port can ever send `p` ([`sendable`]).
    #[inline(always)]
    fn fits(&self, p: &Pkt) -> bool {
        sendable(p, self.max_len, self.max_frames_len)
    }

    /// Posts `p`, longer than a frame, as a run of descriptors from ring position `at` (all but the
    /// last marked `XDP_PKT_CONTD`), each frame's owner packet `pkt`: how many, or None (nothing
    /// posted) when the ring or the free frames cannot hold all of it now.
    #[cold]
    #[inline(never)]
    fn post_frames(&mut self, p: &Pkt, at: u32, pkt: u16) -> Option<u32> {
        let frame = self.sock.umem.frame;
        let need = p.len().div_ceil(frame) as u32;
        // Ring slots after the `at` this burst already filled, and free frames, for all of it.
        if self.tx.free(at + need) < at + need || (self.free.len() as u32) < need {
            return None;
        }
        let mut taken = [0u64; super::rx::MAX_FRAGS];
        for (k, chunk) in p.data().chunks(frame).enumerate() {
            let addr = self.free.pop().unwrap_or(u64::MAX);
            // SAFETY: `addr` is a TX frame off our free list: on no ring, ours alone; a chunk is at
            // most a frame. (u64::MAX, had the list run dry against the count above, is refused.)
            if !unsafe { self.sock.umem.write(addr, chunk) } {
                // Cannot happen (counted above, and the list holds TX frames only): nothing posted,
                // the frames taken go back.
                self.free.extend(taken[..k].iter().copied().chain((addr != u64::MAX).then_some(addr)));
                return None;
            }
            taken[k] = addr;
            let options = if (k as u32) + 1 < need { libc::XDP_PKT_CONTD } else { 0 };
            let i = at + k as u32;
            self.tx.put(i, libc::xdp_desc { addr, len: chunk.len() as u32, options });
            self.owner[i as usize] = pkt;
        }
        Some(need)
    }

    /// Wakes the kernel until it has taken every frame on the TX ring or takes no more. Returns
    /// how many frames the device refused, by their place among the frames this call posted
    /// (`posted_at`: ring index of the first; `posted`: how many); the others are counted late.
    fn push(&mut self, posted_at: u32, posted: u32, errors: &mut [u32]) -> usize {
        let mut n = 0;
        for _ in 0..MAX_KICKS {
            if self.tx.unconsumed() == 0 || !(self.copy || self.tx.needs_wakeup()) {
                break;
            }
            let before = self.tx.consumed();
            // SAFETY: a zero-length send on our socket; it only makes the kernel process the TX ring.
            let r = unsafe {
                libc::sendto(self.sock.fd.as_raw_fd(), std::ptr::null(), 0, libc::MSG_DONTWAIT, std::ptr::null(), 0)
            };
            let err = (r < 0).then(|| std::io::Error::last_os_error().raw_os_error().unwrap_or(0));
            let after = self.tx.consumed();
            if err == Some(libc::EBUSY) && after != before {
                // The device refused the last frame the kernel took off the ring: counted with its
                // burst's, or late (a frame of an earlier burst, or past what `errors` holds).
                let at = after.wrapping_sub(1).wrapping_sub(posted_at);
                if at < posted && n < errors.len() {
                    errors[n] = at;
                    n += 1;
                } else {
                    PortStats::add(&self.stats.tx_errors_late, 1);
                }
            }
            if err == Some(libc::ENOBUFS) {
                // The completion ring is full: take back what the kernel finished.
                self.reclaim(None);
            }
            if after == before && err != Some(libc::ENOBUFS) {
                break;
            }
        }
        n
    }

    /// The interface's MTU again, every 100 ms or so (an MTU change needs no restart).
    #[inline(always)]
    fn refresh_mtu(&mut self) {
        if self.clock.due(false) {
            if let Ok(mtu) = super::super::iface::mtu(&self.iface) {
                self.max_len = mtu + 14;
            }
        }
    }
}

impl XdpTx {
    /// [`TxQueue::tx_burst`] with the pool as the UMEM: the pool's packets posted where they are.
    #[inline(always)]
    fn tx_pooled(&mut self, cache: &mut PoolCache, burst: &mut Burst, refused: &mut TxRefused) -> usize {
        let Some(tp) = self.pooled.as_mut() else { return 0 };
        // Our buffers come from and go to `ours`; the burst's packets of another pool go back to
        // `theirs` (their pool's cache) when it is not the same.
        let same = Arc::ptr_eq(cache.pool(), tp.umem.pool());
        tp.reclaim(&mut self.comp, self.tx.produced(), same.then_some(&mut *cache), &self.stats);
        let (ours, theirs) = if same { (cache, None) } else { (&mut tp.spare, Some(cache)) };
        let g = tp.umem.geo();
        // As many as the ring and the FIFO have room for (a packet refused counts among them).
        let posted_at = self.tx.produced();
        let room = self.tx.free(burst.len().min(tp.posted.room(posted_at) as usize) as u32);
        let n = (room as usize).min(burst.len());
        let mut odd = Odd { unposted: [0; MAX_BURST / 64], any: false, copies: 0 };
        let (max_len, chunk_len) = (self.max_len, self.max_frames_len);
        // The usual frame: not empty, within a chunk and the untagged MTU, in one comparison.
        let usual_len = chunk_len.min(max_len);
        let pkts = &burst.as_slice()[..n];
        // The ring's free slots and their FIFO entries, each as two runs split at the same place
        // (the FIFO shadows the ring: the same size, the same index). Runs of the usual packets go
        // out through `post_usual`, each unusual one between them through `Odd::one`.
        let (ring_end, ring_start) = self.tx.free_runs(room);
        let (fifo_end, fifo_start) = tp.posted.stage_runs(posted_at, room);
        let mut runs = [(ring_end, fifo_end), (ring_start, fifo_start)];
        let (mut taken, mut posted) = (0, 0);
        while taken < n {
            // Where the next is posted: the first run, or past its end the second.
            let first = runs[0].0.len().min(runs[0].1.len());
            let (run, at) = if posted < first { (&mut runs[0], posted) } else { (&mut runs[1], posted - first) };
            let (Some(descs), Some(fifo)) = (run.0.get_mut(at..), run.1.get_mut(at..)) else { break };
            let usual = post_usual(g, usual_len, &pkts[taken..], descs, fifo);
            (taken, posted) = (taken + usual, posted + usual);
            if usual == descs.len().min(fifo.len()) && usual != 0 {
                // The run of slots ended: go on in the next one.
                continue;
            }
            let Some(p) = pkts.get(taken) else { break };
            match odd.one(p, taken, g, ours, refused, max_len, chunk_len) {
                Unusual::Post((hdr, addr)) => {
                    let (Some(d), Some(e)) = (descs.first_mut(), fifo.first_mut()) else { break };
                    write_desc(d, addr, p.len() as u32);
                    *e = pack(addr, hdr);
                    posted += 1;
                }
                Unusual::Refused => {}
                Unusual::Stop => break,
            }
            taken += 1;
        }
        let posted = posted as u32;
        if odd.any {
            let free_to = theirs.unwrap_or(ours);
            for (k, p) in burst.drain_front(taken).enumerate() {
                if odd.unposted[k / 64] & (1 << (k % 64)) != 0 {
                    free_to.free(p);
                } else {
                    // Posted: the buffer stays with the kernel until completed (`Posted`).
                    let _ = p.into_raw();
                }
            }
        } else {
            // Every one posted: their handles are given up (a `Pkt` has no drop; `Posted` holds
            // the buffers until the kernel completes them).
            burst.drain_front(taken);
        }
        if odd.copies != 0 {
            PortStats::add(&self.stats.umem_copies, odd.copies);
        }
        if posted > 0 {
            self.tx.submit(posted);
        }
        let failed = self.count_refused(posted_at, posted, refused);
        posted as usize - failed
    }

    /// Counts the frames the device refused among the `posted` posted from ring index `posted_at`
    /// (one descriptor a packet), by their lengths on the ring; returns how many.
    fn count_refused(&mut self, posted_at: u32, posted: u32, refused: &mut TxRefused) -> usize {
        // Refusals are rare (the device said it was busy): a few are counted with the burst.
        let mut errors = [0u32; 16];
        let failed = self.push(posted_at, posted, &mut errors);
        for &at in &errors[..failed] {
            refused.count(false, self.tx.written(posted_at.wrapping_add(at)).len as usize);
        }
        failed
    }
}

/// Posts the packets at the front of `pkts` that are the usual case (the pool's, not empty, within
/// `usual_len`) up to the first that is not, each in the next of the TX ring's free slots `descs`
/// and the FIFO entries `fifo` (as many as both hold): how many.
///
/// A function of its own, over slices, with nothing live in its loop but what the loop uses, so
/// that all of that stays in registers.
#[inline(never)]
fn post_usual(
    g: &super::pooled::Geometry,
    usual_len: usize,
    pkts: &[Pkt],
    descs: &mut [libc::xdp_desc],
    fifo: &mut [u64],
) -> usize {
    let mut k = 0;
    for ((p, d), e) in pkts.iter().zip(descs).zip(fifo) {
        let len = p.len();
        if len.wrapping_sub(1) >= usual_len {
            break;
        }
        let Some((hdr, addr)) = g.locate(p) else { break };
        write_desc(d, addr, len as u32);
        *e = pack(addr, hdr);
        k += 1;
    }
    k
}

/// Writes a TX descriptor of `len` bytes at UMEM address `addr`, no options: as two 8-byte
/// stores (written as a struct it takes three: the compiler keeps `len` and the zero apart).
#[inline(always)]
fn write_desc(d: &mut libc::xdp_desc, addr: u64, len: u32) {
    #[cfg(target_endian = "little")]
    {
        const _: () =
            assert!(std::mem::size_of::<libc::xdp_desc>() == 16 && std::mem::align_of::<libc::xdp_desc>() == 8);
        // SAFETY: `xdp_desc` is `repr(C) { addr: u64, len: u32, options: u32 }`: 16 bytes, 8-byte
        // aligned (checked above), no padding; on a little-endian machine its second 8 bytes are
        // `len | options << 32`. The borrow is `d`'s.
        let words = unsafe { &mut *(d as *mut libc::xdp_desc).cast::<[u64; 2]>() };
        *words = [addr, u64::from(len)];
    }
    #[cfg(not(target_endian = "little"))]
    {
        *d = libc::xdp_desc { addr, len, options: 0 };
    }
}

/// The packets of a burst that are not posted as they are: refused (never sendable) or copied
/// (another pool's buffer).
struct Odd {
    /// Bit k: the burst's k-th packet is freed after the loop rather than kept until completed.
    unposted: [u64; MAX_BURST / 64],
    any: bool,
    copies: u64,
}

/// What [`Odd::one`] decided.
enum Unusual {
    /// Post this buffer (header offset, data address).
    Post((u32, u64)),
    /// Refused and counted; freed after the loop.
    Refused,
    /// Not now (no buffer to copy into): it and the rest stay in the burst.
    Stop,
}

impl Odd {
    /// The `k`-th packet `p`, empty, longer than a chunk or the MTU, or another pool's.
    #[cold]
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn one(
        &mut self,
        p: &Pkt,
        k: usize,
        g: &super::pooled::Geometry,
        ours: &mut PoolCache,
        refused: &mut TxRefused,
        max_len: usize,
        chunk_len: usize,
    ) -> Unusual {
        let len = p.len();
        if !sendable(p, max_len, chunk_len) {
            refused.count(true, len);
            self.unposted[k / 64] |= 1 << (k % 64);
            self.any = true;
            return Unusual::Refused;
        }
        if let Some(at) = g.locate(p) {
            // A tagged frame within the MTU's 4 more bytes.
            return Unusual::Post(at);
        }
        // Another pool's buffer: copied into one of ours.
        let Some(mut q) = ours.alloc() else { return Unusual::Stop };
        let Some(at) = g.locate(&q).filter(|_| q.copy_from(p.data()).is_ok()) else {
            ours.free(q);
            return Unusual::Stop;
        };
        let _ = q.into_raw();
        self.copies += 1;
        self.unposted[k / 64] |= 1 << (k % 64);
        self.any = true;
        Unusual::Post(at)
    }
}

impl TxPool {
    /// Frees the buffers the kernel completed to `cache` (or the spare cache), the TX ring's
    /// producer index at `tail`; counts as `umem_lost` those it will never complete.
    #[inline(always)]
    fn reclaim(&mut self, comp: &mut Ring<u64>, tail: u32, cache: Option<&mut PoolCache>, stats: &PortStats) {
        let n = comp.ready(u32::MAX);
        if n == 0 {
            return;
        }
        let cache = cache.unwrap_or(&mut self.spare);
        let g = self.umem.geo();
        let (to_end, from_start) = comp.ready_runs(n);
        let mut lost = self.posted.complete(to_end, tail, g, cache);
        if !from_start.is_empty() {
            lost += self.posted.complete(from_start, tail, g, cache);
        }
        comp.release(n);
        if lost != 0 {
            PortStats::add(&stats.umem_lost, u64::from(lost));
        }
    }
}

/// Whether a port can ever send `p`: not empty (the kernel skips an empty descriptor without
/// completing it), within `frames_len` (what its UMEM frames or chunks hold) and within `max_len`,
/// the interface's MTU and Ethernet header, or 4 bytes more with a VLAN tag.
#[inline(always)]
fn sendable(p: &Pkt, max_len: usize, frames_len: usize) -> bool {
    let len = p.len();
    let tagged = || matches!(p.data().get(12..14), Some([0x81, 0x00] | [0x88, 0xa8])) && len <= max_len + 4;
    // `len - 1 < frames_len`: not empty and within the frames, in one comparison.
    len.wrapping_sub(1) < frames_len && (len <= max_len || tagged())
}

impl TxQueue for XdpTx {
    fn tx_burst(&mut self, cache: &mut PoolCache, burst: &mut Burst, refused: &mut TxRefused) -> usize {
        if burst.is_empty() {
            return 0;
        }
        self.refresh_mtu();
        if self.pooled.is_some() {
            return self.tx_pooled(cache, burst, refused);
        }
        self.reclaim(None);
        let mut slots = self.tx.free(burst.len().min(self.free.len()) as u32);
        let posted_at = self.tx.produced();
        let mut lens = [0u32; MAX_BURST];
        // Descriptors posted, packets posted, packets taken off the burst (posted or refused).
        let (mut posted, mut sent, mut taken) = (0u32, 0usize, 0);
        // Whether a packet took several descriptors (then `owner` maps descriptors to packets).
        let mut several = false;
        for p in burst.iter() {
            if !self.fits(p) {
                refused.count(true, p.len());
                taken += 1;
                continue;
            }
            if p.len() > self.sock.umem.frame {
                // Several frames (multi-buffer): out of line, off the common path.
                if !several {
                    // The descriptors before this one were a packet each.
                    for i in 0..posted {
                        self.owner[i as usize] = i as u16;
                    }
                    several = true;
                }
                let Some(n) = self.post_frames(p, posted, sent as u16) else { break };
                posted += n;
                slots = slots.saturating_sub(n);
            } else {
                if slots == 0 {
                    break;
                }
                let Some(addr) = self.free.pop() else { break };
                // SAFETY: `addr` is a TX frame off our free list: on no ring, ours alone.
                if !unsafe { self.sock.umem.write(addr, p.data()) } {
                    // Not a TX frame (cannot happen: the free list holds only those); not used.
                    break;
                }
                self.tx.put(posted, libc::xdp_desc { addr, len: p.len() as u32, options: 0 });
                if several {
                    self.owner[posted as usize] = sent as u16;
                }
                posted += 1;
                slots -= 1;
            }
            lens[sent] = p.len() as u32;
            sent += 1;
            taken += 1;
        }
        if posted > 0 {
            self.tx.submit(posted);
        }
        let mut errors = [0u32; MAX_BURST];
        if self.tx.unconsumed() == 0 || !(self.copy || self.tx.needs_wakeup()) {
            return 0;
        }
        let failed = self.push(posted_at, posted, &mut errors);
        let mut last = None;
        let mut lost = 0;
        for &at in &errors[..failed] {
            let pkt = if several { self.owner[at as usize] } else { at as u16 };
            // A packet of several frames refused once, however many of its frames the kernel named.
            if last != Some(pkt) {
                refused.count(false, lens[pkt as usize] as usize);
                lost += 1;
                last = Some(pkt);
            }
        }
        if taken == burst.len() {
            cache.free_burst(burst);
        } else {
            for p in burst.drain_front(taken) {
                cache.free(p);
            }
        }
        PortStats::add(&self.stats.umem_copies, sent as u64);
        sent - lost
    }

    /// With the pool as the UMEM, packets stay the queue's until the kernel completes them.
    fn crosses_threads(&self) -> bool {
        self.pooled.is_some()
    }

    /// Wakes the kernel for frames still on the TX ring (it was busy when their burst was posted).
    fn flush(&mut self) {
        if self.tx.unconsumed() != 0 {
            self.reclaim(None);
            let mut errors = [0u32; MAX_BURST];
            self.push(self.tx.produced(), 0, &mut errors);
        }
    }
}

impl Drop for XdpTx {
    /// Buffers still posted are parked with the socket, to go back to the pool once it is closed.
    fn drop(&mut self) {
        if let Some(tp) = &mut self.pooled {
            self.sock.park(tp.posted.drain(self.tx.produced()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::sendable;
    use crate::mbuf::{Pool, PoolConfig};

    #[test]
    fn empty_oversized_and_over_the_mtu_are_not_sendable_tagged_frames_get_4_bytes() {
        let pool = Pool::new(PoolConfig { size: 8, cache_size: 4, ..Default::default() }).unwrap();
        let mut cache = pool.cache();
        let mut p = cache.alloc().unwrap();
        let (mtu_len, frames) = (1514, 1792);
        assert!(!sendable(&p, mtu_len, frames), "an empty packet: the kernel would skip it, never completed");
        p.copy_from(&[0; 1514]).unwrap();
        assert!(sendable(&p, mtu_len, frames));
        p.copy_from(&[0; 1518]).unwrap();
        assert!(!sendable(&p, mtu_len, frames), "untagged, 4 bytes over the MTU");
        p.data_mut()[12..14].copy_from_slice(&[0x81, 0x00]);
        assert!(sendable(&p, mtu_len, frames), "VLAN-tagged: 4 bytes more");
        p.copy_from(&[0; 1519]).unwrap();
        p.data_mut()[12..14].copy_from_slice(&[0x88, 0xa8]);
        assert!(!sendable(&p, mtu_len, frames), "tagged, 5 bytes over");
        p.trim(1).unwrap();
        assert!(sendable(&p, mtu_len, frames), "QinQ-tagged: 4 bytes more");
        assert!(!sendable(&p, 2000, 1517), "over what the frames hold");
        cache.free(p);
    }
}
