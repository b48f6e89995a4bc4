//! The control plane's view of the running dataplane: its configuration, its streams, its plugins;
//! used to build the dataplane at start and to prepare and publish each reload.
//!
//! A reload applies the command line's overrides with [`crate::dataplane::apply`], the function the first
//! build used (an upward import, on purpose: a reloaded configuration cannot differ from what `run`
//! would have started with the same flags).

use super::diff;
use super::{Control, ReloadStats, Slot, StreamUpdate, WorkerLink};
use crate::config::{Config, PolicyCfg};
use crate::dataplane::Overrides;
use crate::engines::{self, EngineFn};
use crate::offload::TxOffloads;
use crate::plugin::{self, Plugin, PluginCounters, Runner, Runtime};
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
    /// Its plugin counters, kept across swaps.
    pub counters: Arc<PluginCounters>,
    /// Its pool for direct packet access, kept across swaps.
    pub direct: Arc<crate::plugin::DirectSlot>,
}

/// A port's loaded plugin.
#[derive(Clone)]
pub struct LoadedPlugin {
    /// The checked, compiled module.
    pub plugin: Arc<Plugin>,
}

/// A port's plugin, for operators.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginShown {
    /// The module file.
    pub path: String,
    /// Its SHA-256, hex.
    pub sha256: String,
}

impl Plane {
    /// Refreshes [`Plane::published`] from the plugins now running.
    pub fn publish_plugins(&self) {
        let shown = self
            .plugins
            .iter()
            .map(|l| {
                l.as_ref().map(|l| PluginShown {
                    path: l.plugin.path.display().to_string(),
                    sha256: l.plugin.digest.iter().map(|b| format!("{b:02x}")).collect(),
                })
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
    /// Each port's plugin.
    pub plugins: Vec<Option<LoadedPlugin>>,
    /// Each port's plugin as the control socket shows it (file, SHA-256), refreshed by
    /// [`Plane::publish_plugins`] after every applied reload.
    pub published: Arc<std::sync::Mutex<Vec<Option<PluginShown>>>>,
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
    /// Loads (checks, compiles, or takes from the cache) a port's plugin.
    pub fn load_plugin(&mut self, pc: &PolicyCfg) -> anyhow::Result<LoadedPlugin> {
        let rt = match &self.runtime {
            Some(rt) => rt.clone(),
            None => self.runtime.insert(Runtime::new()?).clone(),
        };
        Ok(LoadedPlugin { plugin: Plugin::load(&rt, pc)? })
    }

    /// A new instance of `plugin` for stream `spec` (runs its init).
    pub fn runner(&self, plugin: &Arc<Plugin>, spec: &StreamSpec) -> anyhow::Result<Runner> {
        // Room for the maps of every queue's instance, twice: the policy running and the one a
        // reload makes beside it before the switch.
        let queues = self.cfg.ports[spec.rx].queues.get() as u64;
        let per_instance = plugin.cfg.limits.map_kib.0.saturating_mul(1024);
        self.maps[spec.rx].set_limit(per_instance.saturating_mul(2 * queues));
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
        };
        Runner::new(plugin.clone(), Arc::new(env), self.simd, spec.counters.clone())
            .map_err(|e| anyhow!("port `{}`: plugin {}: {e:#}", self.cfg.ports[spec.rx].name, plugin.path.display()))
    }

    /// Reloads from `new` (already parsed and validated): prepares everything, then publishes and
    /// waits for every worker to switch. On error nothing changed.
    pub fn reload(&mut self, mut new: Config, event_at: Instant, stop: &AtomicBool) -> anyhow::Result<Outcome> {
        crate::dataplane::apply(&mut new, &self.overrides)?;
        crate::config::validate(&new).map_err(|e| anyhow!(e))?;
        diff::restart_needed(&self.cfg, &new).map_err(|e| anyhow!(e))?;
        let (replaced, files_changed) = self.prepare_plugins(&new)?;
        let mut updates = Vec::with_capacity(self.specs.len());
        for spec in &self.specs {
            let (old, s) =
                (settings(&self.cfg, spec.rx, spec.tx, self.simd)?, settings(&new, spec.rx, spec.tx, self.simd)?);
            let policy = match &replaced[spec.rx] {
                None => None,
                Some(None) => Some(None),
                Some(Some(l)) => Some(Some(self.runner(&l.plugin, spec)?)),
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
        let lines = diff::summary(&self.cfg, &new, &files_changed);
        self.cfg = new;
        for (i, r) in replaced.into_iter().enumerate() {
            if let Some(r) = r {
                self.plugins[i] = r;
            }
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
        Ok(Outcome::Switched { lines, us, lagging })
    }

    /// Per port: `None` keep its plugin, `Some(x)` replace it with `x`; and which of its files have
    /// new content under the same path (the plugin, an initial entries file), as summary lines.
    #[allow(clippy::type_complexity)]
    fn prepare_plugins(
        &mut self,
        new: &Config,
    ) -> anyhow::Result<(Vec<Option<Option<LoadedPlugin>>>, Vec<Vec<String>>)> {
        let mut replaced = Vec::with_capacity(new.ports.len());
        let mut files_changed = Vec::with_capacity(new.ports.len());
        for (i, port) in new.ports.iter().enumerate() {
            let old = (&self.cfg.ports[i].policy, &self.plugins[i]);
            let mut changed = Vec::new();
            if let (Some(p), Some(l)) = (&port.policy, old.1) {
                if plugin::native::named(&p.plugin).is_none() {
                    // As at start: a regular file within limits.module_kib, checked before it is read
                    // and opened without blocking (a FIFO or /dev/zero put in its place is refused).
                    let max = p.limits.module_kib.0.saturating_mul(1024);
                    let bytes = crate::input::read_bounded(&p.plugin, max)
                        .map_err(|e| anyhow!("port `{}`: plugin {}: {e}", port.name, p.plugin.display()))?;
                    if plugin::digest(&bytes) != l.plugin.digest {
                        changed.push(format!("plugin {} rebuilt", p.plugin.display()));
                    }
                }
                let files = p.map_entries.iter().map(|f| (f, false)).chain(p.map_pins.iter().map(|f| (f, true)));
                for ((map, path), pin) in files {
                    let key = if pin { "map_pins" } else { "map_entries" };
                    let digest = crate::plugin::maps::initial::digest_of(path, pin)
                        .map_err(|e| anyhow!("port `{}`: {key} {map:?}: {}: {e}", port.name, path.display()))?;
                    if l.plugin.initial.get(map).is_none_or(|e| e.digest != digest) {
                        changed.push(format!("map {map:?} entries from {} changed", path.display()));
                    }
                }
            }
            let same = port.policy == *old.0 && changed.is_empty();
            files_changed.push(changed);
            if same {
                replaced.push(None);
                continue;
            }
            let loaded = match &port.policy {
                Some(pc) => Some(self.load_plugin(pc).map_err(|e| anyhow!("port `{}`: {e:#}", port.name))?),
                None => None,
            };
            replaced.push(Some(loaded));
        }
        Ok((replaced, files_changed))
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
