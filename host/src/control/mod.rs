//! The control socket: a Unix stream socket serving line-delimited JSON requests from operators
//! (`wasmdp ctl`), on a thread of its own that only reads the counters the workers write (atomics)
//! and never blocks a worker. The protocol is in docs/CONTROL.md.
//!
//! - [`socket`]: where it lives, owner-only, a stale socket replaced, a live one left alone;
//! - [`server`]: accepting clients, each on a short-lived thread, with size and time limits;
//! - [`state`]: what every request reads; [`commands`]: what each request answers;
//! - [`deadline`]: writing to a client by a deadline;
//! - [`follow`]: answers that follow the dataplane: [`capture`] (a pcapng stream) and [`events`]
//!   (the policies' events as JSON lines);
//! - [`trace`]: the `trace` request, the paths of the next packets a port receives;
//! - [`ctl`]: the `wasmdp ctl` client;
//! - [`metrics`]: Prometheus metrics over HTTP, from the same counters;
//! - [`top`]: `wasmdp ctl top`, the live view.

mod capture;
mod commands;
pub mod ctl;
mod deadline;
mod events;
mod follow;
mod http;
pub mod metrics;
mod server;
mod socket;
mod state;
pub mod top;
mod trace;

pub use server::{spawn, MAX_CLIENTS, MAX_REQUEST, TIMEOUT};
pub use socket::default_path;
pub use state::State;

/// One request to a socket and its answer (for `wasmdp ctl` and tests): `request` is one JSON
/// object; the answer is the server's JSON line.
pub fn request(path: &std::path::Path, request: &serde_json::Value) -> anyhow::Result<serde_json::Value> {
    use std::io::{BufRead, BufReader, Write};
    let mut s = std::os::unix::net::UnixStream::connect(path)
        .map_err(|e| anyhow::anyhow!("control socket {}: {e} (is wasmdp running with it?)", path.display()))?;
    s.set_read_timeout(Some(std::time::Duration::from_secs(40)))?;
    s.write_all(format!("{request}\n").as_bytes())?;
    let mut line = String::new();
    BufReader::new(s).read_line(&mut line)?;
    serde_json::from_str(&line)
        .map_err(|e| anyhow::anyhow!("control socket {}: bad answer ({e}): {line:?}", path.display()))
}
