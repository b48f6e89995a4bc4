//! The `capture` request: the answer line, then the connection carries pcapng until the capture
//! ends (its count reached, the client closed or shut down its side, or the dataplane stopped);
//! the last blocks are each interface's statistics (seen, accepted, lost to overruns).

use super::follow::{follow, now_ns, End};
use super::state::{error, State};
use crate::capture::{pcapng, Filter, Session, Want};
use serde_json::{json, Value};
use std::io::Write;
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Longest filter expression.
pub const MAX_FILTER: usize = 4096;
/// How long the reader waits at the end for the workers to let go of the capture.
const LET_GO: Duration = Duration::from_secs(1);

/// What a `capture` request asks for, checked.
fn want(req: &Value, st: &State) -> Result<(Want, String), String> {
    let port = req.get("port").and_then(Value::as_str).ok_or("capture needs \"port\" (a port name)")?;
    let i = st.view.ports.iter().position(|p| p == port).ok_or(format!("capture: no port {port:?}"))?;
    let (rx, tx) = match req.get("dir").map(|d| d.as_str()) {
        None | Some(Some("both")) => (true, true),
        Some(Some("rx")) => (true, false),
        Some(Some("tx")) => (false, true),
        Some(_) => return Err(format!("capture: \"dir\" {}: allowed \"rx\", \"tx\", \"both\"", req["dir"])),
    };
    let number = |k: &str| match req.get(k) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v.as_u64().map(Some).ok_or(format!("capture: \"{k}\" must be a number of 0 or more, not {v}")),
    };
    let max_len = st.pool.config().data_room as u64;
    let snaplen = number("snaplen")?.unwrap_or(max_len);
    if !(1..=max_len).contains(&snaplen) {
        return Err(format!("capture: \"snaplen\" {snaplen} is outside 1..={max_len} (the pool's data_room)"));
    }
    let queue = match number("queue")? {
        None => None,
        Some(q) => Some(u16::try_from(q).map_err(|_| format!("capture: \"queue\" {q} is not a queue number"))?),
    };
    let filter = match req.get("filter") {
        None | Some(Value::Null) => None,
        Some(Value::String(f)) if f.len() > MAX_FILTER => {
            return Err(format!("capture: \"filter\" is {} bytes; at most {MAX_FILTER}", f.len()))
        }
        Some(Value::String(f)) if f.trim().is_empty() => None,
        Some(Value::String(f)) => Some(Filter::compile(f).map_err(|e| format!("capture: {e}"))?),
        Some(v) => return Err(format!("capture: \"filter\" must be a string (a pcap filter expression), not {v}")),
    };
    let count = number("count")?.unwrap_or(0);
    Ok((Want { port: i as u16, rx, tx, queue, count, snaplen: snaplen as usize, filter }, port.to_string()))
}

/// Serves one `capture` request on `s` until the capture ends.
pub fn serve(mut s: UnixStream, line: &[u8], st: &State) {
    let req: Value = serde_json::from_slice(line).unwrap_or_default();
    let deadline = || Instant::now() + super::TIMEOUT;
    let (want, port) = match want(&req, st) {
        Ok(w) => w,
        Err(e) => {
            let _ = super::deadline::write_by(&mut s, error(&e).as_bytes(), deadline());
            return;
        }
    };
    let session = Arc::new(Session::new(want));
    if let Err(e) = st.taps.start(session.clone()) {
        let _ = super::deadline::write_by(&mut s, error(&format!("capture {port}: {e}")).as_bytes(), deadline());
        return;
    }
    let w = &session.want;
    let dir = match (w.rx, w.tx) {
        (true, true) => "both",
        (true, false) => "rx",
        _ => "tx",
    };
    let ok = json!({"ok": true, "result": {"port": port, "dir": dir, "queue": w.queue, "count": w.count,
        "snaplen": w.snaplen, "filter": w.filter.as_ref().map(Filter::text), "format": "pcapng"}});
    let mut out = format!("{ok}\n").into_bytes();
    out.extend(pcapng::header(&port, w.snaplen));
    let alive = super::deadline::write_by(&mut s, &out, deadline())
        && follow(&mut s, st, w.count, |out| match session.ring().next() {
            Some(r) => {
                out.extend(pcapng::packet(&r));
                session.ring().give_back(r);
                1
            }
            None => 0,
        }) == End::Done;
    st.taps.stop(&session);
    // Workers let go of the session at their next burst (or when they stop); after that nothing
    // more is published, so the statistics below match the records exactly.
    let until = Instant::now() + LET_GO;
    while Arc::strong_count(&session) > 1 && Instant::now() < until {
        std::thread::sleep(Duration::from_micros(200));
    }
    if alive {
        // What workers published before they saw the stop, then the statistics.
        let mut out = Vec::new();
        while let Some(r) = session.ring().next() {
            out.extend(pcapng::packet(&r));
        }
        out.extend(pcapng::statistics(&session, now_ns()));
        let _ = super::deadline::write_by(&mut s, &out, deadline());
    }
    let _ = s.flush();
}
