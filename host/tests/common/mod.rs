//! A test bench on the wire: ring port `a` (configured by the test, possibly with a policy) and its
//! peer `b`. Frames are fed to `a` through `b`'s TX, one stream `a -> a` runs one round, and what `a`
//! transmitted is read back at `b`'s RX as bytes.
#![allow(dead_code)]
pub mod live;
#[cfg(target_os = "linux")]
pub mod netns;
pub mod pcap;

use std::sync::Arc;
use std::time::Duration;
use wasmdp::engines;
use wasmdp::lcore::{Retry, Stream, StreamParts};
use wasmdp::mbuf::{Burst, Pool, PoolCache, PoolConfig};
use wasmdp::plugin::{Chain, Plugin, PluginCounters, Runner, Runtime, StreamEnv};
use wasmdp::ports::{open_all, RxQueue, TxQueue};
use wasmdp::simd::Simd;
use wasmdp::stats::{Counts, StreamInfo};

/// The bench. Dropping it checks that every buffer went back to the pool.
pub struct Wire {
    pool: Arc<Pool>,
    cache: Option<PoolCache>,
    feed: Box<dyn TxQueue>,
    out: Box<dyn RxQueue>,
    stream: Option<Stream>,
    template: Vec<u8>,
    counters: Vec<Arc<PluginCounters>>,
    /// Port b's inject queue (with [`Wire::with_sends`]): what a's policy sent there.
    sent: Option<Arc<wasmdp::ports::Inject>>,
}

impl Wire {
    /// `port_a` is the inside of port a's flow mapping, e.g. `engine: macswap, tx_offloads: [...]`.
    pub fn new(port_a: &str) -> Wire {
        Wire::with_sends(port_a, false)
    }

    /// [`Wire::new`]; with `sends`, port b has an inject queue, so that a's policy may send there
    /// (what it sends stays queued: [`Counts::redirected_out`] counts it).
    pub fn with_sends(port_a: &str, sends: bool) -> Wire {
        let yaml = format!(
            "ports:\n  - {{name: a, driver: ring, ring: {{peer: b}}, {port_a}}}\n  - {{name: b, driver: ring, ring: {{peer: a}}}}\n"
        );
        let cfg = wasmdp::config::parse(&yaml, "test").unwrap();
        let pool = Pool::new(PoolConfig { size: 1024, cache_size: 16, ..Default::default() }).unwrap();
        let mut ports = open_all(&cfg).unwrap();
        let simd = Simd::detect();
        let sent = sends.then(|| Arc::new(wasmdp::ports::Inject::new(64)));
        let injects: Arc<[_]> = Arc::from(vec![None, sent.clone()]);
        let rt = Runtime::new().unwrap();
        let links: Vec<(Arc<str>, Runner, Arc<PluginCounters>)> = cfg.ports[0]
            .policy
            .links()
            .iter()
            .map(|pc| {
                let counters = Arc::new(PluginCounters::default());
                let plugin = Plugin::load(&rt, pc).unwrap_or_else(|e| panic!("{e:#}"));
                let r = Runner::new(plugin, Arc::new(StreamEnv::alone(injects.clone())), simd, counters.clone())
                    .unwrap_or_else(|e| panic!("{e:#}"));
                (Arc::from(pc.link_name()), r, counters)
            })
            .collect();
        let counters: Vec<Arc<PluginCounters>> = links.iter().map(|l| l.2.clone()).collect();
        let policy = Chain::of(links.into_iter().map(|(n, r, _)| (n, r)).collect());
        let engine = engines::lookup(&cfg.ports[0].engine.as_ref().unwrap_or(&cfg.engine).0).unwrap();
        let feed = ports[1].txqs[0].take().unwrap();
        let out = ports[1].rxqs[0].take().unwrap();
        let a = &mut ports[0];
        let info = StreamInfo { rx_port: 0, rx_queue: 0, tx_port: 0, tx_queue: 0, engine: engine.name, lcore: None };
        let stream = Stream::new(StreamParts {
            info,
            rxq: a.rxqs[0].take().unwrap(),
            txq: a.txqs[0].take().unwrap(),
            run: engine.run.get(simd),
            needs_rx: true,
            burst_size: 64,
            retry: Retry { count: 0, delay: Duration::ZERO },
            offloads: a.driver.caps(),
            tx: a.tx,
            tx_mac: a.mac,
            peer_mac: a.peer_mac,
            template: a.template.clone(),
            seed_bursts: 0,
            policy,
            inject: None,
            echo: Default::default(),
            tunnels: Default::default(),
            prefetch_flow: true,
            tap: wasmdp::capture::StreamTap::none(),
        });
        let template = a.template.bytes().to_vec();
        Wire { cache: Some(pool.cache()), pool, feed, out, stream: Some(stream), template, counters, sent }
    }

    /// Port a's template frame.
    pub fn template(&self) -> &[u8] {
        &self.template
    }

    /// Feeds `frames` to a, runs one round of the stream, returns what a transmitted.
    pub fn send(&mut self, frames: &[Vec<u8>]) -> Vec<Vec<u8>> {
        let cache = self.cache.as_mut().unwrap();
        let mut burst = Burst::new();
        for f in frames {
            let mut p = cache.alloc().unwrap();
            p.copy_from(f).unwrap();
            burst.push(p);
        }
        assert_eq!(self.feed.tx_burst(cache, &mut burst, &mut wasmdp::ports::TxRefused::default()), frames.len());
        self.stream.as_mut().unwrap().poll(cache);
        self.out.rx_burst(cache, &mut burst, 512);
        let got = burst.iter().map(|p| p.data().to_vec()).collect();
        cache.free_burst(&mut burst);
        got
    }

    /// The stream's counters.
    pub fn counts(&self) -> Counts {
        self.stream.as_ref().unwrap().counters().snapshot()
    }

    /// The plugin's counters (the first link's, in a chain).
    pub fn plugin(&self) -> Arc<PluginCounters> {
        self.link(0)
    }

    /// The counters of link `k` of the chain.
    pub fn link(&self, k: usize) -> Arc<PluginCounters> {
        self.counters.get(k).cloned().unwrap_or_default()
    }
}

impl Drop for Wire {
    fn drop(&mut self) {
        let mut cache = self.cache.take().unwrap();
        if let Some(mut s) = self.stream.take() {
            s.drain(&mut cache);
        }
        self.out.drain(&mut cache);
        if let Some(q) = &self.sent {
            q.drain(&mut cache);
        }
        drop(cache);
        if !std::thread::panicking() {
            assert_eq!(self.pool.available(), self.pool.capacity(), "buffers leaked");
        }
    }
}

/// The 802.1Q/802.1ad tags of a frame, outermost first, as (TPID, TCI).
pub fn tags(f: &[u8]) -> Vec<(u16, u16)> {
    let mut out = Vec::new();
    let mut at = 12;
    while at + 4 <= f.len() && matches!(u16::from_be_bytes([f[at], f[at + 1]]), 0x8100 | 0x88a8) {
        out.push((u16::from_be_bytes([f[at], f[at + 1]]), u16::from_be_bytes([f[at + 2], f[at + 3]])));
        at += 4;
    }
    out
}

/// `f` with its MAC addresses swapped.
pub fn swapped(f: &[u8]) -> Vec<u8> {
    let mut o = f.to_vec();
    o[..6].copy_from_slice(&f[6..12]);
    o[6..12].copy_from_slice(&f[..6]);
    o
}

/// Where `scripts/build-plugins.sh` puts module `name` (panics with what to run when absent).
pub fn plugin_path(name: &str) -> std::path::PathBuf {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../plugins/target/wasm32-unknown-unknown/release")
        .join(format!("{name}.wasm"));
    assert!(p.exists(), "{} is missing: run scripts/build-plugins.sh (scripts/test.sh does)", p.display());
    p
}

/// Runs `f` with the log of this thread captured; returns its result and the log text.
pub fn capture_logs<R>(f: impl FnOnce() -> R) -> (R, String) {
    use std::io::Write;
    use std::sync::Mutex;
    #[derive(Clone, Default)]
    struct Buf(Arc<Mutex<Vec<u8>>>);
    impl Write for Buf {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let buf = Buf::default();
    let w = buf.clone();
    let sub = tracing_subscriber::fmt().with_writer(move || w.clone()).with_ansi(false).finish();
    let r = tracing::subscriber::with_default(sub, f);
    let text = String::from_utf8_lossy(&buf.0.lock().unwrap()).into_owned();
    (r, text)
}

/// Writes the WebAssembly text `wat_text` as a module file in a per-process temp folder.
pub fn write_wat(name: &str, wat_text: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("wasmdp-test-modules-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.wasm"));
    std::fs::write(&path, wat::parse_str(wat_text).unwrap()).unwrap();
    path
}

/// Builds and runs `yaml` for `secs` seconds; checks that no buffer leaked and that every stream
/// balances (received + generated + redirected in = transmitted + dropped + redirected out).
pub fn run_yaml(yaml: &str, secs: f64) -> serde_json::Value {
    run_built(build_yaml(yaml), secs)
}

/// Builds `yaml` (ports, and plugins compiled and initialised), ready for [`run_built`].
pub fn build_yaml(yaml: &str) -> wasmdp::dataplane::Dataplane {
    let cfg = wasmdp::config::parse(yaml, "test").unwrap_or_else(|e| panic!("{e:#}\n{yaml}"));
    wasmdp::dataplane::build(&cfg, &wasmdp::dataplane::Overrides::default()).unwrap_or_else(|e| panic!("{e:#}\n{yaml}"))
}

/// Runs a built dataplane for `secs` seconds, with [`run_yaml`]'s checks.
pub fn run_built(dp: wasmdp::dataplane::Dataplane, secs: f64) -> serde_json::Value {
    use wasmdp::dataplane::{self, RunOptions};
    let opts = RunOptions { duration: Some(Duration::from_secs_f64(secs)), ..RunOptions::default() };
    let r = dataplane::run(dp, &opts, Arc::new(std::sync::atomic::AtomicBool::new(false))).unwrap();
    assert_eq!(r.leaked, 0, "buffers not returned: {}", r.json);
    for s in r.json["streams"].as_array().unwrap() {
        let u = |k: &str| s[k].as_u64().unwrap_or_else(|| panic!("{k} missing: {s}"));
        assert_eq!(
            u("rx_packets") + u("generated") + u("redirected_in"),
            u("tx_packets") + u("dropped") + u("redirected_out"),
            "stream {s}"
        );
    }
    r.json
}

/// Runs `yaml` until the streams have received `rx` packets and transmitted or dropped them all (or
/// 20 s passed); returns the stop report and how long it took.
pub fn run_until(yaml: &str, rx: u64) -> (serde_json::Value, Duration) {
    use std::time::Instant;
    use wasmdp::dataplane::{self, Overrides, RunOptions};
    let cfg = wasmdp::config::parse(yaml, "test").unwrap_or_else(|e| panic!("{e:#}"));
    let dp = dataplane::build(&cfg, &Overrides::default()).unwrap_or_else(|e| panic!("{e:#}"));
    let opts = RunOptions::default();
    let t0 = Instant::now();
    let running = dataplane::start(dp, &opts, Arc::new(std::sync::atomic::AtomicBool::new(false))).unwrap();
    loop {
        let c = running.view.streams.iter().map(|(_, c)| c.snapshot()).fold(Default::default(), |a, b| a + b);
        let c: wasmdp::stats::Counts = c;
        if c.rx_packets >= rx && c.tx_packets + c.drops.total() >= rx {
            break;
        }
        assert!(t0.elapsed() < Duration::from_secs(20), "not done after 20 s: {c:?}");
        std::thread::sleep(Duration::from_millis(2));
    }
    let took = t0.elapsed();
    let report = running.finish(&opts).unwrap();
    assert_eq!(report.leaked, 0, "{}", report.json);
    (report.json, took)
}

/// The error `dataplane::build` gives for `yaml` (panics if it builds).
pub fn build_error(yaml: &str) -> String {
    let cfg = match wasmdp::config::parse(yaml, "test") {
        Ok(c) => c,
        Err(e) => return format!("{e:#}"),
    };
    match wasmdp::dataplane::build(&cfg, &wasmdp::dataplane::Overrides::default()) {
        Ok(_) => panic!("built:\n{yaml}"),
        Err(e) => format!("{e:#}"),
    }
}

/// The packets of a pcap file (microsecond or nanosecond), read without the project's code.
pub fn pcap_packets(path: &std::path::Path) -> Vec<Vec<u8>> {
    let b = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(b.len() >= 24, "{}: no pcap header", path.display());
    let le = matches!(b[..4], [0xd4, 0xc3, 0xb2, 0xa1] | [0x4d, 0x3c, 0xb2, 0xa1]);
    let u32_at = |at: usize| {
        let w = [b[at], b[at + 1], b[at + 2], b[at + 3]];
        if le {
            u32::from_le_bytes(w)
        } else {
            u32::from_be_bytes(w)
        }
    };
    let mut out = Vec::new();
    let mut at = 24;
    while at + 16 <= b.len() {
        let len = u32_at(at + 8) as usize;
        at += 16;
        assert!(at + len <= b.len(), "record cut short");
        out.push(b[at..at + len].to_vec());
        at += len;
    }
    out
}

/// The wasmdp binary, run with `args`; returns (exit code, stdout, stderr).
pub fn wasmdp(args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_wasmdp")).args(args).output().unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
}

/// A test that cannot run here says why and returns. Under CI (the `CI` environment variable set,
/// as `.ci/run` does) that is a failure, unless the skip is `Optional` (the README says which and
/// why): a missing privilege or tool must not pass silently.
pub fn skip(test: &str, why: &str, kind: Skip) {
    if kind == Skip::Required && std::env::var_os("CI").is_some() {
        panic!("{test} cannot run, and CI requires it: {why}");
    }
    eprintln!("SKIPPED {test}: {why}");
}

/// Whether a skipped test may be skipped in CI.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Skip {
    /// Needs something CI provides (root, a tool the setup installs): skipping there fails.
    Required,
    /// Needs something beside the repository that may be absent (the shared tcpdump captures).
    Optional,
}

/// An IPv4/UDP frame of `size` bytes from 10.0.0.1:`src_port` (MACs 5a.. -> d0..) to
/// `dst_ip`:`dst_port`, with checksums, optionally 802.1Q-tagged.
pub fn udp(size: usize, dst_ip: [u8; 4], src_port: u16, dst_port: u16, vlan: Option<u16>) -> Vec<u8> {
    wasmdp::wire::build_udp(&wasmdp::wire::FrameSpec {
        size,
        dst_mac: [0xd0; 6],
        src_mac: [0x5a; 6],
        src_ip: [10, 0, 0, 1],
        dst_ip,
        src_port,
        dst_port,
        vlan,
    })
}
