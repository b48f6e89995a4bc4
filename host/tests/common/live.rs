//! Helpers for tests that edit a running dataplane's config file: save as editors do, wait for an
//! effect, and read the frame size on the wire.

use std::path::Path;
use std::time::{Duration, Instant};
use wasmdp::stats::StatsView;

/// Writes the file the way editors do: a new file renamed over the old one.
pub fn save(path: &Path, text: &str) {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

/// Bytes per packet transmitted on port 1 over a short window, rounded: the display reads the
/// counters while the worker writes them, so a snapshot can hold one burst's packets without its
/// bytes (a tag is 4 bytes per packet, far above that).
pub fn bytes_per_packet(view: &StatsView) -> f64 {
    let at = |v: &StatsView| {
        let p = v.per_port(&v.snapshot())[1];
        (p.tx_bytes, p.tx_packets)
    };
    let (b0, p0) = at(view);
    std::thread::sleep(Duration::from_millis(20));
    // On a loaded machine the worker may not have run in those 20 ms: wait for traffic (a stall
    // that lasts fails the test).
    let mut now = at(view);
    let until = Instant::now() + Duration::from_secs(5);
    while now.1 <= p0 {
        assert!(Instant::now() < until, "no traffic on port 1 for 5 s");
        std::thread::sleep(Duration::from_millis(5));
        now = at(view);
    }
    let (b1, p1) = now;
    ((b1 - b0) as f64 / (p1 - p0) as f64).round()
}

/// Waits up to 10 s for `done`; fails the test naming `what` otherwise.
pub fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let until = Instant::now() + Duration::from_secs(10);
    while !done() {
        assert!(Instant::now() < until, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// A fresh folder for one test: `wasmdp-NAME-PID` in the temp folder, emptied.
pub fn fresh_dir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("wasmdp-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A dataplane on `yaml` forwarding, with its control socket at `dir/ctl.sock`.
pub fn start_with_socket(
    dir: &Path,
    yaml: &str,
) -> (wasmdp::dataplane::Running, wasmdp::dataplane::RunOptions, std::path::PathBuf) {
    use wasmdp::dataplane::{self, Overrides, RunOptions};
    let cfg = wasmdp::config::parse(yaml, "test.yaml").unwrap();
    let dp = dataplane::build(&cfg, &Overrides::default()).unwrap();
    let sock = dir.join("ctl.sock");
    let opts = RunOptions { control: Some(sock.clone()), ..RunOptions::default() };
    let running = dataplane::start(dp, &opts, std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false))).unwrap();
    (running, opts, sock)
}
