//! `wasmdp ctl`: one request to a running dataplane's control socket, printed as a table (or as
//! the JSON answer with `--json`); `capture` ([`capture`]) writes the pcapng stream it answers,
//! `events` ([`events`]) the policies' events as JSON lines; `trace` ([`trace`]) prints packets' paths.

mod capture;
mod events;
mod follow;
mod trace;

use clap::Args;
use serde_json::{json, Value};
use std::path::PathBuf;

/// `wasmdp ctl`.
#[derive(Debug, Args)]
pub struct CtlArgs {
    /// The socket (default: the per-user path `wasmdp run` uses).
    #[arg(long, value_name = "PATH")]
    pub socket: Option<PathBuf>,
    /// Print the JSON answer instead of a table.
    #[arg(long)]
    pub json: bool,
    /// `top`: stop after this many refreshes; `capture`: after this many packets; `events`: after
    /// this many events (0: until interrupted); `trace`: packets to trace (0: 10).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub count: u64,
    /// `capture`: what the port receives only.
    #[arg(long, conflicts_with_all = ["tx", "both"])]
    pub rx: bool,
    /// `capture`: what the port transmits only.
    #[arg(long, conflicts_with = "both")]
    pub tx: bool,
    /// `capture`: both directions (the default).
    #[arg(long)]
    pub both: bool,
    /// `capture`: one queue only (the RX queue for received packets, the TX queue for sent ones).
    #[arg(long, value_name = "Q")]
    pub queue: Option<u16>,
    /// `capture`: bytes kept of each packet (default: whole packets).
    #[arg(long, value_name = "B")]
    pub snaplen: Option<u64>,
    /// `capture`: only packets this pcap filter expression matches (tcpdump's syntax).
    #[arg(long, value_name = "EXPR")]
    pub filter: Option<String>,
    /// `capture`: the pcapng file to write, `-` for stdout.
    #[arg(short = 'w', value_name = "FILE")]
    pub write: Option<PathBuf>,
    /// version | stats | ports | streams | policies | policy enable|disable PORT (LINK) | maps |
    /// map dump PORT MAP | map get|delete PORT MAP KEY | map update PORT MAP KEY VALUE | reload |
    /// top | capture PORT -w FILE | events PORT | trace PORT | help (keys and values in hex, or as `name=value ...` when the map's module declares a
    /// layout: quote them)
    #[arg(required = true, num_args = 1..)]
    pub command: Vec<String>,
}

/// Runs the command; an error answer is an error (exit 1) with the server's message.
pub fn main(args: &CtlArgs) -> anyhow::Result<()> {
    let words: Vec<&str> = args.command.iter().map(String::as_str).collect();
    if words == ["top"] {
        return super::top::run(&args.socket.clone().unwrap_or_else(super::default_path), args.count);
    }
    if let ["events", rest @ ..] = words.as_slice() {
        let [port] = rest else { anyhow::bail!("usage: wasmdp ctl events PORT [--count N]") };
        return events::run(args, port);
    }
    if let ["capture", rest @ ..] = words.as_slice() {
        let [port] = rest else {
            anyhow::bail!("usage: wasmdp ctl capture PORT [--rx|--tx|--both] [--queue Q] [--count N] [--snaplen B] [--filter EXPR] -w FILE|-")
        };
        return capture::run(args, port);
    }
    let req = match words.as_slice() {
        ["map", "dump", port, map] => json!({"cmd": "map_dump", "port": port, "map": map}),
        ["map", "get", port, map, key] => json!({"cmd": "map_get", "port": port, "map": map, "key": key}),
        ["map", "delete", port, map, key] => json!({"cmd": "map_delete", "port": port, "map": map, "key": key}),
        ["map", "update", port, map, key, value] => {
            json!({"cmd": "map_update", "port": port, "map": map, "key": key, "value": value})
        }
        ["map", ..] => anyhow::bail!(
            "usage: wasmdp ctl map dump PORT MAP | map get|delete PORT MAP KEY | map update PORT MAP KEY VALUE (hex)"
        ),
        ["policy", action @ ("enable" | "disable"), port] => json!({"cmd": "policy", "action": action, "port": port}),
        ["policy", action @ ("enable" | "disable"), port, link] => {
            json!({"cmd": "policy", "action": action, "port": port, "link": link})
        }
        ["policy", ..] => anyhow::bail!("usage: wasmdp ctl policy enable|disable PORT [LINK]"),
        ["trace", port] => json!({"cmd": "trace", "port": port, "count": (args.count != 0).then_some(args.count)}),
        ["trace", ..] => anyhow::bail!("usage: wasmdp ctl trace PORT [--count N] (default 10 packets)"),
        [cmd] => json!({"cmd": cmd}),
        _ => anyhow::bail!(
            "one command ({}), `policy enable|disable PORT [LINK]` or `map dump PORT MAP`",
            super::commands::COMMANDS
        ),
    };
    let path = args.socket.clone().unwrap_or_else(super::default_path);
    if req["cmd"] == "map_dump" {
        return map_dump(&path, req, args.json);
    }
    let answer = super::request(&path, &req)?;
    if answer["ok"] != true {
        anyhow::bail!("{}", answer["error"].as_str().unwrap_or("the server answered an error"));
    }
    let result = &answer["result"];
    if args.json {
        crate::output::print(&format!("{}\n", serde_json::to_string_pretty(result)?))?;
        return Ok(());
    }
    crate::output::print(&table(req["cmd"].as_str().unwrap_or(""), result))?;
    Ok(())
}

/// `map dump PORT MAP`: page after page (the server answers at most a page per request), each
/// printed as it comes; with `--json`, one document of every entry.
fn map_dump(path: &std::path::Path, mut req: Value, json: bool) -> anyhow::Result<()> {
    let mut all: Option<Value> = None;
    loop {
        let answer = super::request(path, &req)?;
        if answer["ok"] != true {
            anyhow::bail!("{}", answer["error"].as_str().unwrap_or("the server answered an error"));
        }
        let r = &answer["result"];
        let rows = r["entries"].as_array().cloned().unwrap_or_default();
        if json {
            match &mut all {
                None => all = Some(r.clone()),
                Some(doc) => {
                    if let Some(list) = doc["entries"].as_array_mut() {
                        list.extend(rows);
                    }
                }
            }
        } else {
            let mut out = String::new();
            if req.get("cursor").is_none() {
                out += &format!("{} {} ({} of {} entries)\n", r["port"], r["map"], r["count"], r["capacity"]);
            }
            for e in &rows {
                match e["text"].as_str() {
                    Some(text) => out += &format!("{text}\n"),
                    None => {
                        out += &format!("{}  {}\n", e["key"].as_str().unwrap_or(""), e["value"].as_str().unwrap_or(""))
                    }
                }
            }
            crate::output::print(&out)?;
        }
        match r["next"].as_u64() {
            Some(c) => req["cursor"] = json!(c),
            None => break,
        }
    }
    if let Some(mut doc) = all {
        if let Some(o) = doc.as_object_mut() {
            o.remove("next");
        }
        crate::output::print(&format!("{}\n", serde_json::to_string_pretty(&doc)?))?;
    }
    Ok(())
}

/// The human form of an answer.
fn table(cmd: &str, r: &Value) -> String {
    let cols: &[&str] = match cmd {
        "ports" => &["name", "rx_packets", "tx_packets", "dropped", "rx_nombuf", "plugin_calls", "plugin_traps"],
        "streams" => &["rx_port", "rx_queue", "tx_port", "engine", "lcore", "rx_packets", "tx_packets", "dropped"],
        "policies" => &["port", "state", "plugin", "abi", "generation", "calls", "traps", "errors", "timeouts"],
        "stats" => return table("ports", &r["ports"]),
        "trace" => return trace::text(r),
        "maps" => {
            let rows: Vec<Value> = r
                .as_array()
                .into_iter()
                .flatten()
                .map(|m| {
                    let mut row = m["map"].clone();
                    row["port"] = m["port"].clone();
                    row
                })
                .collect();
            return render(&["port", "name", "kind", "key_size", "value_size", "capacity", "entries"], &rows);
        }
        _ => return format!("{}\n", serde_json::to_string_pretty(r).unwrap_or_default()),
    };
    render(cols, r.as_array().map_or(&[][..], Vec::as_slice))
}

/// Rows as aligned columns.
fn render(cols: &[&str], rows: &[Value]) -> String {
    let cell = |v: &Value| match v {
        Value::String(s) => s.clone(),
        Value::Null => "-".into(),
        v => v.to_string(),
    };
    let cells: Vec<Vec<String>> = rows.iter().map(|r| cols.iter().map(|c| cell(&r[*c])).collect()).collect();
    let width = |i: usize| cells.iter().map(|r| r[i].len()).chain([cols[i].len()]).max().unwrap_or(0);
    let widths: Vec<usize> = (0..cols.len()).map(width).collect();
    let line = |vals: Vec<String>| {
        vals.iter().zip(&widths).map(|(v, w)| format!("{v:<w$}")).collect::<Vec<_>>().join("  ").trim_end().to_string()
            + "\n"
    };
    let mut out = line(cols.iter().map(|c| c.to_string()).collect());
    for r in cells {
        out += &line(r);
    }
    out
}
