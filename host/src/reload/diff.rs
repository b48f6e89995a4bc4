//! What changed between two configurations: whether a restart is needed, and a per-port summary.

use crate::config::{Config, PortCfg};

/// The keys that change live, for messages.
pub const LIVE_KEYS: &str = "burst, engine, and per port engine, tx_offloads, tx_vlan, tx_vlan_outer, policy";

/// `cfg` with every live key reset, so that what remains must be equal for a live reload.
fn fixed_part(cfg: &Config) -> Config {
    let mut c = cfg.clone();
    c.burst = Default::default();
    c.engine = crate::config::EngineName(String::new());
    for p in &mut c.ports {
        p.engine = None;
        p.tx_offloads = Default::default();
        p.tx_vlan = Default::default();
        p.tx_vlan_outer = Default::default();
        p.policy = Default::default();
    }
    c
}

/// Ok when `new` differs from `old` only in keys that change live; otherwise the first key that
/// does not, in a message that says a restart is needed.
pub fn restart_needed(old: &Config, new: &Config) -> Result<(), String> {
    let (a, b) = (fixed_part(old), fixed_part(new));
    if a == b {
        return Ok(());
    }
    let key = first_difference(&a, &b);
    Err(format!("`{key}` changed, which needs a restart (live changes: {LIVE_KEYS}); the running configuration stays"))
}

fn first_difference(a: &Config, b: &Config) -> String {
    let top: [(&str, bool); 7] = [
        ("lcores", a.lcores != b.lcores),
        ("simd", a.simd != b.simd),
        ("pool", a.pool != b.pool),
        ("tx_retry", a.tx_retry != b.tx_retry),
        ("topology", a.topology != b.topology),
        ("streams", a.streams != b.streams),
        ("prefetch_flow_meta", a.prefetch_flow_meta != b.prefetch_flow_meta),
    ];
    if let Some((k, _)) = top.iter().find(|(_, d)| *d) {
        return k.to_string();
    }
    if a.ports.len() != b.ports.len() {
        return format!("ports (from {} to {} ports)", a.ports.len(), b.ports.len());
    }
    for (i, (p, q)) in a.ports.iter().zip(&b.ports).enumerate() {
        if let Some(k) = port_difference(p, q) {
            return format!("ports[{i}].{k}");
        }
    }
    "ports".into()
}

fn port_difference(p: &PortCfg, q: &PortCfg) -> Option<&'static str> {
    let keys: [(&str, bool); 14] = [
        ("name", p.name != q.name),
        ("driver", p.driver != q.driver),
        ("queues", p.queues != q.queues),
        ("mac", p.mac != q.mac),
        ("peer_mac", p.peer_mac != q.peer_mac),
        ("frame", p.frame != q.frame),
        ("ring", p.ring != q.ring),
        ("tx_first", p.tx_first != q.tx_first),
        ("pcap", p.pcap != q.pcap),
        ("af_packet", p.af_packet != q.af_packet),
        ("icmpecho", p.icmpecho != q.icmpecho),
        ("vxlan", p.vxlan != q.vxlan),
        ("geneve", p.geneve != q.geneve),
        ("tunnel_others", p.tunnel_others != q.tunnel_others),
    ];
    keys.iter().find(|(_, d)| *d).map(|(k, _)| *k)
}

/// One line per port whose live settings change (`files_changed[i]`: what the port's files with new
/// content under the same paths were, as `plane::Plane::prepare_plugins` says it).
pub fn summary(old: &Config, new: &Config, files_changed: &[Vec<String>]) -> Vec<String> {
    let mut out = Vec::new();
    if old.burst != new.burst {
        out.push(format!("burst {} -> {}", old.burst.0, new.burst.0));
    }
    for (i, (p, q)) in old.ports.iter().zip(&new.ports).enumerate() {
        let mut what = Vec::new();
        let engine = |c: &Config, p: &PortCfg| p.engine.as_ref().unwrap_or(&c.engine).0.clone();
        let (e0, e1) = (engine(old, p), engine(new, q));
        if e0 != e1 {
            what.push(format!("engine {e0} -> {e1}"));
        }
        if (p.tx_offloads, p.tx_vlan, p.tx_vlan_outer) != (q.tx_offloads, q.tx_vlan, q.tx_vlan_outer) {
            what.push(format!(
                "tx_offloads [{}] -> [{}]",
                crate::offload::names(p.tx_offloads.0).join(","),
                crate::offload::names(q.tx_offloads.0).join(",")
            ));
        }
        let name = |pc: Option<&crate::config::PolicyCfg>| {
            pc.map(|x| x.plugin.display().to_string()).unwrap_or_else(|| "none".into())
        };
        let (a, b) = (&p.policy, &q.policy);
        let files = files_changed.get(i).into_iter().flatten().cloned();
        match (a.first(), b.first()) {
            // Chains of several links: `plane::chain_lines` says what changed, link by link.
            _ if a.links().len() > 1 || b.links().len() > 1 => what.extend(files),
            (x, y) if a != b && name(x) != name(y) => what.push(format!("policy {} -> {}", name(x), name(y))),
            (_, y) if a != b => what.push(format!("policy {} settings changed", name(y))),
            _ => what.extend(files),
        }
        if !what.is_empty() {
            out.push(format!("port `{}`: {}", q.name, what.join("; ")));
        }
    }
    out
}
