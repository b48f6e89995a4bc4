//! `wasmdp validate`: everything `run` would refuse, checked without starting anything. The file
//! (with the checks of `config::validate`: names, streams, cores, sizes, memory), the overrides,
//! the kernel variant, each port's driver preflight (the interface exists and is up, the capture
//! loads, the folder to record to exists), and each policy: read, checked, compiled, instantiated and
//! initialised with its params, as the port's first stream would.

use super::build::{apply, inject_queues, Overrides};
use crate::config::{self, Config};
use crate::plugin::{Plugin, PluginCounters, Runtime};
use crate::{ports, simd};
use anyhow::anyhow;
use std::sync::Arc;

/// Checks `cfg` with the command line's overrides as `run` would use it.
pub fn preflight(cfg: &Config, o: &Overrides) -> anyhow::Result<()> {
    let mut cfg = cfg.clone();
    apply(&mut cfg, o)?;
    config::validate(&cfg).map_err(|e| anyhow!(e))?;
    let simd = simd::resolve(cfg.simd).map_err(|e| anyhow!(e))?;
    for p in &cfg.ports {
        let driver = ports::lookup(&p.driver.0).ok_or_else(|| anyhow!("port `{}`: unknown driver", p.name))?;
        (driver.preflight)(p).map_err(|e| anyhow!("port `{}`: {e:#}", p.name))?;
    }
    let pairs = config::pairs(&cfg).map_err(|e| anyhow!(e))?;
    let injects = inject_queues(&cfg, &pairs);
    let mut runtime = None;
    let links = cfg.ports.iter().enumerate().flat_map(|(i, p)| p.policy.links().iter().map(move |pol| (i, p, pol)));
    for (i, p, pol) in links {
        let rt = match &runtime {
            Some(rt) => Arc::clone(rt),
            None => runtime.insert(Runtime::new()?).clone(),
        };
        let at = |e: crate::plugin::LoadError| match p.policy.links().len() {
            1 => anyhow!("port `{}`: {e}", p.name),
            _ => anyhow!("port `{}`: link `{}`: {e}", p.name, pol.link_name()),
        };
        let plugin = Plugin::load(&rt, pol).map_err(at)?;
        let queue = pairs.iter().find(|s| s.rx == i).map_or(0, |s| s.rxq);
        let counters = Arc::new(PluginCounters::default());
        let env =
            crate::plugin::StreamEnv { port: i as u16, queue, ..crate::plugin::StreamEnv::alone(injects.clone()) };
        plugin
            .instantiate(&Arc::new(env), simd, &counters)
            .map_err(|e| anyhow!("port `{}`: plugin {}: {e:#}", p.name, pol.plugin.display()))?;
    }
    Ok(())
}
