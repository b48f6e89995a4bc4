//! Preparing a reload's policies, off the workers: which links of each port's new chain are the
//! running ones (kept with their instances) and which are loaded anew, and the summary lines that
//! say so.

use crate::config::{Config, PolicyCfg, PortCfg};
use crate::plugin::{self, Plugin};
use anyhow::anyhow;
use std::sync::Arc;

/// A loaded link of a port's chain.
#[derive(Clone)]
pub struct LoadedPlugin {
    /// The link's name.
    pub name: Arc<str>,
    /// The checked, compiled module.
    pub plugin: Arc<Plugin>,
}

/// Where a link of a port's next chain comes from.
pub(super) enum Prepared {
    /// The running link of this index.
    Keep(usize),
    /// Loaded anew.
    Load(LoadedPlugin),
}

/// Summary lines for the ports whose chains change other than as one policy for another (which
/// `diff::summary` words): links added, removed, reloaded, reordered.
pub(super) fn chain_lines(new: &Config, old: &[Vec<LoadedPlugin>], prepared: &[Option<Vec<Prepared>>]) -> Vec<String> {
    let mut out = Vec::new();
    for (i, p) in prepared.iter().enumerate() {
        let Some(links) = p else { continue };
        let names: Vec<String> = new.ports[i].policy.links().iter().map(|p| p.link_name()).collect();
        if names.len() <= 1 && old[i].len() <= 1 {
            continue;
        }
        let mut what = Vec::new();
        for (name, p) in names.iter().zip(links) {
            match p {
                Prepared::Load(_) if old[i].iter().any(|l| *l.name == **name) => {
                    what.push(format!("link `{name}` reloaded"))
                }
                Prepared::Load(_) => what.push(format!("link `{name}` added")),
                Prepared::Keep(_) => {}
            }
        }
        for l in &old[i] {
            if !names.iter().any(|n| **n == *l.name) {
                what.push(format!("link `{}` removed", l.name));
            }
        }
        let kept: Vec<usize> =
            links.iter().filter_map(|p| if let Prepared::Keep(j) = p { Some(*j) } else { None }).collect();
        if kept.windows(2).any(|w| w[0] > w[1]) {
            what.push("links reordered".into());
        }
        what.push(format!("chain now {}", if names.is_empty() { "empty".into() } else { names.join(" -> ") }));
        out.push(format!("port `{}`: {}", new.ports[i].name, what.join("; ")));
    }
    out
}

/// Per port: `None` when its chain stays as it runs (`running`, under `old`), else where each link
/// of its new chain comes from (a running link kept with its instances, or a link loaded anew with
/// `load`: new, edited, or with a file of new content); and which files of the port's kept-by-name
/// links have new content under the same path (the plugin, an initial entries file), as summary
/// lines.
#[allow(clippy::type_complexity)]
pub(super) fn prepare(
    old: &Config,
    running: &[Vec<LoadedPlugin>],
    new: &Config,
    load: &mut dyn FnMut(&PolicyCfg) -> anyhow::Result<LoadedPlugin>,
) -> anyhow::Result<(Vec<Option<Vec<Prepared>>>, Vec<Vec<String>>)> {
    let mut prepared = Vec::with_capacity(new.ports.len());
    let mut files_changed = Vec::with_capacity(new.ports.len());
    for (i, port) in new.ports.iter().enumerate() {
        let old_links = old.ports[i].policy.links();
        let mut changed = Vec::new();
        let mut links = Vec::with_capacity(port.policy.links().len());
        for pc in port.policy.links() {
            let name = pc.link_name();
            let kept = match running[i].iter().position(|l| *l.name == *name) {
                Some(j) => {
                    let files = files_changed_of(port, pc, &running[i][j])?;
                    let same = old_links.get(j) == Some(pc) && files.is_empty();
                    changed.extend(files);
                    same.then_some(j)
                }
                None => None,
            };
            links.push(match kept {
                Some(j) => Prepared::Keep(j),
                None => Prepared::Load(load(pc).map_err(|e| named(port, pc, e))?),
            });
        }
        let same = links.len() == running[i].len()
            && links.iter().enumerate().all(|(k, p)| matches!(p, Prepared::Keep(j) if *j == k));
        files_changed.push(changed);
        prepared.push((!same).then_some(links));
    }
    Ok((prepared, files_changed))
}

/// An error loading link `pc` of `port`'s chain, naming the port (and the link, in a chain of
/// several).
pub(super) fn named(port: &PortCfg, pc: &PolicyCfg, e: anyhow::Error) -> anyhow::Error {
    match port.policy.links().len() > 1 {
        true => anyhow!("port `{}`: link `{}`: {e:#}", port.name, pc.link_name()),
        false => anyhow!("port `{}`: {e:#}", port.name),
    }
}

/// Which files of a running link have new content under the same path: its module, and its
/// initial entries or pin files.
fn files_changed_of(port: &PortCfg, p: &PolicyCfg, l: &LoadedPlugin) -> anyhow::Result<Vec<String>> {
    let mut changed = Vec::new();
    if plugin::native::named(&p.plugin).is_none() {
        // As at start: a regular file within limits.module_kib, checked before it is read and
        // opened without blocking (a FIFO or /dev/zero put in its place is refused).
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
    Ok(changed)
}
