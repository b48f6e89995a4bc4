//! Bounds on everything a configuration makes the dataplane allocate or wait for: each size has a
//! maximum of its own (in the key's type), the sizes that multiply are bounded as products here, and
//! the whole is held against the machine's available memory, before anything is allocated. Errors
//! name the key, the value and the maximum.

use super::{Config, Pair};
use crate::mbuf::stride_for;

/// Longest a stream may spend retrying one burst (`tx_retry.count` x `tx_retry.delay_us`).
pub const MAX_RETRY_BUDGET_US: u64 = 100_000;
/// Largest AF_PACKET RX ring per queue (`block_size` x `block_count`).
pub const MAX_AF_PACKET_RING: u64 = 1 << 30;
/// Bytes of a lock-free queue slot (a packet pointer and a sequence word).
const QUEUE_SLOT: u64 = 16;
/// Share of the machine's available memory a configuration may ask for.
const MEMORY_SHARE: f64 = 0.8;

/// Where the memory of a configuration goes, in bytes.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Footprint {
    /// The packet pool.
    pub pool: u64,
    /// AF_PACKET RX rings, AF_XDP UMEMs and rings.
    pub rings: u64,
    /// Queues between ring ports and the plugins' inject queues.
    pub queues: u64,
    /// The most the plugins' instances may grow their memories and maps to.
    pub plugins: u64,
}

impl Footprint {
    /// All of it.
    pub fn total(&self) -> u64 {
        self.pool + self.rings + self.queues + self.plugins
    }
}

/// What one AF_XDP queue maps: a UMEM of two frames per ring slot and four rings of 16-byte
/// descriptors at most. (With the pool as the UMEM it maps only the rings; the bound does not
/// depend on whether the pool can be the UMEM, which is known when the port opens.)
pub fn xdp_queue_bytes(x: &crate::config::AfXdpCfg) -> u64 {
    let ring = x.ring_size.0;
    let umem = if x.umem == crate::config::UmemMode::Pool { 0 } else { 2 * ring * x.frame_size.0 };
    umem + 4 * ring * 16
}

fn mib(b: u64) -> String {
    if b >= 1 << 30 {
        format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64)
    } else {
        format!("{:.1} MiB", b as f64 / (1u64 << 20) as f64)
    }
}

/// What `cfg` makes the dataplane allocate at most.
pub fn footprint(cfg: &Config, pairs: &[Pair]) -> Footprint {
    let p = &cfg.pool;
    let mut f =
        Footprint { pool: p.size.0 * stride_for(p.headroom.u16(), p.data_room.u16()) as u64, ..Default::default() };
    for (i, port) in cfg.ports.iter().enumerate() {
        let q = port.queues.0;
        if let Some(a) = &port.af_packet {
            f.rings += q * a.block_size.0 * a.block_count.0;
        }
        if let Some(x) = &port.af_xdp {
            f.rings += q * xdp_queue_bytes(x);
        }
        if let Some(r) = &port.ring {
            // Each ring port owns the rings it transmits into.
            f.queues += q * r.size.0 * QUEUE_SLOT;
        }
        if pairs.iter().any(|s| s.tx == i) {
            f.queues += crate::ports::Inject::bytes(crate::ports::INJECT_SLOTS);
        }
        let instances = pairs.iter().filter(|s| s.rx == i).count() as u64;
        for pol in port.policy.links() {
            f.plugins += instances * (pol.limits.memory_kib.0 + pol.limits.map_kib.0) * 1024;
        }
    }
    f
}

/// Checks the sizes of `cfg` against their maxima, one another and the machine (the number of
/// lcores is `lcores`).
pub fn check(cfg: &Config, pairs: &[Pair], lcores: usize) -> Result<(), String> {
    let r = &cfg.tx_retry;
    let budget = r.count.0 * r.delay_us.0;
    if budget > MAX_RETRY_BUDGET_US {
        return Err(format!(
            "tx_retry: count {} x delay_us {} = {budget} us of retrying per burst; the maximum is {MAX_RETRY_BUDGET_US} us \
             (a stream retrying that long stalls every other stream of its lcore)",
            r.count.0, r.delay_us.0
        ));
    }
    for (i, p) in cfg.ports.iter().enumerate() {
        if let Some(a) = &p.af_packet {
            let ring = a.block_size.0 * a.block_count.0;
            if ring > MAX_AF_PACKET_RING {
                return Err(format!(
                    "ports[{i}] (`{}`).af_packet: block_size {} x block_count {} = {} per queue; the maximum is {}",
                    p.name,
                    a.block_size.0,
                    a.block_count.0,
                    mib(ring),
                    mib(MAX_AF_PACKET_RING)
                ));
            }
        }
    }
    check_pool(cfg, pairs, lcores)?;
    let f = footprint(cfg, pairs);
    if let Some(avail) = available_memory() {
        let max = (avail as f64 * MEMORY_SHARE) as u64;
        if f.total() > max {
            return Err(format!(
                "the configuration needs up to {} (pool {}, af_packet/af_xdp rings {}, queues {}, plugin memories and maps {}), \
                 more than {:.0}% of the {} this machine has available; lower pool.size, af_packet.block_count, \
                 af_xdp.ring_size, ring.size or the plugins' limits.memory_kib / map_kib",
                mib(f.total()),
                mib(f.pool),
                mib(f.rings),
                mib(f.queues),
                mib(f.plugins),
                MEMORY_SHARE * 100.0,
                mib(avail)
            ));
        }
    }
    Ok(())
}

/// The pool must hold at least one burst plus what the lcores' caches keep, or no stream can
/// receive anything; below two bursts per stream it will run short under load (a warning).
fn check_pool(cfg: &Config, pairs: &[Pair], lcores: usize) -> Result<(), String> {
    let (size, burst, cache) = (cfg.pool.size.0, cfg.burst.0, cfg.pool.cache_size.0);
    let need = burst + cache * lcores as u64;
    if size < need {
        return Err(format!(
            "pool.size: {size} buffers cannot hold one burst ({burst}) plus the cache of each of the {lcores} lcore(s) \
             (pool.cache_size {cache}); nothing could be received. Raise pool.size to at least {need}"
        ));
    }
    let comfortable = 2 * burst * pairs.len().max(1) as u64 + cache * lcores as u64;
    if size < comfortable {
        tracing::warn!(
            "pool.size {size} is less than two bursts per stream ({} streams of {burst}) plus the lcores' caches ({comfortable}); \
             expect rx_nombuf under load",
            pairs.len()
        );
    }
    Ok(())
}

/// `MemAvailable` of /proc/meminfo, in bytes.
pub fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}
