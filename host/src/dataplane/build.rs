//! From a validated config to workers with their streams.

use crate::config::{Config, Pair};
use crate::engines;
use crate::lcore::{Retry, Stream, StreamParts, Worker};
use crate::mbuf::{Pool, PoolConfig};
use crate::plugin::Chain;
use crate::ports::{self, Inject, Port, RxQueue, INJECT_SLOTS};
use crate::reload::{settings, Control, Plane, ReloadStats, StreamSpec};
use crate::simd::{self, Simd};
use crate::stats::{StatsView, StreamInfo};
use anyhow::{anyhow, bail, Context};
use std::sync::Arc;
use std::time::Duration;

/// Command-line settings that override the config for quick runs.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    /// `--lcores`.
    pub lcores: Option<Vec<usize>>,
    /// `--burst`.
    pub burst: Option<usize>,
    /// `--engine`: every port.
    pub engine: Option<String>,
    /// `--simd`.
    pub simd: Option<String>,
}

/// Everything built, ready to run.
pub struct Dataplane {
    /// The packet pool.
    pub pool: Arc<Pool>,
    /// The kernel variant in use.
    pub simd: Simd,
    /// Workers with their streams.
    pub workers: Vec<Worker>,
    /// Counters for display.
    pub view: StatsView,
    /// RX queues no stream polls (a ring port nobody receives on): drained at stop, counted in flight.
    pub unpolled: Vec<Box<dyn RxQueue>>,
    /// Inject queues of the ports (`send_to`): drained at stop, counted in flight.
    pub injects: Vec<Arc<Inject>>,
    /// What a live reload needs.
    pub plane: Plane,
    /// The ports' capture points (`wasmdp ctl capture`).
    pub taps: Arc<crate::capture::Taps>,
}

/// Applies overrides to a config (and checks them like the config itself).
pub fn apply(cfg: &mut Config, o: &Overrides) -> anyhow::Result<()> {
    if let Some(l) = &o.lcores {
        cfg.lcores = Some(l.clone());
    }
    if let Some(b) = o.burst {
        if !(1..=512).contains(&b) {
            bail!("--burst {b}: allowed 1..=512");
        }
        cfg.burst.0 = b as u64;
    }
    if let Some(e) = &o.engine {
        engines::lookup(e).ok_or_else(|| anyhow!("--engine `{e}`: unknown engine; allowed {}", engines::names()))?;
        cfg.engine.0 = e.clone();
        for p in &mut cfg.ports {
            p.engine = None;
        }
    }
    if let Some(s) = &o.simd {
        cfg.simd = simd::SimdChoice::from_name(s)
            .ok_or_else(|| anyhow!("--simd `{s}`: allowed {}", simd::SimdChoice::NAMES))?;
    }
    Ok(())
}

/// Builds pool, ports, streams and workers.
pub fn build(cfg: &Config, o: &Overrides) -> anyhow::Result<Dataplane> {
    let mut cfg = cfg.clone();
    apply(&mut cfg, o)?;
    crate::config::validate(&cfg).map_err(|e| anyhow!(e))?;
    let simd = simd::resolve(cfg.simd).map_err(|e| anyhow!(e))?;
    let lcores = crate::config::lcores(&cfg).map_err(|e| anyhow!(e))?;
    let p = &cfg.pool;
    let pool_cfg = PoolConfig {
        size: p.size.get(),
        headroom: p.headroom.u16(),
        data_room: p.data_room.u16(),
        cache_size: p.cache_size.get(),
    };
    let pool = Pool::new(pool_cfg).context("allocating the packet pool")?;
    let mut ports = ports::open_all_with(&cfg, Some(&pool))?;
    let pairs = crate::config::pairs(&cfg).map_err(|e| anyhow!(e))?;
    let injects = inject_queues(&cfg, &pairs);
    let mut plane = Plane {
        cfg: cfg.clone(),
        overrides: o.clone(),
        specs: Vec::new(),
        plugins: Vec::new(),
        published: Arc::default(),
        runtime: None,
        injects: injects.clone(),
        ports: ports.iter().map(|p| crate::plugin::PortInfo { mac: p.mac, peer_mac: p.peer_mac }).collect(),
        maps: cfg.ports.iter().map(|_| Arc::default()).collect(),
        shared_maps: Arc::default(),
        events: cfg.ports.iter().map(|_| Arc::default()).collect(),
        simd,
        control: Arc::new(Control::default()),
        links: Vec::new(),
        stats: Arc::new(ReloadStats::default()),
    };
    for pc in &cfg.ports {
        let loaded = plane.load_chain(pc)?;
        plane.plugins.push(loaded);
    }
    let taps = crate::capture::Taps::new(ports.len());
    let mut workers: Vec<Worker> = lcores.iter().map(|&l| Worker::new(Some(l), plane.control.clone())).collect();
    let mut view = StatsView {
        ports: ports.iter().map(|p| p.name.clone()).collect(),
        port_stats: ports.iter().map(|p| p.stats.clone()).collect(),
        streams: Vec::new(),
        plugins: Vec::new(),
        maps: plane.maps.clone(),
        events: plane.events.clone(),
        reloads: Some(plane.stats.clone()),
    };
    for (i, sp) in pairs.into_iter().enumerate() {
        let lcore = sp.lcore.unwrap_or(lcores[i % lcores.len()]);
        let spec = StreamSpec {
            rx: sp.rx,
            rxq: sp.rxq,
            tx: sp.tx,
            lcore: Some(lcore),
            slot: Arc::default(),
            links: Arc::default(),
            direct: Arc::new(crate::plugin::DirectSlot::new(pool.config())),
        };
        let policy = Chain::of(plane.chain(&plane.plugins[sp.rx], &spec)?);
        let inject = injects.get(sp.tx).cloned().flatten();
        let tap = taps.stream(sp.rx as u16, sp.rxq, sp.tx as u16, sp.txq);
        let stream = make_stream(&cfg, &mut ports, &sp, lcore, simd, policy, inject, tap)?;
        view.streams.push((stream.info().clone(), stream.counters()));
        view.plugins.push(spec.links.clone());
        let w = workers
            .iter_mut()
            .find(|w| w.lcore == Some(lcore))
            .ok_or_else(|| anyhow!("lcore {lcore} is not in lcores"))?;
        w.add(stream, spec.slot.clone());
        plane.specs.push(spec);
    }
    workers.retain(|w| !w.streams.is_empty());
    plane.links = workers.iter().map(|w| w.link.clone()).collect();
    let mut unpolled = Vec::new();
    for p in &mut ports {
        for (q, rxq) in p.rxqs.iter_mut().enumerate() {
            if let Some(rxq) = rxq.take() {
                // A null port makes packets only when polled; other drivers queue what arrives.
                if p.driver.name != "null" {
                    tracing::warn!(port = %p.name, queue = q, "no stream receives on this queue; what arrives there waits until stop");
                }
                unpolled.push(rxq);
            }
        }
    }
    let injects = injects.iter().flatten().cloned().collect();
    Ok(Dataplane { pool, simd, workers, view, unpolled, injects, plane, taps })
}

/// One inject queue per port that some stream transmits on (what plugins `send_to`).
pub(super) fn inject_queues(cfg: &Config, pairs: &[Pair]) -> Arc<[Option<Arc<Inject>>]> {
    (0..cfg.ports.len())
        .map(|port| pairs.iter().any(|s| s.tx == port).then(|| Arc::new(Inject::new(INJECT_SLOTS))))
        .collect()
}

#[allow(clippy::too_many_arguments)]
fn make_stream(
    cfg: &Config,
    ports: &mut [Port],
    sp: &Pair,
    lcore: usize,
    simd: Simd,
    policy: Option<Chain>,
    inject: Option<Arc<Inject>>,
    tap: crate::capture::StreamTap,
) -> anyhow::Result<Stream> {
    let set = settings(cfg, sp.rx, sp.tx, simd)?;
    let rxq = ports[sp.rx].rxqs.get_mut(sp.rxq as usize).and_then(Option::take);
    let rxq =
        rxq.ok_or_else(|| anyhow!("rx queue {} of `{}` is used twice or does not exist", sp.rxq, ports[sp.rx].name))?;
    let txp = &mut ports[sp.tx];
    let txq = txp.txqs.get_mut(sp.txq as usize).and_then(Option::take);
    let txq = txq.ok_or_else(|| anyhow!("tx queue {} of `{}` is used twice or does not exist", sp.txq, txp.name))?;
    let info = StreamInfo {
        rx_port: sp.rx as u16,
        rx_queue: sp.rxq,
        tx_port: sp.tx as u16,
        tx_queue: sp.txq,
        engine: set.engine,
        lcore: Some(lcore),
    };
    Ok(Stream::new(StreamParts {
        info,
        rxq,
        txq,
        run: set.run,
        needs_rx: set.needs_rx,
        burst_size: set.burst_size,
        retry: Retry { count: cfg.tx_retry.count.0 as u32, delay: Duration::from_micros(cfg.tx_retry.delay_us.0) },
        offloads: txp.driver.caps(),
        tx: set.tx,
        tx_mac: txp.mac,
        peer_mac: txp.peer_mac,
        template: txp.template.clone(),
        seed_bursts: txp.tx_first,
        policy,
        inject,
        echo: Arc::new(echo_addrs(cfg, sp.rx, simd)?),
        tunnels: Arc::new(engines::resolve_tunnels(&cfg.ports[sp.rx], &cfg.ports[sp.tx], (txp.mac, txp.peer_mac))?),
        prefetch_flow: cfg.prefetch_flow_meta,
        tap,
    }))
}

/// What the `icmpecho` engine of a stream receiving on port `rx` answers for.
fn echo_addrs(cfg: &Config, rx: usize, simd: Simd) -> anyhow::Result<crate::engines::EchoAddrs> {
    let Some(e) = &cfg.ports[rx].icmpecho else { return Ok(Default::default()) };
    let others = match e.others.as_str() {
        "drop" => None,
        name => Some(engines::lookup(name).ok_or_else(|| anyhow!("unknown engine `{name}`"))?.run.get(simd)),
    };
    Ok(crate::engines::EchoAddrs {
        ipv4: e.ipv4.iter().map(|a| a.octets()).collect(),
        ipv6: e.ipv6.iter().map(|a| a.octets()).collect(),
        others,
    })
}
