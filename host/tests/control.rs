//! The control socket end to end: every command against a running dataplane, a reload through the
//! socket (applied and rejected), `wasmdp ctl`, and hostile clients (garbage, a 10 MB line, a client
//! that sends nothing, 100 clients at once, a path that is not ours to take).

mod common;

use common::plugin_path;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};
use wasmdp::control::request;
use wasmdp::dataplane::{self, Overrides, RunOptions, Running};

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("wasmdp-control-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn config() -> String {
    format!(
        "engine: io\nstreams: [{{rx: a, tx: b}}, {{rx: c, tx: c}}]\nports:\n  - {{name: a, driver: null, frame: {{flows: 8}}, policy: {{plugin: {}, params: {{ports: '1,2'}}, limits: {{deadline_us: 500000}}}}}}\n  - {{name: b, driver: null}}\n  - {{name: c, driver: null}}\n",
        plugin_path("l4_lb").display()
    )
}

/// A dataplane forwarding with the control socket at `dir/ctl.sock`, watching `dir/config.yaml`.
fn start(dir: &Path) -> (Running, RunOptions, PathBuf) {
    start_with(dir, &config())
}

/// [`start`] with the configuration `yaml`.
fn start_with(dir: &Path, yaml: &str) -> (Running, RunOptions, PathBuf) {
    let cfg_path = dir.join("config.yaml");
    std::fs::write(&cfg_path, yaml).unwrap();
    let cfg = wasmdp::config::load(&cfg_path).unwrap();
    let dp = dataplane::build(&cfg, &Overrides::default()).unwrap();
    let sock = dir.join("ctl.sock");
    let opts = RunOptions { watch: Some(cfg_path), control: Some(sock.clone()), ..RunOptions::default() };
    let running = dataplane::start(dp, &opts, Arc::new(AtomicBool::new(false))).unwrap();
    (running, opts, sock)
}

fn ok(sock: &Path, req: Value) -> Value {
    let a = request(sock, &req).unwrap();
    assert_eq!(a["ok"], true, "{req} -> {a}");
    a["result"].clone()
}

fn err(sock: &Path, req: Value) -> String {
    let a = request(sock, &req).unwrap();
    assert_eq!(a["ok"], false, "{req} -> {a}");
    a["error"].as_str().unwrap().to_string()
}

#[test]
fn every_command_answers_from_the_live_dataplane() {
    let d = dir("commands");
    let (running, opts, sock) = start(&d);
    let mode = std::fs::metadata(&sock).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "owner only");
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(ok(&sock, json!({"cmd": "version"}))["abi"], "1.1");
    let stats = ok(&sock, json!({"cmd": "stats"}));
    assert!(stats["ports"][0]["rx_packets"].as_u64().unwrap() > 0, "live counters: {stats}");
    let later = ok(&sock, json!({"cmd": "ports"}));
    assert!(later[0]["rx_packets"].as_u64() > stats["ports"][0]["rx_packets"].as_u64(), "they move");
    assert_eq!(ok(&sock, json!({"cmd": "streams"})).as_array().unwrap().len(), 2);
    let pol = ok(&sock, json!({"cmd": "policies"}));
    assert_eq!((pol[0]["port"].as_str(), pol[0]["state"].as_str()), (Some("a"), Some("running")), "{pol}");
    assert!(pol[0]["plugin"].as_str().unwrap().ends_with("l4_lb.wasm"));
    assert_eq!(pol[0]["sha256"].as_str().unwrap().len(), 64, "{pol}");
    assert_eq!(pol[0]["abi"], "1.1", "the version the module declares: {pol}");
    let maps = ok(&sock, json!({"cmd": "maps"}));
    assert_eq!((maps[0]["port"].as_str(), maps[0]["map"]["name"].as_str()), (Some("a"), Some("flows")), "{maps}");
    let dump = ok(&sock, json!({"cmd": "map_dump", "port": "a", "map": "flows"}));
    assert_eq!(dump["count"], 8, "the 8 flows pinned: {dump}");
    for e in dump["entries"].as_array().unwrap() {
        assert!(["01000000", "02000000"].contains(&e["value"].as_str().unwrap()), "ports 1 or 2: {e}");
    }
    assert!(err(&sock, json!({"cmd": "map_dump", "port": "a", "map": "nope"})).contains("no map \"nope\""));
    assert!(err(&sock, json!({"cmd": "map_dump", "port": "z", "map": "flows"})).contains("no port \"z\""));
    assert!(err(&sock, json!({"cmd": "frobnicate"})).contains("unknown command"));
    assert!(err(&sock, json!({"nocmd": 1})).contains("no \"cmd\""));
    // The CLI: a table by default, JSON with --json.
    let s = sock.to_str().unwrap();
    let (code, out, e) = common::wasmdp(&["ctl", "--socket", s, "ports"]);
    assert_eq!(code, 0, "{e}");
    assert!(out.starts_with("name") && out.lines().count() == 4, "{out}");
    let (code, out, e) = common::wasmdp(&["ctl", "--socket", s, "policies"]);
    assert_eq!(code, 0, "{e}");
    let head: Vec<&str> = out.lines().next().unwrap().split_whitespace().collect();
    let row: Vec<&str> = out.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!((head[3], row[3]), ("abi", "1.1"), "{out}");
    let (code, out, _) = common::wasmdp(&["ctl", "--socket", s, "--json", "map", "dump", "a", "flows"]);
    assert_eq!(code, 0);
    assert_eq!(serde_json::from_str::<Value>(&out).unwrap()["count"], 8);
    let (code, out, e) = common::wasmdp(&["ctl", "--socket", s, "--count", "1", "top"]);
    assert_eq!(code, 0, "{e}");
    let row = out.lines().find(|l| l.starts_with("a ")).unwrap_or_else(|| panic!("{out}"));
    assert!(row.split_whitespace().nth(1).is_some_and(|pps| pps != "0"), "port a receives: {out}");
    assert!(out.contains("a/0 -> b"), "{out}");
    let (code, _, e) = common::wasmdp(&["ctl", "--socket", s, "map", "dump", "a", "nope"]);
    assert_eq!(code, 1);
    assert!(e.contains("no map \"nope\""), "{e}");
    let report = running.finish(&opts).unwrap();
    assert_eq!(report.leaked, 0);
    assert!(!sock.exists(), "the socket is removed at stop");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn an_operator_reads_writes_and_deletes_one_map_entry() {
    let d = dir("map-entry");
    let (running, opts, sock) = start(&d);
    std::thread::sleep(Duration::from_millis(100));
    let dump = ok(&sock, json!({"cmd": "map_dump", "port": "a", "map": "flows"}));
    let first = &dump["entries"][0];
    let got = ok(&sock, json!({"cmd": "map_get", "port": "a", "map": "flows", "key": first["key"]}));
    assert_eq!((got["found"].as_bool(), &got["value"]), (Some(true), &first["value"]), "{got}");
    // A flow the operator pins by hand, read back, then removed.
    let pin = json!({"cmd": "map_update", "port": "a", "map": "flows", "key": "DEADBEEF", "value": "02000000"});
    assert_eq!(ok(&sock, pin)["key"], "deadbeef");
    let got = ok(&sock, json!({"cmd": "map_get", "port": "a", "map": "flows", "key": "deadbeef"}));
    assert_eq!(got["value"], "02000000", "{got}");
    let del = json!({"cmd": "map_delete", "port": "a", "map": "flows", "key": "deadbeef"});
    assert_eq!(ok(&sock, del.clone())["deleted"], true);
    assert_eq!(ok(&sock, del)["deleted"], false, "already gone");
    let got = ok(&sock, json!({"cmd": "map_get", "port": "a", "map": "flows", "key": "deadbeef"}));
    assert_eq!((got["found"].as_bool(), got["value"].is_null()), (Some(false), true), "{got}");
    // Bad input: a clear error naming what is wrong and what is allowed.
    let e = err(&sock, json!({"cmd": "map_get", "port": "a", "map": "flows", "key": "dead"}));
    assert!(e.contains("2 bytes") && e.contains("4-byte keys"), "{e}");
    let e =
        err(&sock, json!({"cmd": "map_update", "port": "a", "map": "flows", "key": "deadbeef", "value": "zz000000"}));
    assert!(e.contains("not hex"), "{e}");
    assert!(err(&sock, json!({"cmd": "map_delete", "port": "a", "map": "flows"})).contains("needs \"key\""));
    // The CLI.
    let s = sock.to_str().unwrap();
    let (code, out, e) =
        common::wasmdp(&["ctl", "--socket", s, "--json", "map", "get", "a", "flows", first["key"].as_str().unwrap()]);
    assert_eq!(code, 0, "{e}");
    assert_eq!(serde_json::from_str::<Value>(&out).unwrap()["value"], first["value"]);
    let (code, _, e) = common::wasmdp(&["ctl", "--socket", s, "map", "update", "a", "flows", "00"]);
    assert_eq!(code, 1);
    assert!(e.contains("map update PORT MAP KEY VALUE"), "{e}");
    let report = running.finish(&opts).unwrap();
    assert_eq!(report.leaked, 0);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_reload_through_the_socket_says_applied_or_rejected_and_why() {
    let d = dir("reload");
    let (running, opts, sock) = start(&d);
    let r = ok(&sock, json!({"cmd": "reload"}));
    assert_eq!(r["outcome"], "applied", "{r}");
    std::fs::write(d.join("config.yaml"), config().replace("flows: 8", "flows: 0")).unwrap();
    let r = ok(&sock, json!({"cmd": "reload"}));
    assert_eq!(r["outcome"], "rejected", "{r}");
    let why = r["error"].as_str().unwrap();
    assert!(why.contains("ports[0].frame") && why.contains("allowed 1..=65536"), "the reason names the key: {r}");
    assert!(ok(&sock, json!({"cmd": "ports"}))[0]["rx_packets"].as_u64().unwrap() > 0, "still forwarding");
    running.finish(&opts).unwrap();
    std::fs::remove_dir_all(&d).unwrap();
}

/// The values of map `flows` of port `a`, by key.
fn flows(sock: &Path) -> std::collections::BTreeMap<String, String> {
    let dump = ok(sock, json!({"cmd": "map_dump", "port": "a", "map": "flows"}));
    let entries = dump["entries"].as_array().unwrap().iter();
    entries.map(|e| (e["key"].as_str().unwrap().to_string(), e["value"].as_str().unwrap().to_string())).collect()
}

/// Packets port `name` has sent.
fn tx(sock: &Path, name: &str) -> u64 {
    let ports = ok(sock, json!({"cmd": "ports"}));
    ports.as_array().unwrap().iter().find(|p| p["name"] == name).unwrap()["tx_packets"].as_u64().unwrap()
}

#[test]
fn initial_map_entries_come_from_a_file_and_a_changed_file_swaps_them_at_a_reload() {
    let d = dir("map-entries");
    let (running, opts, sock) = start(&d);
    std::thread::sleep(Duration::from_millis(100));
    let learnt = flows(&sock);
    assert_eq!(learnt.len(), 8, "{learnt:?}");
    // The operator pins every flow to backend 2 (port c) from a file, in the dump's own form.
    let entries = d.join("flows.txt");
    let pin = |port: &str| learnt.keys().map(|k| format!("{k} -> {port}\n")).collect::<String>();
    std::fs::write(&entries, format!("# pinned flows\n{}", pin("02000000"))).unwrap();
    let with_entries =
        config().replace("params: {ports: '1,2'}", "params: {ports: '1,2'}, map_entries: {flows: flows.txt}");
    std::fs::write(d.join("config.yaml"), &with_entries).unwrap();
    assert_eq!(ok(&sock, json!({"cmd": "reload"}))["outcome"], "applied");
    let pinned = flows(&sock);
    assert_eq!(pinned.keys().collect::<Vec<_>>(), learnt.keys().collect::<Vec<_>>());
    assert!(pinned.values().all(|v| v == "02000000"), "the file's entries, the learnt ones gone: {pinned:?}");
    // Only port c transmits now.
    let (b, c) = (tx(&sock, "b"), tx(&sock, "c"));
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(tx(&sock, "b"), b, "nothing goes to backend 1 any more");
    assert!(tx(&sock, "c") > c, "backend 2 gets every flow");
    // A file with a bad line is refused, naming the file and the line; the pinned table stays.
    let mut bad = pin("01000000");
    bad.insert_str(0, "# comment\n00000001 -> 0100\n");
    std::fs::write(&entries, &bad).unwrap();
    let r = ok(&sock, json!({"cmd": "reload"}));
    assert_eq!(r["outcome"], "rejected", "{r}");
    let why = r["error"].as_str().unwrap();
    assert!(why.contains("flows.txt, line 2") && why.contains("the map has 4-byte values"), "{why}");
    assert_eq!(flows(&sock), pinned, "the running table is untouched");
    // The file changed alone (the YAML as it was): the table is swapped at the reload.
    std::fs::write(&entries, pin("01000000")).unwrap();
    assert_eq!(ok(&sock, json!({"cmd": "reload"}))["outcome"], "applied");
    let now = flows(&sock);
    assert!(now.len() == 8 && now.values().all(|v| v == "01000000"), "{now:?}");
    let b = tx(&sock, "b");
    std::thread::sleep(Duration::from_millis(100));
    assert!(tx(&sock, "b") > b, "backend 1 gets the flows now");
    // A reload that changes nothing keeps the table (and what the policy wrote into it).
    let put = json!({"cmd": "map_update", "port": "a", "map": "flows", "key": "deadbeef", "value": "02000000"});
    ok(&sock, put);
    assert_eq!(ok(&sock, json!({"cmd": "reload"}))["outcome"], "applied");
    assert_eq!(flows(&sock).len(), 9, "kept");
    // A file that is not there is refused too, naming it.
    std::fs::write(d.join("config.yaml"), with_entries.replace("flows.txt", "nope.txt")).unwrap();
    let r = ok(&sock, json!({"cmd": "reload"}));
    assert!(r["error"].as_str().unwrap().contains("nope.txt"), "{r}");
    running.finish(&opts).unwrap();
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_pinned_map_is_written_at_stop_and_found_again_at_the_next_start() {
    let d = dir("map-pins");
    let pin = d.join("flows.pin");
    let yaml = config().replace("params: {ports: '1,2'}", "params: {ports: '1,2'}, map_pins: {flows: flows.pin}");
    // No pin file yet: the map starts empty, learns its flows, and is written at stop.
    let (running, opts, sock) = start_with(&d, &yaml);
    std::thread::sleep(Duration::from_millis(100));
    let learnt = flows(&sock);
    assert_eq!(learnt.len(), 8, "{learnt:?}");
    running.finish(&opts).unwrap();
    let text = std::fs::read_to_string(&pin).unwrap();
    assert!(text.starts_with("# wasmdp map \"flows\": hash, key_size 4, value_size 4"), "{text}");
    assert_eq!(std::fs::metadata(&pin).unwrap().permissions().mode() & 0o777, 0o600);
    let saved: std::collections::BTreeMap<String, String> = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split_once(" -> ").map(|(k, v)| (k.to_string(), v.to_string())).unwrap())
        .collect();
    assert_eq!(saved, learnt, "every entry, as it was");
    // The operator adds an entry to the file; the next start finds both.
    std::fs::write(&pin, format!("{text}deadbeef -> 02000000\n")).unwrap();
    let (running, opts, sock) = start_with(&d, &yaml);
    let mut want = learnt.clone();
    want.insert("deadbeef".into(), "02000000".into());
    assert_eq!(flows(&sock), want, "the pinned entries, before any packet could add one");
    running.finish(&opts).unwrap();
    assert!(std::fs::read_to_string(&pin).unwrap().contains("deadbeef -> 02000000"), "written back");
    // A pin file the map cannot take refuses the start, naming it.
    std::fs::write(&pin, "nothex -> 02000000\n").unwrap();
    std::fs::write(d.join("config.yaml"), &yaml).unwrap();
    let cfg = wasmdp::config::load(&d.join("config.yaml")).unwrap();
    let e = format!("{:#}", dataplane::build(&cfg, &Overrides::default()).err().unwrap());
    assert!(e.contains("flows.pin, line 1") && e.contains("\"nothex\""), "{e}");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn hostile_clients_get_errors_and_never_stop_the_others() {
    let d = dir("hostile");
    let (running, opts, sock) = start(&d);
    // Garbage.
    let mut s = UnixStream::connect(&sock).unwrap();
    s.write_all(b"\xff\xfe garbage\n").unwrap();
    let mut line = String::new();
    BufReader::new(s.try_clone().unwrap()).read_line(&mut line).unwrap();
    assert!(line.contains("\"ok\":false") && line.contains("not JSON"), "{line}");
    // A 10 MB line: an error, and the connection closed.
    let mut big = UnixStream::connect(&sock).unwrap();
    big.set_write_timeout(Some(Duration::from_secs(10))).unwrap();
    let _ = big.write_all(&vec![b'x'; 10 << 20]);
    let mut answer = String::new();
    let _ = big.read_to_string(&mut answer);
    assert!(answer.contains("longer than"), "{answer:.200}");
    // A client that sends nothing is dropped after the timeout; meanwhile 100 others are served.
    let idle = UnixStream::connect(&sock).unwrap();
    let t0 = Instant::now();
    let clients: Vec<_> = (0..100)
        .map(|_| {
            let sock = sock.clone();
            std::thread::spawn(move || request(&sock, &json!({"cmd": "version"})).unwrap()["ok"] == true)
        })
        .collect();
    assert!(clients.into_iter().all(|c| c.join().unwrap()), "all 100 answered");
    let mut buf = [0u8; 1];
    idle.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    assert_eq!((&idle).read(&mut buf).unwrap(), 0, "closed by the server");
    assert!(t0.elapsed() >= wasmdp::control::TIMEOUT - Duration::from_millis(100));
    running.finish(&opts).unwrap();
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_path_that_is_not_a_stale_socket_of_ours_is_refused() {
    let d = dir("paths");
    let cfg = wasmdp::config::parse(&config(), "test").unwrap();
    let opts = |p: &Path| RunOptions { control: Some(p.to_path_buf()), ..RunOptions::default() };
    // A regular file is never removed.
    let file = d.join("file");
    std::fs::write(&file, "keep me").unwrap();
    let dp = dataplane::build(&cfg, &Overrides::default()).unwrap();
    let e = dataplane::start(dp, &opts(&file), Arc::new(AtomicBool::new(false))).err().unwrap();
    assert!(format!("{e:#}").contains("not a socket"), "{e:#}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "keep me");
    // A live socket (another wasmdp) is left alone; a stale one is replaced.
    let live = d.join("live.sock");
    let _other = std::os::unix::net::UnixListener::bind(&live).unwrap();
    let dp = dataplane::build(&cfg, &Overrides::default()).unwrap();
    let e = dataplane::start(dp, &opts(&live), Arc::new(AtomicBool::new(false))).err().unwrap();
    assert!(format!("{e:#}").contains("another wasmdp is listening"), "{e:#}");
    let stale = d.join("stale.sock");
    drop(std::os::unix::net::UnixListener::bind(&stale).unwrap());
    let dp = dataplane::build(&cfg, &Overrides::default()).unwrap();
    let running = dataplane::start(dp, &opts(&stale), Arc::new(AtomicBool::new(false))).unwrap();
    assert_eq!(ok(&stale, json!({"cmd": "version"}))["abi"], "1.1");
    running.finish(&opts(&stale)).unwrap();
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn an_operator_disables_and_enables_a_policy() {
    let d = dir("policy");
    let (running, opts, sock) = start(&d);
    let calls = |sock: &Path| ok(sock, json!({"cmd": "policies"}))[0]["calls"].as_u64().unwrap();
    let r = ok(&sock, json!({"cmd": "policy", "action": "disable", "port": "a"}));
    assert_eq!((r["state"].as_str(), r["streams"].as_u64()), (Some("disabled"), Some(1)), "{r}");
    assert_eq!(ok(&sock, json!({"cmd": "policies"}))[0]["state"], "disabled");
    let c0 = calls(&sock);
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(calls(&sock), c0, "no calls while disabled");
    let rx = |sock: &Path| ok(sock, json!({"cmd": "ports"}))[0]["rx_packets"].as_u64().unwrap();
    let rx0 = rx(&sock);
    std::thread::sleep(Duration::from_millis(20));
    assert!(rx(&sock) > rx0, "the port forwards under its failure policy (fail_open: the native engine)");
    let r = ok(&sock, json!({"cmd": "policy", "action": "enable", "port": "a"}));
    assert_eq!(r["state"], "running", "{r}");
    let t = Instant::now();
    while calls(&sock) == c0 {
        assert!(t.elapsed() < Duration::from_secs(10), "the plugin is called again");
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(ok(&sock, json!({"cmd": "policies"}))[0]["state"], "running");
    assert!(err(&sock, json!({"cmd": "policy", "action": "disable", "port": "b"})).contains("no policy"));
    assert!(err(&sock, json!({"cmd": "policy", "action": "pause", "port": "a"})).contains("enable or disable"));
    running.finish(&opts).unwrap();
    std::fs::remove_dir_all(&d).unwrap();
}

/// `GET path` over HTTP/1.0 from `addr`: (status line, body).
fn http_get(addr: std::net::SocketAddr, path: &str) -> (String, String) {
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(s, "GET {path} HTTP/1.0\r\nHost: x\r\n\r\n").unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    (head.lines().next().unwrap().to_string(), body.to_string())
}

/// A dataplane on `cfg` serving metrics on a local port of its own (`offset` keeps the tests that
/// run at once apart), given 100 ms to start.
fn serve_metrics(cfg: &wasmdp::config::Config, offset: u32) -> (Running, RunOptions, std::net::SocketAddr) {
    let dp = dataplane::build(cfg, &Overrides::default()).unwrap();
    let port = 20000 + ((std::process::id() + offset) % 20000) as u16;
    let addr: std::net::SocketAddr = ([127, 0, 0, 1], port).into();
    let opts = RunOptions { metrics: Some(addr), ..RunOptions::default() };
    let running = dataplane::start(dp, &opts, Arc::new(AtomicBool::new(false))).unwrap();
    std::thread::sleep(Duration::from_millis(100));
    (running, opts, addr)
}

/// `promtool check metrics` accepts `body`.
fn promtool_check(body: &str) {
    match std::process::Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
    {
        Ok(mut child) => {
            child.stdin.take().unwrap().write_all(body.as_bytes()).unwrap();
            let out = child.wait_with_output().unwrap();
            let text = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success(), "promtool check metrics:\n{text}");
        }
        Err(e) => common::skip(
            "promtool check metrics",
            &format!("promtool: {e} (apt-get install prometheus)"),
            common::Skip::Required,
        ),
    }
}

#[test]
fn prometheus_metrics_pass_promtool_and_follow_the_traffic() {
    let d = dir("metrics");
    let cfg_path = d.join("config.yaml");
    std::fs::write(&cfg_path, config()).unwrap();
    let cfg = wasmdp::config::load(&cfg_path).unwrap();
    let (running, opts, addr) = serve_metrics(&cfg, 0);
    let (status, body) = http_get(addr, "/metrics");
    assert!(status.contains("200"), "{status}");
    for needle in [
        "wasmdp_build_info{",
        "wasmdp_port_rx_packets_total{port=\"a\"}",
        "wasmdp_port_dropped_total{port=\"b\",reason=\"policy\"}",
        "wasmdp_plugin_calls_total{port=\"a\",link=\"l4_lb\",plugin=\"l4_lb\"}",
        "wasmdp_plugin_drops_total{port=\"a\",link=\"l4_lb\",plugin=\"l4_lb\"}",
        "wasmdp_plugin_call_seconds{port=\"a\",link=\"l4_lb\",plugin=\"l4_lb\"}",
        "wasmdp_plugin_defined_total{port=\"a\",link=\"l4_lb\",plugin=\"l4_lb\",name=\"unpinned\"}",
        "wasmdp_plugin_map_entries{port=\"a\",map=\"flows\"} 8",
        "wasmdp_plugin_map_evicted_total{port=\"a\",map=\"flows\"} 0",
        "wasmdp_plugin_map_expired_total{port=\"a\",map=\"flows\"} 0",
        "wasmdp_reloads_total{outcome=\"applied\"} 0",
        "wasmdp_pool_buffers{state=\"free\"}",
        "wasmdp_stream_rx_packets_total{port=\"a\",queue=\"0\"}",
    ] {
        assert!(body.contains(needle), "{needle} missing:\n{body}");
    }
    let value = |body: &str, key: &str| -> u64 {
        body.lines().find(|l| l.starts_with(key)).and_then(|l| l.rsplit(' ').next()).unwrap().parse().unwrap()
    };
    // Scraped in a loop while traffic flows: the counters keep moving.
    let first = value(&body, "wasmdp_port_rx_packets_total{port=\"a\"}");
    let mut last = first;
    for _ in 0..50 {
        let (_, b) = http_get(addr, "/metrics");
        last = value(&b, "wasmdp_port_rx_packets_total{port=\"a\"}");
    }
    assert!(last > first, "{first} -> {last}");
    assert!(http_get(addr, "/nope").0.contains("404"));
    promtool_check(&body);
    running.finish(&opts).unwrap();
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_plugin_max_failures_disabled_is_enabled_again_through_the_socket() {
    // faulty_trap traps on every burst; with max_failures 1 the first trap disables it.
    let d = dir("revive");
    let yaml = format!(
        "engine: io\nports:\n  - {{name: a, driver: null, policy: {{plugin: {}, on_failure: fail_open, max_failures: 1, limits: {{deadline_us: 500000}}}}}}\n  - {{name: b, driver: null}}\n",
        plugin_path("faulty_trap").display()
    );
    let cfg = wasmdp::config::parse(&yaml, "test").unwrap();
    let dp = dataplane::build(&cfg, &Overrides::default()).unwrap();
    let sock = d.join("ctl.sock");
    let opts = RunOptions { control: Some(sock.clone()), ..RunOptions::default() };
    let running = dataplane::start(dp, &opts, Arc::new(AtomicBool::new(false))).unwrap();
    let policy = |sock: &Path| ok(sock, json!({"cmd": "policies"}))[0].clone();
    let t = Instant::now();
    while policy(&sock)["state"] != "disabled" {
        assert!(t.elapsed() < Duration::from_secs(10), "not disabled: {}", policy(&sock));
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(policy(&sock)["traps"], 1);
    ok(&sock, json!({"cmd": "policy", "action": "enable", "port": "a"}));
    // A new instance runs, traps again, and is disabled again: one more trap counted.
    let t = Instant::now();
    while policy(&sock)["traps"] != 2 {
        assert!(t.elapsed() < Duration::from_secs(10), "not called again: {}", policy(&sock));
        std::thread::sleep(Duration::from_millis(5));
    }
    running.finish(&opts).unwrap();
    std::fs::remove_dir_all(&d).unwrap();
}

/// Threads of this process named `prefix...` now. Counting every thread of the process is not a
/// measure of one server: the tests of this file run side by side, and the trickle test's 128
/// control-socket clients each hold a thread (a CI run counted 125 of them against the metrics
/// endpoint). A thread the metrics server spawns carries its name unless given another, since Linux
/// threads inherit the name of the thread that made them.
fn threads(prefix: &str) -> usize {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
        .filter(|name| name.starts_with(prefix))
        .count()
}

#[test]
fn the_metrics_endpoint_bounds_what_a_client_can_make_it_hold_and_escapes_names() {
    // A plugin whose counter name tries to inject a sample; clients that never finish their
    // request; one that sends header lines without end. Once: an injected
    // `wasmdp_port_rx_packets{port="FAKE"} 31337`, a thread per connection (7989 for 8000), and
    // 90 MB/s of memory growth.
    let d = dir("metrics-hostile");
    let name = "x\"} 1\nwasmdp_port_rx_packets_total{port=\"FAKE\"} 31337\n\\";
    let data: String = name.bytes().map(|b| format!("\\{b:02x}")).collect();
    let p = common::write_wat(
        "metrics-inject",
        &format!(
            r#"(module (import "wasmdp" "counter_register" (func $reg (param i32 i32) (result i32)))
              (memory (export "memory") 1) (data (i32.const 16) "{data}")
              (func (export "wasmdp_abi_version") (result i32) (i32.const 65536))
              (func (export "wasmdp_init") (param i32 i32) (result i32)
                (drop (call $reg (i32.const 16) (i32.const {}))) (i32.const 0))
              (func (export "wasmdp_on_burst") (param i32 i32) (result i32) (i32.const 0)))"#,
            name.len()
        ),
    );
    let yaml = format!(
        "engine: io\nports:\n  - {{name: 'a\"b', driver: null, policy: {{plugin: {}}}}}\n  - {{name: b, driver: null}}\n",
        p.display()
    );
    let cfg = wasmdp::config::parse(&yaml, "test").unwrap();
    let (running, opts, addr) = serve_metrics(&cfg, 7);
    let (_, body) = http_get(addr, "/metrics");
    assert!(!body.lines().any(|l| l.contains("FAKE") && !l.contains("name=")), "an injected sample:\n{body}");
    assert!(body.contains("port=\"a\\\"b\""), "the port name escaped:\n{body}");
    // 300 connections that send nothing: no thread each, and a scrape still answered.
    // (Other tests' metrics servers may start meanwhile: one thread each.)
    let before = threads("wasmdp-metrics");
    assert!(before >= 1, "the metrics server's thread is found by its name");
    let idle: Vec<_> = (0..300).map(|_| std::net::TcpStream::connect(addr).unwrap()).collect();
    std::thread::sleep(Duration::from_millis(300));
    let after = threads("wasmdp-metrics");
    assert!(after <= before + 2, "{} threads for 300 idle connections", after.saturating_sub(before));
    let t = Instant::now();
    assert!(http_get(addr, "/metrics").0.contains("200"));
    assert!(t.elapsed() < Duration::from_secs(2), "answered after {:?}", t.elapsed());
    drop(idle);
    // Header lines without end: refused past the head's limit, the connection closed.
    let mut flood = std::net::TcpStream::connect(addr).unwrap();
    flood.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut sent = 0;
    let line = b"X-Flood: 0123456789012345678901234567890123456789\r\n";
    let _ = flood.write_all(b"GET /metrics HTTP/1.0\r\n");
    while sent < (1 << 20) && flood.write_all(line).is_ok() {
        sent += line.len();
    }
    let mut answer = String::new();
    let _ = flood.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.0 431"), "{answer:.200}");
    let (status, body) = http_get(addr, "/metrics");
    assert!(status.contains("200"), "{status}");
    promtool_check(&body);
    running.finish(&opts).unwrap();
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn trickling_clients_cannot_keep_an_operator_out_and_each_request_has_its_time() {
    let d = dir("trickle");
    let (running, opts, sock) = start(&d);
    // Every place taken by clients that sent one byte of a request that never ends.
    let mut trickle: Vec<UnixStream> = (0..wasmdp::control::MAX_CLIENTS)
        .map(|_| {
            let mut s = UnixStream::connect(&sock).unwrap();
            s.write_all(b"{").unwrap();
            s
        })
        .collect();
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(ok(&sock, json!({"cmd": "version"}))["abi"], "1.1", "an operator gets in");
    // One byte every 300 ms keeps no client past its request's time.
    let mut one = trickle.pop().unwrap();
    let t = Instant::now();
    let closed = loop {
        std::thread::sleep(Duration::from_millis(300));
        if one.write_all(b" ").is_err() || t.elapsed() > wasmdp::control::TIMEOUT * 3 {
            break t.elapsed();
        }
    };
    assert!(closed < wasmdp::control::TIMEOUT + Duration::from_secs(2), "closed after {closed:?}");
    drop(trickle);
    // A dump in pages: 8 flows, 3 a page.
    let mut cursor = json!(0);
    let mut keys = Vec::new();
    loop {
        let page = ok(&sock, json!({"cmd": "map_dump", "port": "a", "map": "flows", "limit": 3, "cursor": cursor}));
        let entries = page["entries"].as_array().unwrap();
        assert!(entries.len() <= 3, "{page}");
        keys.extend(entries.iter().map(|e| e["key"].as_str().unwrap().to_string()));
        if page["next"].is_null() {
            break;
        }
        cursor = page["next"].clone();
    }
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), 8, "every flow once: {keys:?}");
    assert!(err(&sock, json!({"cmd": "map_dump", "port": "a", "map": "flows", "limit": 0})).contains("limit"));
    running.finish(&opts).unwrap();
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_map_with_a_typed_layout_is_dumped_and_written_by_field() {
    // The firewall declares its flow map's layout (SDK `map_layout!`): the operator sees fields,
    // not hex, and pins a flow by naming them.
    let d = dir("typed");
    let fw = plugin_path("firewall");
    let port = |name: &str, side: &str, frame: &str| {
        format!(
            "  - {{name: {name}, driver: null, frame: {{{frame}}}, policy: {{plugin: {}, params: {{side: {side}}}, shared_maps: [fw_flows], limits: {{deadline_us: 500000}}}}}}\n",
            fw.display()
        )
    };
    let yaml = format!(
        "engine: io\nports:\n{}{}",
        port("inside", "inside", "src_ip: 10.0.0.5, dst_ip: 198.51.100.7, src_port: 40000, dst_port: 443, flows: 2"),
        port("outside", "outside", "src_ip: 198.51.100.7, dst_ip: 10.0.0.5")
    );
    let cfg_path = d.join("config.yaml");
    std::fs::write(&cfg_path, yaml).unwrap();
    let cfg = wasmdp::config::load(&cfg_path).unwrap();
    let dp = dataplane::build(&cfg, &Overrides::default()).unwrap();
    let sock = d.join("ctl.sock");
    let opts = RunOptions { control: Some(sock.clone()), ..RunOptions::default() };
    let running = dataplane::start(dp, &opts, Arc::new(AtomicBool::new(false))).unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let dump = ok(&sock, json!({"cmd": "map_dump", "port": "inside", "map": "fw_flows"}));
    let mut texts: Vec<&str> =
        dump["entries"].as_array().unwrap().iter().map(|e| e["text"].as_str().unwrap()).collect();
    texts.sort();
    assert_eq!(
        texts,
        [
            "inside=10.0.0.5 outside=198.51.100.7 iport=40000 oport=443 proto=17 -> seen=1",
            "inside=10.0.0.5 outside=198.51.100.7 iport=40001 oport=443 proto=17 -> seen=1"
        ],
        "{dump}"
    );
    let key = "inside=10.0.0.9 outside=192.0.2.1 iport=5000 oport=53 proto=17";
    let pin = json!({"cmd": "map_update", "port": "outside", "map": "fw_flows", "key": key, "value": "seen=1"});
    ok(&sock, pin);
    let got = ok(&sock, json!({"cmd": "map_get", "port": "inside", "map": "fw_flows", "key": key}));
    assert_eq!(got["text"], format!("{key} -> seen=1"), "{got}");
    assert_eq!(got["key"], "0a000009c00002011388003511", "{got}");
    let e = err(&sock, json!({"cmd": "map_get", "port": "inside", "map": "fw_flows", "key": "inside=10.0.0.9"}));
    assert!(e.contains("field \"outside\" is missing"), "{e}");
    let s = sock.to_str().unwrap();
    let (code, out, e) = common::wasmdp(&["ctl", "--socket", s, "map", "dump", "outside", "fw_flows"]);
    assert_eq!(code, 0, "{e}");
    assert!(out.contains(&format!("{key} -> seen=1")), "{out}");
    let report = running.finish(&opts).unwrap();
    assert_eq!(report.leaked, 0);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_chain_is_shown_link_by_link_and_one_link_can_be_disabled() {
    let d = dir("chain");
    let yaml = format!(
        "engine: io\nstreams: [{{rx: a, tx: b}}, {{rx: c, tx: c}}]\nports:\n  - name: a\n    driver: null\n    frame: {{flows: 8}}\n    policy:\n      - {{name: acl, plugin: {}, params: {{deny_udp_dst_port: 9}}, limits: {{deadline_us: 500000}}}}\n      - {{name: lb, plugin: {}, params: {{ports: '1,2'}}, limits: {{deadline_us: 500000}}}}\n  - {{name: b, driver: null}}\n  - {{name: c, driver: null}}\n",
        plugin_path("acl").display(),
        plugin_path("l4_lb").display()
    );
    let (running, opts, sock) = start_with(&d, &yaml);
    std::thread::sleep(Duration::from_millis(100));
    let pol = ok(&sock, json!({"cmd": "policies"}));
    let links = pol[0]["links"].as_array().unwrap();
    let names: Vec<&str> = links.iter().map(|l| l["link"].as_str().unwrap()).collect();
    assert_eq!(names, ["acl", "lb"], "{pol}");
    assert!(links[0]["plugin"].as_str().unwrap().ends_with("acl.wasm"), "{pol}");
    assert!(links.iter().all(|l| l["abi"] == "1.1"), "{pol}");
    assert!(links.iter().all(|l| l["state"] == "running"), "{pol}");
    assert!(links[0]["calls"].as_u64().unwrap() > 0 && links[1]["calls"] == 0, "{pol}");
    // The null port's frames go to UDP port 9 (the template's): the ACL drops them all, counted
    // with it; the balancer after it is never called with an empty burst.
    assert!(links[0]["drops"].as_u64().unwrap() > 0 && links[1]["drops"] == 0, "{pol}");
    assert_eq!(pol[0]["drops"], links[0]["drops"], "{pol}");
    // Disabling the ACL alone: the port's engine (io) stands in for it, so the balancer now runs.
    let a = ok(&sock, json!({"cmd": "policy", "action": "disable", "port": "a", "link": "acl"}));
    assert_eq!((a["link"].as_str(), a["state"].as_str()), (Some("acl"), Some("disabled")), "{a}");
    let lb_calls = |sock: &Path| ok(sock, json!({"cmd": "policies"}))[0]["links"][1]["calls"].as_u64().unwrap();
    let before = lb_calls(&sock);
    std::thread::sleep(Duration::from_millis(100));
    assert!(lb_calls(&sock) > before, "the balancer is called once the ACL stands aside");
    let pol = ok(&sock, json!({"cmd": "policies"}));
    assert_eq!(
        (pol[0]["links"][0]["state"].as_str(), pol[0]["links"][1]["state"].as_str()),
        (Some("disabled"), Some("running"))
    );
    assert!(err(&sock, json!({"cmd": "policy", "action": "enable", "port": "a", "link": "nat"}))
        .contains("no policy link \"nat\""));
    // A hostile client's link of the wrong type is refused with the rule, nothing disabled.
    let e = err(&sock, json!({"cmd": "policy", "action": "disable", "port": "a", "link": {"x": 1}}));
    assert!(e.contains("\"link\" must be a string"), "{e}");
    assert_eq!(ok(&sock, json!({"cmd": "policies"}))[0]["links"][1]["state"], "running");
    let stats = ok(&sock, json!({"cmd": "stats"}));
    let l = &stats["ports"][0]["plugin_links"];
    assert_eq!((l[0]["link"].as_str(), l[1]["link"].as_str()), (Some("acl"), Some("lb")), "{stats}");
    assert!(l[0]["ns_per_call"].as_u64().unwrap() > 0, "sampled call time: {stats}");
    running.finish(&opts).unwrap();
    std::fs::remove_dir_all(&d).unwrap();
}

/// The metric names a Grafana dashboard's queries use (`wasmdp_...` words of every `expr`).
fn dashboard_metrics(dashboard: &Value) -> std::collections::BTreeSet<String> {
    fn walk(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                for (k, v) in m {
                    match (k.as_str(), v) {
                        ("expr" | "definition", Value::String(e)) => out.push(e.clone()),
                        ("query", Value::String(e)) => out.push(e.clone()),
                        _ => walk(v, out),
                    }
                }
            }
            Value::Array(a) => a.iter().for_each(|v| walk(v, out)),
            _ => {}
        }
    }
    let mut exprs = Vec::new();
    walk(dashboard, &mut exprs);
    let mut names = std::collections::BTreeSet::new();
    for e in exprs {
        let mut rest = e.as_str();
        while let Some(i) = rest.find("wasmdp_") {
            let word: String = rest[i..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            rest = &rest[i + word.len()..];
            names.insert(word);
        }
    }
    names
}

#[test]
fn the_grafana_dashboard_queries_only_metrics_wasmdp_exports() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/grafana/wasmdp.json");
    let dashboard: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let names = dashboard_metrics(&dashboard);
    assert!(names.len() >= 20, "the dashboard covers the metrics: {names:?}");
    let d = dir("grafana");
    let cfg_path = d.join("config.yaml");
    std::fs::write(&cfg_path, config()).unwrap();
    let cfg = wasmdp::config::load(&cfg_path).unwrap();
    let (running, opts, addr) = serve_metrics(&cfg, 13);
    let (_, body) = http_get(addr, "/metrics");
    running.finish(&opts).unwrap();
    // A sample of that name, or a family of that name (a family with no sample yet, such as the
    // gauges of a plugin that defines none).
    let exported = |n: &str| {
        body.lines().any(|l| l.strip_prefix(n).is_some_and(|r| r.starts_with(['{', ' '])))
            || body.contains(&format!("# TYPE {n} "))
    };
    let missing: Vec<_> = names.iter().filter(|n| !exported(n)).collect();
    assert!(missing.is_empty(), "{} queries metrics wasmdp does not export: {missing:?}", file.display());
    std::fs::remove_dir_all(&d).unwrap();
}
