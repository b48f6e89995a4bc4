//! The control plane's view of the running dataplane: its configuration, its streams, its plugins;
//! used to build the dataplane at start and to prepare and publish each reload.
//!
//! A reload applies the command line's overrides with [`crate::dataplane::apply`], the function the first
//! build used (an upward import, on purpose: a reloaded configuration cannot differ from what `run`
//! would have started with the same flags).

use super::diff;
use super::prepare::{self, chain_lines, LoadedPlugin, Prepared};
use super::{Control, ReloadStats, Slot, StreamUpdate, WorkerLink};
use crate::config::{Config, PolicyCfg};
use crate::dataplane::Overrides;
use crate::engines::{self, EngineFn};
use crate::offload::TxOffloads;
use crate::plugin::{ChainPlan, LinkCounters, LinkPlan, Plugin, Runner, Runtime};
use crate::ports::Inject;
use crate::simd::Simd;
use anyhow::anyhow;
use std::sync::atomic::{
    AtomicBool,
    Ordering::{Acquire, Relaxed},
};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A stream as the control plane knows it.
pub struct StreamSpec {
    /// RX port index.
    pub rx: usize,
    /// RX queue (the plugin's `instance`).
    pub rxq: u16,
    /// TX port index.
    pub tx: usize,
    /// The worker core it runs on.
    pub lcore: Option<usize>,
    /// Its mailbox.
    pub slot: Arc<Slot>,
    /// Its plugin counters per link of its chain, kept across swaps.
    pub links: Arc<LinkCounters>,
    /// Its pool for direct packet access, kept across swaps.
    pub direct: Arc<crate::plugin::DirectSlot>,
}

/// A link of a port's chain, for operators.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginShown {
    /// The link's name.
    pub link: String,
    /// The module file.
    pub path: String,
    /// Its SHA-256, hex.
    pub sha256: String,
    /// The ABI version it declares (`1.1`).
    pub abi: Option<String>,
}

impl Plane {
    /// Refreshes [`Plane::published`] from the plugins now running.
    pub fn publish_plugins(&self) {
        let shown = self
            .plugins
            .iter()
            .map(|links| {
                links
                    .iter()
                    .map(|l| PluginShown {
                        link: l.name.to_string(),
                        path: l.plugin.path.display().to_string(),
                        sha256: l.plugin.digest.iter().map(|b| format!("{b:02x}")).collect(),
                        abi: l.plugin.declared_abi(),
                    })
                    .collect()
            })
            .collect();
        *self.published.lock().unwrap_or_else(|p| p.into_inner()) = shown;
    }
}

/// A stream's live settings, derived from a configuration.
#[derive(Clone, Copy)]
pub struct Settings {
    /// Engine function for the variant in use.
    pub run: EngineFn,
    /// Engine name.
    pub engine: &'static str,
    /// Whether it receives.
    pub needs_rx: bool,
    /// Packets per burst.
    pub burst_size: usize,
    /// TX port offloads.
    pub tx: TxOffloads,
}

impl Settings {
    fn same(&self, o: &Settings) -> bool {
        (self.engine, self.needs_rx, self.burst_size, self.tx) == (o.engine, o.needs_rx, o.burst_size, o.tx)
    }
}

/// The live settings of the stream `rx -> tx` under `cfg`.
pub fn settings(cfg: &Config, rx: usize, tx: usize, simd: Simd) -> anyhow::Result<Settings> {
    let name = &cfg.ports[rx].engine.as_ref().unwrap_or(&cfg.engine).0;
    let e = engines::lookup(name).ok_or_else(|| anyhow!("unknown engine `{name}`"))?;
    let t = &cfg.ports[tx];
    Ok(Settings {
        run: e.run.get(simd),
        engine: e.name,
        needs_rx: e.needs_rx,
        burst_size: cfg.burst.get(),
        tx: TxOffloads { flags: t.tx_offloads.0, vlan_tci: t.tx_vlan.u16(), vlan_tci_outer: t.tx_vlan_outer.u16() },
    })
}

/// Everything the control thread needs.
pub struct Plane {
    /// The running configuration (overrides applied).
    pub cfg: Config,
    /// Command-line overrides, applied to every new file too.
    pub overrides: Overrides,
    /// The streams, in the order of the stats.
    pub specs: Vec<StreamSpec>,
    /// Each port's chain of plugins (empty: no policy).
    pub plugins: Vec<Vec<LoadedPlugin>>,
    /// Each port's chain as the control socket shows it (link, file, SHA-256), refreshed by
    /// [`Plane::publish_plugins`] after every applied reload.
    pub published: Arc<std::sync::Mutex<Vec<Vec<PluginShown>>>>,
    /// The plugin runtime, made when the first plugin is loaded.
    pub runtime: Option<Arc<Runtime>>,
    /// Inject queues of the ports.
    pub injects: Arc<[Option<Arc<Inject>>]>,
    /// The ports as plugins see them (the `context` import).
    pub ports: Arc<[crate::plugin::PortInfo]>,
    /// Each port's plugin maps: kept for the life of the dataplane, so that a reloaded policy that
    /// declares a map again finds its entries.
    pub maps: Vec<Arc<crate::plugin::maps::Registry>>,
    /// The maps shared across ports (`policy: shared_maps:`), likewise kept.
    pub shared_maps: Arc<crate::plugin::maps::SharedMaps>,
    /// Each port's event ring: kept for the life of the dataplane, as the maps.
    pub events: Vec<Arc<crate::plugin::events::Events>>,
    /// Kernel variant.
    pub simd: Simd,
    /// The generation word.
    pub control: Arc<Control>,
    /// One per worker.
    pub links: Vec<Arc<WorkerLink>>,
    /// Reload figures.
    pub stats: Arc<ReloadStats>,
}

/// What a reload did.
#[derive(Debug)]
pub enum Outcome {
    /// Published: the summary lines, microseconds from the event to every worker switched (or to
    /// giving up waiting), and how many workers had not switched then (stopping, or stalled: they
    /// switch at their next loop).
    Switched { lines: Vec<String>, us: u64, lagging: usize },
    /// Valid, and equal to what runs: nothing swapped.
    Unchanged,
}

impl Plane {
    /// The plugin runtime, made when the first plugin is loaded.
    fn runtime(&mut self) -> anyhow::Result<Arc<Runtime>> {
        Ok(match &self.runtime {
            Some(rt) => rt.clone(),
            None => self.runtime.insert(Runtime::new()?).clone(),
        })
    }

    /// Loads (checks, compiles, or takes from the cache) a link of a port's chain.
    pub fn load_plugin(&mut self, pc: &PolicyCfg) -> anyhow::Result<LoadedPlugin> {
        let rt = self.runtime()?;
        Ok(LoadedPlugin { name: pc.link_name().into(), plugin: Plugin::load(&rt, pc)? })
    }

    /// Loads every link of a port's chain; errors name the port and the link.
    pub fn load_chain(&mut self, port: &crate::config::PortCfg) -> anyhow::Result<Vec<LoadedPlugin>> {
        port.policy.links().iter().map(|pc| self.load_plugin(pc).map_err(|e| prepare::named(port, pc, e))).collect()
    }

    /// Sets how much map memory port `rx`'s policies may hold: for every queue's instance of every
    /// link, twice (the chain running and the one a reload makes beside it before the switch).
    fn map_limit(&self, cfg: &Config, rx: usize) {
        let queues = cfg.ports[rx].queues.get() as u64;
        let per_chain: u64 = cfg.ports[rx].policy.links().iter().map(|p| p.limits.map_kib.0.saturating_mul(1024)).sum();
        self.maps[rx].set_limit(per_chain.saturating_mul(2 * queues));
    }

    /// A new instance of link `link` for stream `spec` (runs its init), counting into the stream's
    /// counters for a link of that name.
    pub fn runner(&self, link: &LoadedPlugin, spec: &StreamSpec) -> anyhow::Result<Runner> {
        let plugin = &link.plugin;
        let env = crate::plugin::StreamEnv {
            port: spec.rx as u16,
            queue: spec.rxq,
            tx_port: spec.tx as u16,
            lcore: spec.lcore,
            ports: self.ports.clone(),
            injects: self.injects.clone(),
            port_name: self.cfg.ports[spec.rx].name.as_str().into(),
            maps: self.maps[spec.rx].clone(),
            shared: self.shared_maps.clone(),
            shares: plugin.cfg.shared_maps.clone().into(),
            direct: spec.direct.clone(),
            events: self.events[spec.rx].clone(),
        };
        Runner::new(plugin.clone(), Arc::new(env), self.simd, spec.links.link(&link.name))
            .map_err(|e| anyhow!("port `{}`: plugin {}: {e:#}", self.cfg.ports[spec.rx].name, plugin.path.display()))
    }

    /// The runners of a whole chain for stream `spec`, named.
    pub fn chain(&self, links: &[LoadedPlugin], spec: &StreamSpec) -> anyhow::Result<Vec<(Arc<str>, Runner)>> {
        self.map_limit(&self.cfg, spec.rx);
        links.iter().map(|l| Ok((l.name.clone(), self.runner(l, spec)?))).collect()
    }

    /// Reloads from `new` (already parsed and validated): prepares everything, then publishes and
    /// waits for every worker to switch. On error nothing changed.
    pub fn reload(&mut self, mut new: Config, event_at: Instant, stop: &AtomicBool) -> anyhow::Result<Outcome> {
        crate::dataplane::apply(&mut new, &self.overrides)?;
        crate::config::validate(&new).map_err(|e| anyhow!(e))?;
        diff::restart_needed(&self.cfg, &new).map_err(|e| anyhow!(e))?;
        let rt = self.runtime()?;
        let mut load =
            |pc: &PolicyCfg| Ok(LoadedPlugin { name: pc.link_name().into(), plugin: Plugin::load(&rt, pc)? });
        let (prepared, files_changed) = prepare::prepare(&self.cfg, &self.plugins, &new, &mut load)?;
        let updates = match self.stream_updates(&new, &prepared) {
            Ok(u) => u,
            Err(e) => {
                // Forget the counters made for links that will not run.
                for spec in &self.specs {
                    spec.links.keep(self.plugins[spec.rx].iter().map(|l| &*l.name));
                }
                return Err(e);
            }
        };
        let mut lines = diff::summary(&self.cfg, &new, &files_changed);
        lines.extend(chain_lines(&new, &self.plugins, &prepared));
        self.cfg = new;
        for (i, links) in prepared.into_iter().enumerate() {
            let Some(links) = links else { continue };
            let old = std::mem::take(&mut self.plugins[i]);
            self.plugins[i] = links
                .into_iter()
                .filter_map(|p| match p {
                    Prepared::Keep(j) => old.get(j).cloned(),
                    Prepared::Load(l) => Some(l),
                })
                .collect();
        }
        if updates.iter().all(Option::is_none) {
            return Ok(Outcome::Unchanged);
        }
        for (spec, u) in self.specs.iter().zip(updates) {
            spec.slot.offer(u);
        }
        let generation = self.control.publish();
        self.stats.generation.store(generation, Relaxed);
        let lagging = self.wait_switched(generation, stop);
        let us = event_at.elapsed().as_micros() as u64;
        self.drop_old_runners();
        for spec in &self.specs {
            spec.links.keep(self.plugins[spec.rx].iter().map(|l| &*l.name));
        }
        Ok(Outcome::Switched { lines, us, lagging })
    }

    /// Each stream's update under `new`: its settings, and the plan of its chain where the port's
    /// chain changes (new runners made here, off the workers).
    fn stream_updates(
        &self,
        new: &Config,
        prepared: &[Option<Vec<Prepared>>],
    ) -> anyhow::Result<Vec<Option<StreamUpdate>>> {
        let mut updates = Vec::with_capacity(self.specs.len());
        for (rx, p) in prepared.iter().enumerate() {
            if p.is_some() {
                self.map_limit(new, rx);
            }
        }
        for spec in &self.specs {
            let (old, s) =
                (settings(&self.cfg, spec.rx, spec.tx, self.simd)?, settings(new, spec.rx, spec.tx, self.simd)?);
            let policy = match &prepared[spec.rx] {
                None => None,
                Some(links) => {
                    let names = new.ports[spec.rx].policy.links().iter().map(|p| Arc::<str>::from(p.link_name()));
                    let mut plan = Vec::with_capacity(links.len());
                    for (name, p) in names.zip(links) {
                        let from = match p {
                            Prepared::Keep(j) => LinkPlan::Keep(*j),
                            Prepared::Load(l) => LinkPlan::New(Box::new(self.runner(l, spec)?)),
                        };
                        plan.push((name, from));
                    }
                    Some(ChainPlan { links: plan })
                }
            };
            updates.push((!s.same(&old) || policy.is_some()).then_some(StreamUpdate {
                run: s.run,
                engine: s.engine,
                needs_rx: s.needs_rx,
                burst_size: s.burst_size,
                tx: s.tx,
                policy,
            }));
        }
        Ok(updates)
    }

    /// Waits (at most 5 s, and not once the dataplane stops) for every worker to take `generation`;
    /// returns how many had not.
    fn wait_switched(&self, generation: u64, stop: &AtomicBool) -> usize {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let lagging = self.links.iter().filter(|l| l.seen.load(Acquire) < generation).count();
            if lagging == 0 || stop.load(Relaxed) || Instant::now() > deadline {
                return lagging;
            }
            std::thread::sleep(Duration::from_micros(50));
        }
    }

    /// Drops the runners the workers gave back, then frees the maps no running instance holds any
    /// more (a replaced policy's maps that its successor did not declare again).
    fn drop_old_runners(&self) {
        for spec in &self.specs {
            let old = std::mem::take(&mut *spec.slot.old.lock().unwrap_or_else(|e| e.into_inner()));
            drop(old);
        }
        self.maps.iter().for_each(|m| m.sweep());
        self.shared_maps.sweep();
    }
}
