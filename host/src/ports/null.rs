//! `null`: RX allocates a burst from the pool and fills each buffer from the port's template frame;
//! TX frees. The same work as DPDK's net_null (with its `copy` option), so the two compare honestly.

use super::{DriverDesc, PortSetup, Queues, Rx, RxQueue, Shared, Template, TxQueue};
use crate::config::{Config, PortCfg};
use crate::mbuf::{Burst, PoolCache};
use std::sync::Arc;

/// The driver entry.
pub const DRIVER: DriverDesc = DriverDesc {
    name: "null",
    help: "RX generates template frames from the pool, TX frees them (like DPDK net_null)",
    software_offloads: true,
    macsec: true,
    check,
    preflight: super::nothing_needed,
    open,
};

fn check(_: &Config, p: &PortCfg) -> Result<(), String> {
    super::only_own_section(p, "null")
}

fn open(s: &PortSetup<'_>, _: &mut Shared) -> anyhow::Result<Queues> {
    let n = s.cfg.queues.get();
    let rx = (0..n)
        .map(|q| {
            Box::new(NullRx { template: s.template.clone(), port: s.id, queue: q as u16, flow: 0 }) as Box<dyn RxQueue>
        })
        .collect();
    let tx = (0..n).map(|_| Box::new(NullTx) as Box<dyn TxQueue>).collect();
    Ok(Queues { rx, tx })
}

#[repr(align(128))] // lines of its own: see `RxQueue`
struct NullRx {
    template: Arc<Template>,
    port: u16,
    queue: u16,
    flow: u32,
}

impl RxQueue for NullRx {
    #[inline]
    fn rx_burst(&mut self, cache: &mut PoolCache, out: &mut Burst, max: usize) -> Rx {
        let start = out.len();
        if !cache.alloc_bulk(out, max) {
            return Rx { packets: 0, bytes: 0, nombuf: max };
        }
        let (port, queue) = (self.port, self.queue);
        self.template.fill_burst(&mut out[start..], &mut self.flow, |p| {
            p.meta_mut().set_input(port, queue);
        });
        Rx { packets: max, bytes: (max * self.template.len()) as u64, nombuf: 0 }
    }
}

struct NullTx;

impl TxQueue for NullTx {
    #[inline]
    fn tx_burst(&mut self, cache: &mut PoolCache, burst: &mut Burst, _: &mut crate::ports::TxRefused) -> usize {
        let n = burst.len();
        cache.free_burst(burst);
        n
    }
}
