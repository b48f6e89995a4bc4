//! The `trace` request: follows the next `count` packets a port receives through the dataplane
//! (`crate::capture::trace`) and answers with their paths once all are done, the wait is over, or
//! the dataplane stops.

use super::state::State;
use crate::capture::trace::{Trace, MAX_TRACE};
use serde_json::{json, Value};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a trace waits for its packets (a port that receives nothing answers with none).
pub const WAIT: Duration = Duration::from_secs(10);

/// Answers a `trace` request.
pub fn trace(req: &Value, st: &State) -> Result<Value, String> {
    let port = req.get("port").and_then(Value::as_str).ok_or("trace needs \"port\" (a port name)")?;
    let i = st.view.ports.iter().position(|p| p == port).ok_or(format!("trace: no port {port:?}"))?;
    let count = match req.get("count") {
        None | Some(Value::Null) => 10,
        Some(v) => v.as_u64().ok_or(format!("trace: \"count\" must be a number, not {v}"))?,
    };
    if !(1..=MAX_TRACE as u64).contains(&count) {
        return Err(format!("trace: \"count\" {count} is outside 1..={MAX_TRACE}"));
    }
    let t = Arc::new(Trace::new(i as u16, count as usize));
    st.taps.start_trace(t.clone()).map_err(|e| format!("trace {port}: {e}"))?;
    let until = Instant::now() + WAIT;
    while t.finished() < t.count && Instant::now() < until && !st.stop.load(Relaxed) {
        std::thread::sleep(Duration::from_millis(2));
    }
    st.taps.stop_trace(&t);
    // Workers let go at their next burst; a round they were in finishes its paths first.
    let let_go = Instant::now() + Duration::from_secs(1);
    while Arc::strong_count(&t) > 1 && Instant::now() < let_go {
        std::thread::sleep(Duration::from_micros(200));
    }
    let paths: Vec<Value> = t.take_paths().iter().map(|p| p.json(&st.view.ports)).collect();
    Ok(json!({"port": port, "asked": count, "traced": paths.len(), "packets": paths}))
}
