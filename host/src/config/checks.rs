//! Checks that span several keys (names that refer to other entries, sizes that must fit together).

use super::{Config, PortCfg};
use crate::mbuf::flags;
use std::collections::HashSet;

/// Checks what parsing alone cannot. Errors name the key path (`ports[1].ring.peer`), the bad value
/// and what is allowed.
pub fn validate(cfg: &Config) -> Result<(), String> {
    if cfg.ports.is_empty() {
        return Err("ports: at least one port is required".into());
    }
    if cfg.ports.len() > MAX_PORTS {
        return Err(format!(
            "ports: {} ports given; at most {MAX_PORTS} are supported (the most a plugin's context describes)",
            cfg.ports.len()
        ));
    }
    let mut names = HashSet::new();
    for (i, p) in cfg.ports.iter().enumerate() {
        if p.name.is_empty() {
            return Err(format!("ports[{i}].name: must not be empty"));
        }
        if !names.insert(p.name.as_str()) {
            return Err(format!("ports[{i}].name: `{}` is used by two ports; names must be unique", p.name));
        }
        check_port(cfg, i, p)?;
    }
    if !cfg.pool.data_room.0.is_multiple_of(64) {
        return Err(format!("pool.data_room: {} is not a multiple of 64", cfg.pool.data_room.0));
    }
    check_streams(cfg)?;
    let pairs = super::pairs(cfg)?;
    super::tunnel::check_streams(cfg, &pairs)?;
    let lcores = lcores(cfg)?;
    super::sizes::check(cfg, &pairs, lcores.len())
}

/// Most ports a config may have: what the plugin ABI's context describes.
pub const MAX_PORTS: usize = wasmdp_abi::context::MAX_PORTS;

/// Most parameters a policy may have.
pub const MAX_PARAMS: usize = 256;

/// Most names in a policy's `shared_maps`, and most maps in its `map_entries`.
pub const MAX_SHARED_MAPS: usize = 64;

/// Largest core number accepted (the kernel's CPU_SETSIZE - 1).
pub const MAX_LCORE: usize = 1023;

/// The worker cores: `lcores:`, checked against the cores this process may use, or the last of those.
pub fn lcores(cfg: &Config) -> Result<Vec<usize>, String> {
    let ids: Vec<usize> = core_affinity::get_core_ids().unwrap_or_default().into_iter().map(|c| c.id).collect();
    let Some(want) = &cfg.lcores else {
        return Ok(vec![ids.last().copied().unwrap_or(0)]);
    };
    if want.is_empty() {
        return Err("lcores: list is empty; give at least one core or remove the key".into());
    }
    let mut seen = HashSet::new();
    for &l in want {
        if l > MAX_LCORE {
            return Err(format!("lcores: core {l} is out of range; cores are numbered 0..={MAX_LCORE}"));
        }
        if !ids.is_empty() && !ids.contains(&l) {
            return Err(format!("lcores: core {l} is not available; this process may use cores {ids:?}"));
        }
        if !seen.insert(l) {
            return Err(format!("lcores: core {l} is listed twice"));
        }
    }
    Ok(want.clone())
}

fn check_port(cfg: &Config, i: usize, p: &PortCfg) -> Result<(), String> {
    let at = format!("ports[{i}] (`{}`)", p.name);
    let driver = crate::ports::lookup(&p.driver.0).ok_or_else(|| format!("{at}.driver: unknown"))?;
    (driver.check)(cfg, p).map_err(|e| format!("{at}.{e}"))?;
    super::tunnel::check_port(&at, p)?;
    let outer = p.frame.tunnel.and_then(|k| super::tunnel::section(p, k)).map_or(0, |t| t.outer_len());
    if p.frame.size.get() + outer > cfg.pool.data_room.get() {
        let what = if outer == 0 { String::new() } else { format!(" with {outer} bytes of outer headers") };
        return Err(format!(
            "{at}.frame.size: {}{what} does not fit pool.data_room {}; raise pool.data_room",
            p.frame.size.0, cfg.pool.data_room.0
        ));
    }
    let tags = crate::offload::tag_bytes(p.tx_offloads.0);
    if tags > cfg.pool.headroom.get() {
        return Err(format!(
            "{at}.tx_offloads: inserting tags needs {tags} bytes of pool.headroom, which is {}",
            cfg.pool.headroom.0
        ));
    }
    let engine = p.engine.as_ref().unwrap_or(&cfg.engine).0.as_str();
    match &p.icmpecho {
        None if engine == "icmpecho" => {
            return Err(format!("{at}.icmpecho: engine `icmpecho` needs the addresses to answer for, e.g. `icmpecho: {{ipv4: [10.0.0.1]}}`"))
        }
        Some(e) if e.ipv4.is_empty() && e.ipv6.is_empty() => {
            return Err(format!("{at}.icmpecho: no addresses; give `ipv4: [...]` and/or `ipv6: [...]`"))
        }
        Some(e) if e.others != "drop" && (matches!(e.others.as_str(), "icmpecho" | "txonly") || crate::engines::lookup(&e.others).is_none()) => {
            return Err(format!(
                "{at}.icmpecho.others: `{}` is not allowed; use `drop` or an engine among io, mac, macswap, 5tswap, copy, rxonly",
                e.others
            ))
        }
        _ => {}
    }
    let mut names: Vec<String> = Vec::with_capacity(p.policy.links().len());
    for (k, pol) in p.policy.links().iter().enumerate() {
        let at = format!("{at}.{}", p.policy.key(k));
        let name = pol.link_name();
        if !crate::plugin::maps::name_ok(&name) {
            return Err(format!(
                "{at}.name: {name:?} is not a link name; use 1-64 characters of [A-Za-z0-9_.-] (without `name:`, the plugin file's stem is the name)"
            ));
        }
        if let Some(j) = names.iter().position(|n| *n == name) {
            return Err(format!(
                "{at}: link name {name:?} is also link {j}'s; give each link of a chain its own `name:`"
            ));
        }
        names.push(name);
        if pol.params.len() > MAX_PARAMS {
            return Err(format!("{at}.params: {} parameters; the limit is {MAX_PARAMS}", pol.params.len()));
        }
        let max_key = crate::plugin::MAX_PARAM_KEY;
        if let Some(k) = pol.params.keys().find(|k| k.len() > max_key) {
            return Err(format!("{at}.params: a key of {} bytes; the limit is {max_key}", k.len()));
        }
        if pol.shared_maps.len() > MAX_SHARED_MAPS {
            return Err(format!("{at}.shared_maps: {} names; the limit is {MAX_SHARED_MAPS}", pol.shared_maps.len()));
        }
        if let Some(n) = pol.shared_maps.iter().find(|n| !crate::plugin::maps::name_ok(n)) {
            return Err(format!("{at}.shared_maps: {n:?} is not a map name; use 1-64 characters of [A-Za-z0-9_.-]"));
        }
        for (key, maps) in [("map_entries", &pol.map_entries), ("map_pins", &pol.map_pins)] {
            if maps.len() > MAX_SHARED_MAPS {
                return Err(format!("{at}.{key}: {} maps; the limit is {MAX_SHARED_MAPS}", maps.len()));
            }
            if let Some(n) = maps.keys().find(|n| !crate::plugin::maps::name_ok(n)) {
                return Err(format!("{at}.{key}: {n:?} is not a map name; use 1-64 characters of [A-Za-z0-9_.-]"));
            }
            if let Some(n) = maps.keys().find(|n| pol.shared_maps.contains(n)) {
                return Err(format!(
                    "{at}.{key}: map {n:?} is also in shared_maps; initial entries and pins are for a port's own maps (a shared map is filled by its policies)"
                ));
            }
        }
        if let Some(n) = pol.map_pins.keys().find(|n| pol.map_entries.contains_key(*n)) {
            return Err(format!(
                "{at}.map_pins: map {n:?} is also in map_entries; a map starts from its entries file or from its pin file, not both"
            ));
        }
    }
    if p.tx_offloads.0 & flags::TX_MACSEC != 0 && !driver.macsec {
        return Err(format!(
            "{at}.tx_offloads: macsec_insert is not possible on driver `{}`: a software port has no MACsec keys to build a SecTAG with",
            driver.name
        ));
    }
    Ok(())
}

fn check_streams(cfg: &Config) -> Result<(), String> {
    let queues = |name: &str| cfg.ports.iter().find(|p| p.name == name).map(|p| p.queues.0 as u16);
    let mut used_rx = HashSet::new();
    let mut used_tx = HashSet::new();
    for (i, s) in cfg.streams.iter().enumerate() {
        for (key, port, q) in [("rx", &s.rx, s.rx_queue), ("tx", &s.tx, s.tx_queue)] {
            let n = queues(port)
                .ok_or_else(|| format!("streams[{i}].{key}: no port named `{port}`; ports are {}", port_names(cfg)))?;
            if q >= n {
                return Err(format!(
                    "streams[{i}].{key}_queue: {q} does not exist; port `{port}` has queues 0..{}",
                    n - 1
                ));
            }
        }
        if !used_rx.insert((s.rx.as_str(), s.rx_queue)) {
            return Err(format!(
                "streams[{i}]: rx queue {} of `{}` is polled by two streams; give each its own queue",
                s.rx_queue, s.rx
            ));
        }
        if !used_tx.insert((s.tx.as_str(), s.tx_queue)) {
            return Err(format!(
                "streams[{i}]: tx queue {} of `{}` is used by two streams; give each its own queue",
                s.tx_queue, s.tx
            ));
        }
        if let (Some(l), Some(all)) = (s.lcore, &cfg.lcores) {
            if !all.contains(&l) {
                return Err(format!("streams[{i}].lcore: {l} is not in lcores {all:?}"));
            }
        }
    }
    Ok(())
}

/// The port names, for error messages.
pub fn port_names(cfg: &Config) -> String {
    cfg.ports.iter().map(|p| format!("`{}`", p.name)).collect::<Vec<_>>().join(", ")
}
