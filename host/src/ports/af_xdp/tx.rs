//! TX: each packet is copied into a frame of the TX half of the UMEM and posted on the TX ring;
//! frames come back on the completion ring once the kernel sent them (in copy mode, during the
//! wake-up call). A burst first takes back what completed, then posts as many packets as there
//! are free frames and ring slots; the rest stays at the front of the burst for the stream's retry.
//! The kernel is woken (a zero-length sendto) only when the TX ring says it needs it.

use super::ring::Ring;
use super::xsk::Xsk;
use crate::mbuf::{Burst, PoolCache};
use crate::ports::TxQueue;
use std::os::fd::AsRawFd;
use std::sync::Arc;

/// One queue's TX side.
pub(super) struct XdpTx {
    sock: Arc<Xsk>,
    tx: Ring<libc::xdp_desc>,
    comp: Ring<u64>,
    /// TX frames not in the kernel's hands (UMEM addresses).
    free: Vec<u64>,
    /// Anything besides this queue alive that holds the port's XDP program attached.
    _keep: Arc<dyn Send + Sync>,
}

impl XdpTx {
    /// The TX side, owning UMEM frames `first..first + frames`.
    pub(super) fn new(
        sock: Arc<Xsk>,
        (tx, comp): (Ring<libc::xdp_desc>, Ring<u64>),
        first: u32,
        frames: u32,
        keep: Arc<dyn Send + Sync>,
    ) -> XdpTx {
        let frame = sock.umem.frame as u64;
        let free = (first..first + frames).rev().map(|i| u64::from(i) * frame).collect();
        XdpTx { sock, tx, comp, free, _keep: keep }
    }

    /// Takes back the frames the kernel has sent.
    #[inline(always)]
    fn reclaim(&mut self) {
        let n = self.comp.ready(u32::MAX);
        let frame = self.sock.umem.frame as u64;
        for i in 0..n {
            let a = self.comp.get(i);
            self.free.push(a - a % frame);
        }
        self.comp.release(n);
    }

    #[cold]
    fn kick(&self) {
        // SAFETY: a zero-length send on our socket; it only makes the kernel process the TX ring.
        unsafe { libc::sendto(self.sock.fd.as_raw_fd(), std::ptr::null(), 0, libc::MSG_DONTWAIT, std::ptr::null(), 0) };
    }
}

impl TxQueue for XdpTx {
    fn tx_burst(&mut self, cache: &mut PoolCache, burst: &mut Burst) -> usize {
        if burst.is_empty() {
            return 0;
        }
        self.reclaim();
        let want = burst.len().min(self.free.len()) as u32;
        let n = self.tx.free(want);
        let mut posted = 0;
        for p in burst.iter().take(n as usize) {
            let len = p.len();
            let Some(&addr) = self.free.last() else { break };
            // SAFETY: `addr` is a TX frame on our free list: on no ring, ours alone.
            // A packet longer than a frame cannot go out: it stays at the front for the stream
            // to retry and then drop, counted.
            if !unsafe { self.sock.umem.write(addr, p.data()) } {
                break;
            }
            self.free.pop();
            self.tx.put(posted, libc::xdp_desc { addr, len: len as u32, options: 0 });
            posted += 1;
        }
        if posted > 0 {
            self.tx.submit(posted);
        }
        if self.tx.needs_wakeup() {
            self.kick();
        }
        let sent = posted as usize;
        if sent == burst.len() {
            cache.free_burst(burst);
        } else {
            for p in burst.drain_front(sent) {
                cache.free(p);
            }
        }
        sent
    }
}
