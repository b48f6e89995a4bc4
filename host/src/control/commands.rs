//! The requests the control socket answers. A request is one JSON object on one line with a `cmd`
//! and its arguments; the answer is one line: `{"ok": true, "result": ...}` or
//! `{"ok": false, "error": "..."}`.

use super::state::{error, State};
use crate::stats;
use serde_json::{json, Value};
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

/// Most map entries one `map_dump` page holds (a request may ask for fewer with `limit`).
pub const MAX_DUMP: usize = 4096;
/// About the most bytes of keys and values one `map_dump` page holds (the answer is twice that in
/// hex): a client is answered page by page, so the server never holds a whole table for it.
pub const MAX_DUMP_BYTES: usize = 1 << 20;

/// How long `reload` waits for the outcome.
const RELOAD_WAIT: Duration = Duration::from_secs(30);

/// The commands, for errors and `help`.
pub const COMMANDS: &str =
    "version, stats, ports, streams, policies, policy {action: enable|disable, port, link?}, maps, map_dump {port, map, cursor?, limit?}, map_get|map_delete {port, map, key}, map_update {port, map, key, value}, capture {port, dir?, queue?, count?, snaplen?, filter?}, events {port, count?}, trace {port, count?}, reload, help";

/// The answer line to one request line.
pub fn answer(line: &[u8], st: &State) -> String {
    let req: Value = match serde_json::from_slice(line) {
        Ok(v) => v,
        Err(e) => return error(&format!("not JSON ({e}); send one object per line, e.g. {{\"cmd\": \"stats\"}}")),
    };
    let Some(cmd) = req.get("cmd").and_then(Value::as_str) else {
        return error(&format!("no \"cmd\" string in the request; commands: {COMMANDS}"));
    };
    match run(cmd, &req, st) {
        Ok(result) => format!("{}\n", json!({"ok": true, "result": result})),
        Err(e) => error(&e),
    }
}

fn run(cmd: &str, req: &Value, st: &State) -> Result<Value, String> {
    Ok(match cmd {
        "version" => {
            json!({"version": env!("CARGO_PKG_VERSION"), "abi": format!("{}.{}", wasmdp_abi::ABI_MAJOR, wasmdp_abi::ABI_MINOR)})
        }
        "stats" => live(st),
        "ports" => live(st)["ports"].take(),
        "streams" => live(st)["streams"].take(),
        "policies" => policies(st),
        "maps" => maps(st),
        "map_dump" => map_dump(req, st)?,
        "map_get" | "map_update" | "map_delete" => map_entry(req, st)?,
        "policy" => policy(req, st)?,
        "trace" => super::trace::trace(req, st)?,
        "reload" => reload(st)?,
        "help" => json!(COMMANDS),
        other => return Err(format!("unknown command {other:?}; commands: {COMMANDS}")),
    })
}

/// The `--stats-json` document as of now.
pub(crate) fn live(st: &State) -> Value {
    let facts =
        stats::RunFacts { duration_s: st.start.elapsed().as_secs_f64(), simd: st.simd.clone(), ..Default::default() };
    stats::report_json(&st.view, &facts)
}

fn policies(st: &State) -> Value {
    let plugins = st.view.plugins_per_port();
    let shown = st.plugins.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let out: Vec<Value> = st
        .view
        .ports
        .iter()
        .zip(&plugins)
        .enumerate()
        .filter_map(|(i, (name, p))| {
            let p = p.as_ref()?;
            let state = |p: &crate::stats::PluginTotals| match () {
                _ if p.disabled > 0 => "disabled",
                _ if p.failed > 0 => "failed",
                _ => "running",
            };
            let chain = shown.get(i).cloned().unwrap_or_default();
            let file = chain.first();
            let links: Vec<Value> = chain
                .iter()
                .map(|f| {
                    let l = p.links.iter().find(|(n, _)| *n == f.link).map(|(_, l)| l.clone()).unwrap_or_default();
                    json!({"link": f.link, "plugin": f.path, "sha256": f.sha256, "abi": f.abi, "state": state(&l),
                        "calls": l.calls, "traps": l.traps, "timeouts": l.timeouts, "errors": l.errors,
                        "sticky": l.sticky, "drops": l.drops, "ns_per_call": l.ns_per_call(),
                        "disabled_streams": l.disabled, "counters": l.counters, "gauges": l.gauges})
                })
                .collect();
            Some(json!({
                "port": name, "plugin": file.map(|f| &f.path), "sha256": file.map(|f| &f.sha256),
                "abi": file.map(|f| &f.abi),
                "state": state(p),
                "generation": st.reloads.generation.load(Relaxed), "calls": p.calls, "traps": p.traps,
                "timeouts": p.timeouts, "errors": p.errors, "sticky": p.sticky, "drops": p.drops,
                "disabled_streams": p.disabled, "counters": p.counters, "gauges": p.gauges, "links": links,
            }))
        })
        .collect();
    json!(out)
}

/// `policy enable|disable PORT [LINK]`: asks every stream receiving on the port, for every link of
/// its chain or the one named; each carries it out at its next burst (waited for up to a second
/// while traffic flows).
fn policy(req: &Value, st: &State) -> Result<Value, String> {
    let arg = |k: &str| req.get(k).and_then(Value::as_str).ok_or(format!("policy needs \"{k}\" (a string)"));
    let (action, port) = (arg("action")?, arg("port")?);
    let (code, disabled) = match action {
        "enable" => (crate::plugin::OPERATOR_ENABLE, false),
        "disable" => (crate::plugin::OPERATOR_DISABLE, true),
        other => return Err(format!("policy action {other:?}: enable or disable")),
    };
    let link = match req.get("link") {
        None | Some(Value::Null) => None,
        Some(v) => Some(v.as_str().ok_or("policy: \"link\" must be a string (a link name)")?),
    };
    let i = st.view.ports.iter().position(|p| p == port).ok_or(format!("no port {port:?}"))?;
    let counters: Vec<_> = st
        .view
        .streams
        .iter()
        .zip(&st.view.plugins)
        .filter(|((s, _), _)| usize::from(s.rx_port) == i)
        .flat_map(|(_, links)| links.snapshot())
        .filter(|(name, pc)| link.is_none_or(|l| **name == *l) && pc.attached.load(Relaxed))
        .map(|(_, pc)| pc)
        .collect();
    if counters.is_empty() {
        return Err(match link {
            Some(l) => format!("port {port:?} has no policy link {l:?}"),
            None => format!("port {port:?} has no policy"),
        });
    }
    counters.iter().for_each(|pc| pc.operator.store(code, Relaxed));
    let until = Instant::now() + Duration::from_secs(1);
    let done = || counters.iter().all(|pc| pc.operator.load(Relaxed) == 0);
    while !done() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(2));
    }
    let state = if done() {
        if disabled {
            "disabled"
        } else {
            "running"
        }
    } else {
        "requested (no burst yet)"
    };
    Ok(json!({"port": port, "link": link, "action": action, "streams": counters.len(), "state": state}))
}

fn maps(st: &State) -> Value {
    let out: Vec<Value> = st
        .view
        .ports
        .iter()
        .zip(&st.view.maps)
        .flat_map(|(port, reg)| reg.snapshot().into_iter().map(move |m| json!({"port": port, "map": m})))
        .collect();
    json!(out)
}

fn map_dump(req: &Value, st: &State) -> Result<Value, String> {
    let arg = |k: &str| req.get(k).and_then(Value::as_str).ok_or(format!("map_dump needs \"{k}\" (a string)"));
    let (port, map) = (arg("port")?, arg("map")?);
    let number = |k: &str, default: u64| match req.get(k) {
        None | Some(Value::Null) => Ok(default),
        Some(v) => v.as_u64().ok_or(format!("map_dump: \"{k}\" must be a number of 0 or more, not {v}")),
    };
    let cursor = number("cursor", 0)?;
    let limit = number("limit", MAX_DUMP as u64)?;
    if !(1..=MAX_DUMP as u64).contains(&limit) {
        return Err(format!("map_dump: \"limit\" {limit} is outside 1..={MAX_DUMP}"));
    }
    let i = st.view.ports.iter().position(|p| p == port).ok_or(format!("no port {port:?}"))?;
    let page = st
        .view
        .maps
        .get(i)
        .and_then(|r| r.dump_page(map, cursor, limit as usize, MAX_DUMP_BYTES))
        .ok_or(format!("port {port:?} has no map {map:?}"))?;
    let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
    let layout = st.view.maps.get(i).and_then(|r| r.layout(map));
    let entries: Vec<Value> = page
        .rows
        .iter()
        .map(|(k, v)| match &layout {
            Some(l) => json!({"key": hex(k), "value": hex(v), "text": l.show(k, v)}),
            None => json!({"key": hex(k), "value": hex(v)}),
        })
        .collect();
    let spec = &page.spec;
    Ok(json!({
        "port": port, "map": map, "kind": spec.kind.name(), "key_size": spec.key_size,
        "value_size": spec.value_size, "capacity": spec.capacity, "count": page.count,
        "entries": entries, "next": page.next,
    }))
}

/// `map_get`, `map_update` and `map_delete` of one entry, key and value in hex of exactly the map's
/// sizes. A per-instance map reads summed (as its dump) and is not written: each instance's table
/// is its own.
fn map_entry(req: &Value, st: &State) -> Result<Value, String> {
    let cmd = req["cmd"].as_str().unwrap_or_default();
    let arg = |k: &str| req.get(k).and_then(Value::as_str).ok_or(format!("{cmd} needs \"{k}\" (a string)"));
    let (port, map) = (arg("port")?, arg("map")?);
    let i = st.view.ports.iter().position(|p| p == port).ok_or(format!("no port {port:?}"))?;
    let (spec, tables) =
        st.view.maps.get(i).and_then(|r| r.tables(map)).ok_or(format!("port {port:?} has no map {map:?}"))?;
    let layout = st.view.maps.get(i).and_then(|r| r.layout(map));
    let bytes = |k: &str, size: u32| -> Result<Vec<u8>, String> {
        use crate::plugin::maps::layout::{bytes_of, Side};
        let side = if k == "key" { Side::Key } else { Side::Value };
        let lpm = spec.kind == crate::plugin::maps::MapKind::LpmTrie;
        bytes_of(arg(k)?, side, size, layout.as_deref(), lpm).map_err(|e| format!("{cmd}: \"{k}\" of map {map:?}: {e}"))
    };
    let key = bytes("key", spec.key_size)?;
    let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
    if cmd == "map_get" {
        let mut sum: Option<Vec<u8>> = None;
        let mut value = vec![0u8; spec.value_size as usize];
        for t in &tables {
            if t.lookup(&key, &mut value) {
                match &mut sum {
                    None => sum = Some(value.clone()),
                    Some(s) => crate::plugin::maps::add_words(s, &value),
                }
            }
        }
        let mut answer = json!({"port": port, "map": map, "key": hex(&key), "found": sum.is_some(), "value": sum.as_ref().map(|v| hex(v))});
        if let (Some(l), Some(v)) = (&layout, &sum) {
            answer["text"] = json!(l.show(&key, v));
        }
        return Ok(answer);
    }
    let [table] = tables.as_slice() else {
        return Err(format!(
            "{cmd}: map {map:?} is {}: one table per instance, which the control socket does not write",
            spec.kind.name()
        ));
    };
    if cmd == "map_delete" {
        return Ok(json!({"port": port, "map": map, "key": hex(&key), "deleted": table.delete(&key)}));
    }
    let value = bytes("value", spec.value_size)?;
    table.update(&key, &value).map_err(|e| match e {
        crate::plugin::maps::MapError::Full => format!("map_update: map {map:?} is full ({} entries)", spec.capacity),
        crate::plugin::maps::MapError::BadIndex => {
            format!("map_update: index {} is past array {map:?}'s {} entries", hex(&key), spec.capacity)
        }
        crate::plugin::maps::MapError::BadPrefix => format!(
            "map_update: key {}: the prefix length (first 4 bytes, little-endian) is past the {} address bits",
            hex(&key),
            (spec.key_size - 4) * 8
        ),
    })?;
    Ok(json!({"port": port, "map": map, "key": hex(&key), "value": hex(&value)}))
}

/// Bytes of a hex string (two digits a byte, either case), None if it is not one.
fn reload(st: &State) -> Result<Value, String> {
    let flag = st
        .reload
        .as_ref()
        .ok_or("this dataplane does not watch a config file (started with --no-reload or without one)")?;
    let r = &st.reloads;
    let (applied, rejected) = (r.applied.load(Relaxed), r.rejected.load(Relaxed));
    flag.store(true, Relaxed);
    let until = Instant::now() + RELOAD_WAIT;
    while Instant::now() < until {
        if r.applied.load(Relaxed) > applied {
            return Ok(json!({"outcome": "applied", "generation": r.generation.load(Relaxed)}));
        }
        if r.rejected.load(Relaxed) > rejected {
            let why = r.last_error.lock().unwrap_or_else(|p| p.into_inner()).clone();
            return Ok(json!({"outcome": "rejected", "error": why, "generation": r.generation.load(Relaxed)}));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    Err(format!("no outcome after {} s (a plugin compiling?); see the log", RELOAD_WAIT.as_secs()))
}
