//! `wasmdp ctl events PORT [--count N]`: the events the port's policies emit, one JSON object per
//! line on stdout as they come (`| jq` works), with what the port's ring holds and lost so far on
//! stderr first. Ctrl-C ends it ([`super::follow`]).

use super::follow::{timed_out, Following};
use super::CtlArgs;
use serde_json::json;
use std::io::{BufRead, ErrorKind, Write};

/// Follows the events of `port`.
pub fn run(args: &CtlArgs, port: &str) -> anyhow::Result<()> {
    let socket = args.socket.clone().unwrap_or_else(super::super::default_path);
    let mut f = Following::start(&socket, &json!({"cmd": "events", "port": port, "count": args.count}))?;
    let r = &f.result;
    let kinds: Vec<String> = r["kinds"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|k| {
            format!(
                "{} ({}: {})",
                k["event"].as_str().unwrap_or(""),
                k["plugin"].as_str().unwrap_or(""),
                k["fields"].as_str().unwrap_or("")
            )
        })
        .collect();
    eprintln!(
        "events of {port}: {} emitted, {} lost (the ring was full), {} waiting; kinds: {}; Ctrl-C to stop",
        r["emitted"],
        r["lost"],
        r["waiting"],
        if kinds.is_empty() { "none yet".into() } else { kinds.join(", ") }
    );
    let mut out = std::io::stdout().lock();
    let mut line = String::new();
    loop {
        f.check_interrupt();
        match f.reader.read_line(&mut line) {
            Ok(0) => return Ok(()),
            Ok(_) if line.ends_with('\n') => {
                match out.write_all(line.as_bytes()).and_then(|_| out.flush()) {
                    Ok(()) => {}
                    Err(e) if e.kind() == ErrorKind::BrokenPipe => return Ok(()),
                    Err(e) => return Err(e.into()),
                }
                line.clear();
            }
            // A part of a line before a timeout stays in `line`; the rest comes with the next read.
            Ok(_) => {}
            Err(e) if timed_out(&e) => {}
            Err(e) => return Err(e.into()),
        }
    }
}
