//! The streams a configuration defines: its `streams:` list, or the ones its `topology:` derives
//! from the ports (one per RX queue).

use super::{Config, Topology};

/// One stream: RX port and queue, TX port and queue (port indexes in `ports:`), and its core if
/// the configuration pins it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pair {
    /// RX port index.
    pub rx: usize,
    /// RX queue.
    pub rxq: u16,
    /// TX port index.
    pub tx: usize,
    /// TX queue.
    pub txq: u16,
    /// Core, when `streams:` names one.
    pub lcore: Option<usize>,
}

/// The streams of `cfg`; the error names the key. Port names in `streams:` must exist (checked by
/// `validate` before).
pub fn pairs(cfg: &Config) -> Result<Vec<Pair>, String> {
    let idx = |name: &str| {
        cfg.ports.iter().position(|p| p.name == name).ok_or_else(|| format!("streams: no port named `{name}`"))
    };
    if !cfg.streams.is_empty() {
        return cfg
            .streams
            .iter()
            .map(|s| Ok(Pair { rx: idx(&s.rx)?, rxq: s.rx_queue, tx: idx(&s.tx)?, txq: s.tx_queue, lcore: s.lcore }))
            .collect();
    }
    let n = cfg.ports.len();
    let mut out = Vec::new();
    for rx in 0..n {
        let tx = match cfg.topology {
            Topology::Paired if rx % 2 == 0 => (rx + 1).min(n - 1),
            Topology::Paired => rx - 1,
            Topology::Chained => (rx + 1) % n,
            Topology::Loop => rx,
        };
        let (rq, tq) = (cfg.ports[rx].queues.0, cfg.ports[tx].queues.0);
        if rq > tq {
            return Err(format!(
                "topology: port `{}` has {rq} queues but forwards to `{}` with {tq}; give both the same number",
                cfg.ports[rx].name, cfg.ports[tx].name
            ));
        }
        out.extend((0..rq as u16).map(|q| Pair { rx, rxq: q, tx, txq: q, lcore: None }));
    }
    Ok(out)
}
