//! `ring`: two ports joined back to back. TX on one queue arrives as RX on the same queue of the peer,
//! through a bounded lock-free ring per queue and direction; a full ring takes what fits and the
//! stream retries, then drops and counts (`tx_full`). A port may be its own peer.

use super::{DriverDesc, PortSetup, Queues, Rx, RxQueue, Shared, TxQueue};
use crate::config::{Config, PortCfg};
use crate::mbuf::{Burst, Pkt, PoolCache};
use crossbeam_queue::ArrayQueue;
use std::sync::Arc;

pub(super) type PktRing = ArrayQueue<Pkt>;

/// The driver entry.
pub const DRIVER: DriverDesc = DriverDesc {
    name: "ring",
    help: "back-to-back pair: TX on one port arrives as RX on its peer (ring.peer), through lock-free rings",
    software_offloads: true,
    macsec: false,
    check,
    preflight: super::nothing_needed,
    open,
};

fn check(cfg: &Config, p: &PortCfg) -> Result<(), String> {
    super::only_own_section(p, "ring")?;
    let r = p.ring.as_ref().ok_or("ring: missing; driver `ring` needs `ring: {peer: NAME}`")?;
    let peer = cfg.ports.iter().find(|q| q.name == r.peer).ok_or_else(|| {
        format!("ring.peer: no port named `{}`; ports are {}", r.peer, crate::config::port_names(cfg))
    })?;
    if peer.driver.0 != "ring" {
        return Err(format!(
            "ring.peer: port `{}` has driver `{}`; a ring peer must be a ring port",
            peer.name, peer.driver.0
        ));
    }
    let back = peer.ring.as_ref().map(|r| r.peer.as_str());
    if back != Some(p.name.as_str()) {
        return Err(format!(
            "ring.peer: `{}` names `{}` as its peer, not `{}`; the two must name each other",
            peer.name,
            back.unwrap_or("nothing"),
            p.name
        ));
    }
    if peer.queues != p.queues {
        return Err(format!(
            "queues: {} here but {} on peer `{}`; a ring pair needs the same number",
            p.queues.0, peer.queues.0, peer.name
        ));
    }
    Ok(())
}

fn rings(shared: &mut Shared, from: &str, to: &str, n: usize, size: usize) -> Vec<Arc<PktRing>> {
    shared
        .rings
        .entry((from.to_string(), to.to_string()))
        .or_insert_with(|| (0..n).map(|_| Arc::new(ArrayQueue::new(size))).collect())
        .clone()
}

fn open(s: &PortSetup<'_>, shared: &mut Shared) -> anyhow::Result<Queues> {
    let r = s.cfg.ring.as_ref().ok_or_else(|| anyhow::anyhow!("ring: missing"))?;
    let n = s.cfg.queues.get();
    let size = r.size.get();
    let out = rings(shared, &s.cfg.name, &r.peer, n, size);
    let inn = rings(shared, &r.peer, &s.cfg.name, n, size);
    let rx = inn
        .into_iter()
        .enumerate()
        .map(|(q, ring)| Box::new(RingRx { ring, port: s.id, queue: q as u16 }) as Box<dyn RxQueue>)
        .collect();
    let tx = out.into_iter().map(|ring| Box::new(RingTx { ring }) as Box<dyn TxQueue>).collect();
    Ok(Queues { rx, tx })
}

#[repr(align(128))] // lines of its own: see `RxQueue`
struct RingRx {
    ring: Arc<PktRing>,
    port: u16,
    queue: u16,
}

impl RxQueue for RingRx {
    #[inline]
    fn rx_burst(&mut self, _: &mut PoolCache, out: &mut Burst, max: usize) -> Rx {
        let (mut n, mut bytes) = (0, 0);
        while n < max {
            let Some(mut p) = self.ring.pop() else { break };
            bytes += p.len() as u64;
            // The packet crossed a wire: TX requests do not survive it.
            p.meta_mut().set_ol_flags(0).set_vlan(0, 0).set_input(self.port, self.queue);
            out.push(p);
            n += 1;
        }
        Rx { packets: n, bytes, nombuf: 0 }
    }

    fn drain(&mut self, cache: &mut PoolCache) -> u64 {
        let mut n = 0;
        while let Some(p) = self.ring.pop() {
            cache.free(p);
            n += 1;
        }
        n
    }

    fn foreign(&self) -> bool {
        true
    }
}

#[repr(align(128))] // lines of its own: see `RxQueue`
struct RingTx {
    ring: Arc<PktRing>,
}

impl TxQueue for RingTx {
    #[inline]
    fn tx_burst(&mut self, _: &mut PoolCache, burst: &mut Burst, _: &mut crate::ports::TxRefused) -> usize {
        // This queue is the ring's only producer, so the free room can only grow while we push.
        let room = self.ring.capacity() - self.ring.len();
        let n = room.min(burst.len());
        for p in burst.drain_front(n) {
            if self.ring.push(p).is_err() {
                unreachable!("ring room was checked by its only producer");
            }
        }
        n
    }

    fn crosses_threads(&self) -> bool {
        true
    }
}
