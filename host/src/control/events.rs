//! The `events` request: the answer line (the port's kinds of event and its counts so far), then
//! one JSON line per event as policies emit them (`crate::plugin::events`), until `count` events,
//! the client closes its side, or the dataplane stops. One reader per port at a time: reading
//! takes the events out of the ring.

use super::follow::{follow, End};
use super::state::{error, State};
use serde_json::{json, Value};
use std::io::Write;
use std::os::unix::net::UnixStream;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Instant;

/// Serves one `events` request on `s` until it ends.
pub fn serve(mut s: UnixStream, line: &[u8], st: &State) {
    let req: Value = serde_json::from_slice(line).unwrap_or_default();
    let deadline = || Instant::now() + super::TIMEOUT;
    let refuse = |s: &mut UnixStream, e: String| {
        let _ = super::deadline::write_by(s, error(&e).as_bytes(), deadline());
    };
    let Some(port) = req.get("port").and_then(Value::as_str) else {
        return refuse(&mut s, "events needs \"port\" (a port name)".into());
    };
    let Some(i) = st.view.ports.iter().position(|p| p == port) else {
        return refuse(&mut s, format!("events: no port {port:?}"));
    };
    let count = match req.get("count") {
        None | Some(Value::Null) => 0,
        Some(v) => match v.as_u64() {
            Some(n) => n,
            None => return refuse(&mut s, format!("events: \"count\" must be a number of 0 or more, not {v}")),
        },
    };
    let Some(events) = st.view.events.get(i) else {
        return refuse(&mut s, format!("events: port {port:?} has no event ring"));
    };
    if !events.claim() {
        return refuse(&mut s, format!("events {port}: another client is reading this port's events; one at a time"));
    }
    let kinds: Vec<Value> = events
        .kinds()
        .iter()
        .map(|k| json!({"event": k.name, "plugin": &*k.plugin, "fields": k.layout, "size": k.size}))
        .collect();
    let ok = json!({"ok": true, "result": {"port": port, "count": count, "kinds": kinds,
        "emitted": events.emitted.load(Relaxed), "lost": events.lost.load(Relaxed), "waiting": events.waiting()}});
    if super::deadline::write_by(&mut s, format!("{ok}\n").as_bytes(), deadline()) {
        let end = follow(&mut s, st, count, |out| match events.next() {
            Some(r) => {
                out.extend(events.json(port, &r).to_string().as_bytes());
                out.push(b'\n');
                1
            }
            None => 0,
        });
        if end == End::Done {
            let _ = s.flush();
        }
    }
    events.release();
}
