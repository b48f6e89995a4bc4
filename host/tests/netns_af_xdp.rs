//! The `af_xdp` driver on live interfaces: network namespaces joined by veth pairs to wasmdp ports in
//! the root namespace, traffic only inside those namespaces, XDP in native (veth driver) and generic
//! mode, copy mode (veth has no zero copy). Needs root; without it a test skips with a printed
//! reason, which under CI is a failure. wasmdp runs as the binary, stopped with SIGINT, its
//! --stats-json read; every test checks that the XDP program is gone once wasmdp is.
#![cfg(target_os = "linux")]

mod common;

use common::netns::*;
use std::time::Duration;

/// The XDP program attached to root-namespace interface `dev`, as `ip link` shows it.
fn xdp_prog(dev: &str) -> Option<String> {
    let o = sh(&["ip", "-d", "link", "show", "dev", dev]);
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    text.lines().find(|l| l.contains("prog/xdp")).map(|l| l.trim().to_string())
}

fn assert_detached(devs: &[&str]) {
    for d in devs {
        assert_eq!(xdp_prog(d), None, "the XDP program of `{d}` is still attached after wasmdp stopped");
    }
}

fn port_yaml(name: &str, dev: &str, opts: &str) -> String {
    format!("  - {{name: {name}, driver: af_xdp, af_xdp: {{iface: {dev}{opts}}}}}\n")
}

/// Two namespaces, each joined by a veth to one af_xdp port, io between them, XDP in `mode`;
/// ping and arping from a to b; `policy` (YAML) on port a.
fn forwarding(name: &str, mode: &str, policy: Option<String>) -> Option<serde_json::Value> {
    let mut net = Net::new();
    let (a, b) = setup(name, || Ok((net.side('a', 1)?, net.side('b', 2)?)))?;
    let extra = policy.map(|p| format!(", policy: {p}")).unwrap_or_default();
    let opts = format!(", mode: {mode}");
    let yaml = format!(
        "engine: io\ntopology: paired\nports:\n  - {{name: a, driver: af_xdp, af_xdp: {{iface: {}{opts}}}{extra}}}\n{}",
        a.2,
        port_yaml("b", &b.2, &opts)
    );
    let w = Wasmdp::start(name, &yaml);
    let shown = xdp_prog(&a.2).unwrap_or_default();
    assert!(shown.contains("wasmdp_xsk"), "our program on `{}` while running: {shown:?}", a.2);
    let err = || std::fs::read_to_string(w.dir.join("stderr")).unwrap_or_default();
    assert_ok(&format!("ping from a to b through af_xdp ({mode})"), &ping(&a.0, &net.ip(2)), &err());
    let o = sh(&["ip", "netns", "exec", &a.0, "arping", "-c", "2", "-w", "5", "-I", &a.1, &net.ip(2)]);
    assert_ok(&format!("arping from a to b through af_xdp ({mode})"), &o, &err());
    let j = w.stop();
    check_accounting(&j);
    // The pool is the UMEM (the default): not a frame copied in user space.
    for p in ["a", "b"] {
        assert!(u(port(&j, p), "rx_packets") >= 5 && u(port(&j, p), "tx_packets") >= 5, "port {p}: {j}");
        assert_eq!(u(port(&j, p), "umem_copies"), 0, "port {p}: {j}");
    }
    assert_detached(&[&a.2, &b.2]);
    Some(j)
}

/// One of `ports` (YAML lines) between namespaces a (port a) and b (port b): ping a -> b passes;
/// returns the run's stats.
fn ping_across(name: &str, net: &Net, a: &(String, String, String), yaml: &str) -> serde_json::Value {
    let w = Wasmdp::start(name, yaml);
    let err = || std::fs::read_to_string(w.dir.join("stderr")).unwrap_or_default();
    assert_ok(&format!("{name}: ping from a to b"), &ping(&a.0, &net.ip(2)), &err());
    let j = w.stop();
    check_accounting(&j);
    j
}

/// The pool as the UMEM: frames cross between af_xdp ports, and between af_xdp and af_packet or
/// ring ports, without a copy by the af_xdp driver (`umem_copies` 0: an af_xdp RX buffer is the
/// packet, a packet of the pool is posted where it lies); with `umem: queue` every frame the port
/// receives or sends is copied once, and counted.
#[test]
fn netns_af_xdp_frames_cross_without_copies_and_copies_are_counted() {
    let mut net = Net::new();
    let Some((a, b)) = setup("netns_af_xdp_copies", || Ok((net.side('a', 1)?, net.side('b', 2)?))) else { return };
    let xdp = |name: &str, dev: &str, extra: &str| port_yaml(name, dev, &format!(", mode: native{extra}"));
    let both = |p: &serde_json::Value, k: &str| u(p, k);

    // af_xdp <-> af_packet.
    let yaml = format!(
        "engine: io\ntopology: paired\nports:\n{}  - {{name: b, driver: af_packet, af_packet: {{iface: {}}}}}\n",
        xdp("a", &a.2, ""),
        b.2
    );
    let j = ping_across("af_xdp <-> af_packet", &net, &a, &yaml);
    assert!(both(port(&j, "a"), "rx_packets") >= 3 && both(port(&j, "a"), "tx_packets") >= 3, "{j}");
    assert_eq!(u(port(&j, "a"), "umem_copies"), 0, "{j}");

    // af_xdp <-> ring <-> af_xdp, the rings between two lcores' streams.
    let yaml = format!(
        "engine: io\nstreams:\n  - {{rx: a, tx: r0}}\n  - {{rx: r1, tx: b}}\n  - {{rx: b, tx: r1}}\n  - {{rx: r0, tx: a}}\n\
         ports:\n{}  - {{name: r0, driver: ring, ring: {{peer: r1}}}}\n  - {{name: r1, driver: ring, ring: {{peer: r0}}}}\n{}",
        xdp("a", &a.2, ""),
        xdp("b", &b.2, "")
    );
    let j = ping_across("af_xdp <-> ring <-> af_xdp", &net, &a, &yaml);
    for p in ["a", "b"] {
        assert!(both(port(&j, p), "rx_packets") >= 3 && both(port(&j, p), "tx_packets") >= 3, "{j}");
        assert_eq!(u(port(&j, p), "umem_copies"), 0, "port {p}: {j}");
    }

    // A UMEM per queue on a: each frame it receives and each it sends copied once; b still none.
    let yaml =
        format!("engine: io\ntopology: paired\nports:\n{}{}", xdp("a", &a.2, ", umem: queue"), xdp("b", &b.2, ""));
    let j = ping_across("af_xdp umem: queue", &net, &a, &yaml);
    let pa = port(&j, "a");
    assert_eq!(u(pa, "umem_copies"), u(pa, "rx_packets") + u(pa, "tx_packets"), "{j}");
    assert_eq!(u(port(&j, "b"), "umem_copies"), 0, "{j}");

    // `umem: pool` where the pool cannot be the UMEM is refused, saying why; `auto` falls back.
    let yaml = format!(
        "engine: io\ntopology: paired\npool: {{headroom: 64}}\nports:\n{}{}",
        xdp("a", &a.2, ", umem: pool"),
        xdp("b", &b.2, "")
    );
    let dir = std::env::temp_dir().join(format!("wasmdp-af-xdp-umem-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.yaml"), &yaml).unwrap();
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_wasmdp"))
        .args([
            "run",
            dir.join("config.yaml").to_str().unwrap(),
            "--duration",
            "1",
            "--no-reload",
            "--stats-period",
            "0",
        ])
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let (ok, err) = (o.status.success(), String::from_utf8_lossy(&o.stderr).into_owned());
    assert!(!ok, "{err}");
    assert!(err.contains("af_xdp.umem: `pool` is not possible here: pool.headroom 64 is under 128"), "{err}");
    let j = ping_across("af_xdp pool too small", &net, &a, &yaml.replace("umem: pool", "umem: auto"));
    let pa = port(&j, "a");
    assert_eq!(u(pa, "umem_copies"), u(pa, "rx_packets") + u(pa, "tx_packets"), "auto fell back: {j}");
    assert_detached(&[&a.2, &b.2]);
}

#[test]
fn netns_af_xdp_ping_and_arping_in_native_and_generic_mode() {
    forwarding("netns_af_xdp_native", "native", None);
    forwarding("netns_af_xdp_generic", "generic", None);
}

#[test]
fn netns_af_xdp_plugin_chooses_the_engine() {
    let wasm = common::plugin_path("static_policy");
    let policy = format!("{{plugin: {}, params: {{engine: io}}}}", wasm.display());
    if let Some(j) = forwarding("netns_af_xdp_plugin", "auto", Some(policy)) {
        let calls = port(&j, "a")["plugin_calls"].as_u64().unwrap_or(0);
        assert!(calls > 0, "plugin_calls of port a: {j}");
    }
}

fn rx_packets(ns: &str, dev: &str) -> u64 {
    let o = sh(&["ip", "netns", "exec", ns, "cat", &format!("/sys/class/net/{dev}/statistics/rx_packets")]);
    String::from_utf8_lossy(&o.stdout).trim().parse().unwrap_or_else(|_| panic!("rx_packets of {dev} in {ns}: {o:?}"))
}

#[test]
fn netns_af_xdp_macswap_reflects_and_icmpecho_answers() {
    let mut net = Net::new();
    let Some(a) = setup("netns_af_xdp_reflect", || net.side('a', 1)) else { return };
    // macswap: a static neighbour, so that ping sends at once; every request comes back.
    run_ok(&["ip", "-n", &a.0, "neigh", "add", &net.ip(2), "lladdr", "02:00:00:00:00:00", "dev", &a.1]).unwrap();
    let yaml = format!("engine: macswap\ntopology: loop\nports:\n{}", port_yaml("a", &a.2, ""));
    let w = Wasmdp::start("netns_af_xdp_macswap", &yaml);
    let before = rx_packets(&a.0, &a.1);
    let n = 5;
    let _ = sh(&["ip", "netns", "exec", &a.0, "ping", "-c", &n.to_string(), "-i", "0.2", "-W", "1", &net.ip(2)]);
    std::thread::sleep(Duration::from_millis(300));
    let back = rx_packets(&a.0, &a.1) - before;
    let j = w.stop();
    check_accounting(&j);
    assert!(u(port(&j, "a"), "tx_packets") >= n && back >= n, "macswap reflected {back} of {n}: {j}");
    assert_detached(&[&a.2]);
    run_ok(&["ip", "-n", &a.0, "neigh", "del", &net.ip(2), "dev", &a.1]).unwrap();

    // icmpecho answers ping and arping for its address.
    let ip = net.ip(3);
    let yaml = format!(
        "engine: icmpecho\ntopology: loop\nports:\n  - {{name: a, driver: af_xdp, af_xdp: {{iface: {}}}, icmpecho: {{ipv4: [{ip}]}}}}\n",
        a.2
    );
    let w = Wasmdp::start("netns_af_xdp_icmpecho", &yaml);
    let err = || std::fs::read_to_string(w.dir.join("stderr")).unwrap_or_default();
    assert_ok("ping of the icmpecho port on af_xdp", &ping(&a.0, &ip), &err());
    let o = sh(&["ip", "netns", "exec", &a.0, "arping", "-c", "2", "-w", "5", "-I", &a.1, &ip]);
    assert_ok("arping of the icmpecho port on af_xdp", &o, &err());
    let j = w.stop();
    check_accounting(&j);
    assert_detached(&[&a.2]);
}

#[test]
fn netns_af_xdp_every_frame_is_received_or_counted_at_stop() {
    let mut net = Net::new();
    let Some(a) = setup("netns_af_xdp_missed", || net.side('a', 1)) else { return };
    let _ = sh(&["ip", "netns", "exec", &a.0, "sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1"]);
    // 64 RX frames: the rest of what arrives while wasmdp is stopped finds no frame to go to.
    let yaml = format!("engine: rxonly\ntopology: loop\nports:\n{}", port_yaml("a", &a.2, ", ring_size: 64"));
    let w = Wasmdp::start("netns_af_xdp_missed", &yaml);
    let n = 500;
    flood_while_stopped(&w, &net, &a, n, Duration::from_millis(300));
    let j = w.stop();
    check_accounting(&j);
    let p = port(&j, "a");
    let (rx, missed, inflight) = received_missed_in_flight(&j, "a");
    eprintln!("sent {n}: received {rx}, missed {missed}, in flight {inflight}");
    assert_eq!(rx, 64, "the 64 frames of the fill ring were received after SIGCONT: {p}");
    assert_eq!(rx + missed + inflight, n, "every frame the kernel had is received or counted: {p}");
    assert_detached(&[&a.2]);
}

#[test]
fn netns_af_xdp_a_killed_run_leaves_nothing_and_a_second_run_on_a_taken_interface_is_refused() {
    let mut net = Net::new();
    let Some((a, b)) = setup("netns_af_xdp_kill", || Ok((net.side('a', 1)?, net.side('b', 2)?))) else { return };
    let yaml =
        format!("engine: io\ntopology: paired\nports:\n{}{}", port_yaml("a", &a.2, ""), port_yaml("b", &b.2, ""));
    let first = Wasmdp::start("netns_af_xdp_first", &yaml);

    // A second wasmdp on the same interfaces: refused with what to do, the first one unharmed.
    let dir = std::env::temp_dir().join(format!("wasmdp-af-xdp-second-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cfg = dir.join("config.yaml");
    std::fs::write(&cfg, &yaml).unwrap();
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_wasmdp"))
        .args(["run", cfg.to_str().unwrap(), "--duration", "1", "--no-reload"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "a second run on taken interfaces must fail: {err}");
    assert!(err.contains("already has an XDP program") && err.contains(&a.2), "{err}");
    assert!(xdp_prog(&a.2).is_some_and(|p| p.contains("wasmdp_xsk")), "the first run's program stays");

    // zero_copy: on, which veth cannot do: a clear error, nothing left attached by that attempt.
    let zc = format!("engine: io\nports:\n{}", port_yaml("z", &b.2, ", zero_copy: on"));
    std::fs::write(&cfg, &zc).unwrap();
    let mut first = first;
    let mut child = first.child.take().unwrap();
    // SIGKILL: no chance to clean up. The kernel closes the link, the program goes with it.
    child.kill().unwrap();
    child.wait().unwrap();
    let mut gone = false;
    for _ in 0..40 {
        if xdp_prog(&a.2).is_none() && xdp_prog(&b.2).is_none() {
            gone = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(gone, "a SIGKILLed run left an XDP program: {:?} {:?}", xdp_prog(&a.2), xdp_prog(&b.2));
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_wasmdp"))
        .args(["run", cfg.to_str().unwrap(), "--duration", "1", "--no-reload"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && err.contains("no zero-copy AF_XDP") && err.contains("zero_copy: auto or off"),
        "{err}"
    );
    assert_detached(&[&b.2]);

    // The interfaces are free again at once: the queues the killed run held are bound anew (the
    // kernel's asynchronous socket teardown is waited out), and traffic flows.
    let w = Wasmdp::start("netns_af_xdp_again", &yaml);
    let err = std::fs::read_to_string(w.dir.join("stderr")).unwrap_or_default();
    assert_ok("ping through a run started after a killed one", &ping(&a.0, &net.ip(2)), &err);
    let j = w.stop();
    check_accounting(&j);
    assert_detached(&[&a.2, &b.2]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn netns_af_xdp_two_queues_each_get_their_share() {
    let mut net = Net::new();
    net.queues = 2;
    let Some((a, b)) = setup("netns_af_xdp_queues", || Ok((net.side('a', 1)?, net.side('b', 2)?))) else { return };
    // 16 source addresses in namespace a: 16 flows for the queues to share.
    add_sources(&net, &a);
    // With the default rings both ports' queues would hold more than half the pool: port a gets
    // the pool as its UMEM, port b a UMEM per queue; with rings of 512 both get the pool, four
    // queues lending buffers out of it on two lcores.
    for (ring, copies_b) in [("", true), (", ring_size: 512", false)] {
        let yaml = format!(
            "engine: io\nports:\n  - {{name: a, driver: af_xdp, queues: 2, af_xdp: {{iface: {}{ring}}}}}\n  - {{name: b, driver: af_xdp, queues: 2, af_xdp: {{iface: {}, busy_poll: true{ring}}}}}\n",
            a.2, b.2
        );
        let w = Wasmdp::start("netns_af_xdp_queues", &yaml);
        let err = std::fs::read_to_string(w.dir.join("stderr")).unwrap_or_default();
        ping_from_sources(&net, &a, &err);
        let j = w.stop();
        check_accounting(&j);
        assert_both_queues_received(&j, "a");
        assert_eq!(u(port(&j, "a"), "umem_copies"), 0, "{j}");
        assert_eq!(u(port(&j, "b"), "umem_copies") > 0, copies_b, "rings{ring}: {j}");
        assert_detached(&[&a.2, &b.2]);
    }
}

/// Runs wasmdp on `yaml` for a second inside namespace `ns` (as user nobody without capabilities
/// when `unprivileged`); returns whether it succeeded and its stderr.
fn run_in(ns: &str, yaml: &str, unprivileged: bool) -> (bool, String) {
    let dir = std::env::temp_dir().join(format!("wasmdp-af-xdp-in-{}-{ns}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cfg = dir.join("config.yaml");
    std::fs::write(&cfg, yaml).unwrap();
    let nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all"];
    let mut args = vec!["ip", "netns", "exec", ns];
    if unprivileged {
        args.extend(nobody);
    }
    let bin = env!("CARGO_BIN_EXE_wasmdp");
    args.extend([bin, "run", cfg.to_str().unwrap(), "--duration", "1", "--no-reload", "--stats-period", "0"]);
    let o = std::process::Command::new(args[0]).args(&args[1..]).env("RUST_LOG", "info").output().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    (o.status.success(), String::from_utf8_lossy(&o.stderr).into_owned())
}

#[test]
fn netns_af_xdp_refusals_say_why_and_auto_falls_back_to_generic() {
    let mut net = Net::new();
    let ns = format!("{}x", net.tag);
    let made = setup("netns_af_xdp_refusals", || {
        run_ok(&["ip", "netns", "add", &ns])?;
        net.namespaces.push(ns.clone());
        // A bridge: an interface whose driver has no native XDP.
        run_ok(&["ip", "-n", &ns, "link", "add", "br0", "type", "bridge"])?;
        run_ok(&["ip", "-n", &ns, "link", "set", "br0", "up"])
    });
    if made.is_none() {
        return;
    }
    let cfg = |mode: &str| {
        format!("engine: io\ntopology: loop\nports:\n  - {{name: a, driver: af_xdp, af_xdp: {{iface: br0, mode: {mode}}}}}\n")
    };
    let (ok, err) = run_in(&ns, &cfg("native"), false);
    assert!(
        !ok && err.contains("`br0` cannot run XDP in native mode") && err.contains("af_xdp.mode: generic"),
        "{err}"
    );
    let (ok, err) = run_in(&ns, &cfg("auto"), false);
    assert!(ok && err.contains("using generic mode") && err.contains("XDP in generic mode, copy mode"), "{err}");
    let (ok, err) = run_in(&ns, &cfg("auto"), true);
    assert!(!ok && err.contains("refused") && err.contains("run as root, or give the binary CAP_BPF"), "{err}");
    // Queues the interface does not have: said by validate, before anything is opened.
    let past =
        "engine: io\ntopology: loop\nports:\n  - {name: a, driver: af_xdp, af_xdp: {iface: br0, queue_start: 3}}\n";
    let dir = std::env::temp_dir().join(format!("wasmdp-af-xdp-queues-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("config.yaml");
    std::fs::write(&file, past).unwrap();
    let bin = env!("CARGO_BIN_EXE_wasmdp");
    let o = sh(&["ip", "netns", "exec", &ns, bin, "validate", file.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("af_xdp.queue_start") && err.contains("which has 1 RX queue"), "{err}");
    // Pass lists: an unknown entry, and `not_our_mac` without the port's MAC to compare with.
    for (pass, says) in
        [("[arp, icmp]", "unknown entry `icmp`"), ("[not_our_mac]", "`not_our_mac` needs the port's `mac:`")]
    {
        let yaml = format!(
            "engine: io\ntopology: loop\nports:\n  - {{name: a, driver: af_xdp, af_xdp: {{iface: br0, pass: {pass}}}}}\n"
        );
        std::fs::write(&file, yaml).unwrap();
        let o = sh(&["ip", "netns", "exec", &ns, bin, "validate", file.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && err.contains(says), "{pass}: {err}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn netns_af_xdp_tcp_with_the_senders_default_offloads_in_native_and_generic_mode() {
    // The veths keep their default offloads: the sender's kernel leaves checksums partial (and in
    // generic mode may hand over super-frames); AF_XDP carries no metadata saying so. Once, TCP
    // moved nothing (29 frames in 15 s) while ping passed.
    for mode in ["native", "generic"] {
        let mut net = Net::new();
        let name = format!("netns_af_xdp_tcp_{mode}");
        let Some((a, b)) = setup(&name, || Ok((net.side('a', 1)?, net.side('b', 2)?))) else { return };
        let opts = format!(", mode: {mode}");
        let yaml = format!("engine: io\nports:\n{}{}", port_yaml("a", &a.2, &opts), port_yaml("b", &b.2, &opts));
        if mode == "generic" {
            // Generic XDP sees a local sender's TSO/GSO super-frames whole, larger than a UMEM
            // frame, and the kernel drops them (rx_missed): the README says to turn the sender's
            // segmentation offloads off there. Its checksum offload stays on: partial checksums
            // still arrive, and are completed.
            for side in [&a, &b] {
                run_ok(&["ip", "netns", "exec", &side.0, "ethtool", "-K", &side.1, "tso", "off", "gso", "off"])
                    .unwrap();
            }
        }
        let w = Wasmdp::start(&name, &yaml);
        let t = tcp_transfer(&net, &a, &b, 16, &w);
        let j = w.stop();
        check_accounting(&j);
        eprintln!("TCP through wasmdp (af_xdp, {mode}), default offloads: {t}; ports {}", j["ports"]);
        assert!(u(port(&j, "a"), "rx_csum_completed") > 0, "the sender's partial checksums were completed: {j}");
        assert_detached(&[&a.2, &b.2]);
    }
}

#[test]
fn netns_af_xdp_every_frame_posted_leaves_and_what_cannot_is_counted() {
    // Once: with burst 64, 64 frames were posted and counted, 32 left (the rest waited for the next
    // packet); a frame over the MTU at the front of a burst kept the 31 behind it in the ring, all
    // counted as sent; a frame over a UMEM frame made its whole burst drop as tx_full.
    let mut net = Net::new();
    let Some(b) = setup("netns_af_xdp_tx", || net.side('b', 2)) else { return };
    let out = port_yaml("out", &b.2, ", mode: native");
    let (j, got) = replay_into("netns_af_xdp_tx64", &b, &out, 64, &frames_of(&net, 64 * 5, 64));
    let o = port(&j, "out");
    assert_eq!((u(o, "tx_packets"), got), (320, 320), "every frame counted as sent arrived: {o}");
    // A burst led by a frame over the MTU (1500), then one led by a frame over a UMEM frame.
    let mut frames = frames_of(&net, 1, 1600);
    frames.extend(frames_of(&net, 31, 64));
    frames.extend(frames_of(&net, 1, 3000));
    frames.extend(frames_of(&net, 31, 64));
    let (j, got) = replay_into("netns_af_xdp_tx_big", &b, &out, 32, &frames);
    check_accounting(&j);
    let o = port(&j, "out");
    assert_eq!((u(o, "tx_packets"), got), (62, 62), "{o}");
    assert_eq!(u(&o["dropped_by_reason"], "tx_oversize"), 2, "{o}");
    assert_eq!(u(&o["dropped_by_reason"], "tx_full"), 0, "{o}");
    assert_detached(&[&b.2]);
}

/// `wasmdp ctl capture` on a live af_xdp port (`common::netns::check_capture_of_ping`).
#[test]
fn netns_af_xdp_a_capture_of_the_port_shows_requests_in_and_replies_out() {
    let mut net = Net::new();
    let Some(a) = setup("netns_af_xdp_capture", || net.side('a', 1)) else { return };
    check_capture_of_ping("netns_af_xdp_capture", &a, &net.ip(2), "driver: af_xdp, af_xdp");
    assert_detached(&[&a.2]);
}

/// The MAC of `dev` in namespace `ns`.
fn mac_of(ns: &str, dev: &str) -> String {
    let o = sh(&["ip", "netns", "exec", ns, "cat", &format!("/sys/class/net/{dev}/address")]);
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// `af_xdp.pass`: with `[arp, {ipv4_dst: ADDR}]` on port a, the kernel of wasmdp's namespace keeps
/// its own traffic on a's interface (it answers arping and ping to ADDR, an address of its own
/// there) while wasmdp forwards the rest (a to b, whose neighbours are static: ARP is the kernel's
/// now). Without the list, the same arping and ping go to wasmdp and get no answer.
#[test]
fn netns_af_xdp_the_pass_list_leaves_the_hosts_own_arp_and_ping_to_its_kernel() {
    let name = "netns_af_xdp_pass";
    let mut net = Net::new();
    let Some((a, b)) = setup(name, || Ok((net.side('a', 1)?, net.side('b', 2)?))) else { return };
    // The host's own address on a's interface (the root namespace is wasmdp's).
    let host_ip = net.ip(250);
    run_ok(&["ip", "addr", "add", &format!("{host_ip}/32"), "dev", &a.2]).unwrap();
    run_ok(&["ip", "route", "add", &format!("{}/32", net.ip(1)), "dev", &a.2]).unwrap();
    run_ok(&["ip", "-n", &a.0, "neigh", "replace", &net.ip(2), "lladdr", &mac_of(&b.0, &b.1), "dev", &a.1]).unwrap();
    run_ok(&["ip", "-n", &b.0, "neigh", "replace", &net.ip(1), "lladdr", &mac_of(&a.0, &a.1), "dev", &b.1]).unwrap();
    // Nothing but what the test sends (no IPv6 chatter), so that b's counter shows what reached it.
    for ns in [&a.0, &b.0] {
        run_ok(&["ip", "netns", "exec", ns, "sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1"]).unwrap();
    }
    let yaml = |pass: &str| {
        format!(
            "engine: io\ntopology: paired\nports:\n{}{}",
            port_yaml("a", &a.2, &format!(", mode: native{pass}")),
            port_yaml("b", &b.2, ", mode: native")
        )
    };
    let arping = || sh(&["ip", "netns", "exec", &a.0, "arping", "-c", "2", "-w", "3", "-I", &a.1, &host_ip]);
    let ping_host = || sh(&["ip", "netns", "exec", &a.0, "ping", "-c", "2", "-W", "1", "-w", "4", &host_ip]);

    let w = Wasmdp::start(&format!("{name}_none"), &yaml(""));
    let err = || std::fs::read_to_string(w.dir.join("stderr")).unwrap_or_default();
    assert_ok("ping from a to b through af_xdp", &ping(&a.0, &net.ip(2)), &err());
    assert!(!arping().status.success(), "without a pass list, ARP for the host reached its kernel");
    assert!(!ping_host().status.success(), "without a pass list, ping to the host reached its kernel");
    let j = w.stop();
    check_accounting(&j);
    assert_detached(&[&a.2, &b.2]);

    let w = Wasmdp::start(name, &yaml(&format!(", pass: [arp, {{ipv4_dst: {host_ip}}}]")));
    let err = || std::fs::read_to_string(w.dir.join("stderr")).unwrap_or_default();
    let before = rx_packets(&b.0, &b.1);
    assert_ok("arping the host, answered by its kernel", &arping(), &err());
    assert_ok("ping the host, answered by its kernel", &ping_host(), &err());
    assert_eq!(rx_packets(&b.0, &b.1), before, "the host's ARP and ping were not forwarded to b");
    assert_ok("ping from a to b through af_xdp, beside them", &ping(&a.0, &net.ip(2)), &err());
    let j = w.stop();
    check_accounting(&j);
    assert!(u(port(&j, "a"), "rx_packets") >= 3 && u(port(&j, "b"), "tx_packets") >= 3, "{j}");
    assert_detached(&[&a.2, &b.2]);
}

/// A ping of 8972 bytes of ICMP payload (a 9000-byte IPv4 packet, a 9014-byte frame), not
/// fragmented, from namespace `ns` to `to`, one second for each reply.
fn jumbo_ping(ns: &str, to: &str, count: &[&str]) -> std::process::Output {
    let mut args = vec!["ip", "netns", "exec", ns, "ping", "-M", "do", "-s", "8972", "-W", "1"];
    args.extend(count);
    args.push(to);
    sh(&args)
}

/// Frames longer than a UMEM frame: with MTU 9000 on every veth end and 2048-byte UMEM frames, a
/// 9000-byte ping crosses wasmdp as multi-buffer frames (five descriptors each way), put together
/// in one pool buffer and split again, in native and generic mode; none dropped or refused.
#[test]
fn netns_af_xdp_jumbo_frames_cross_as_several_buffers() {
    for mode in ["native", "generic"] {
        let name = format!("netns_af_xdp_jumbo_{mode}");
        let mut net = Net::new();
        let Some((a, b)) = setup(&name, || Ok((net.side('a', 1)?, net.side('b', 2)?))) else { return };
        for (ns, inner, outer) in [&a, &b] {
            run_ok(&["ip", "-n", ns, "link", "set", inner, "mtu", "9000"]).unwrap();
            run_ok(&["ip", "link", "set", outer, "mtu", "9000"]).unwrap();
        }
        let yaml = format!(
            "engine: io\ntopology: paired\npool: {{data_room: 9216}}\nports:\n{}{}",
            port_yaml("a", &a.2, &format!(", mode: {mode}")),
            port_yaml("b", &b.2, &format!(", mode: {mode}"))
        );
        let w = Wasmdp::start(&name, &yaml);
        let err = || std::fs::read_to_string(w.dir.join("stderr")).unwrap_or_default();
        let o = jumbo_ping(&a.0, &net.ip(2), &["-c", "3", "-w", "10"]);
        assert_ok(&format!("9000-byte ping from a to b through af_xdp ({mode})"), &o, &err());
        let j = w.stop();
        check_accounting(&j);
        for p in ["a", "b"] {
            let port = port(&j, p);
            assert!(u(port, "rx_packets") >= 3 && u(port, "rx_bytes") >= 3 * 9014, "port {p} ({mode}): {j}");
            for k in ["rx_oversize", "tx_oversize", "rx_missed"] {
                assert_eq!(port[k].as_u64().unwrap_or(0), 0, "port {p} ({mode}) {k}: {j}");
            }
        }
        assert_detached(&[&a.2, &b.2]);
        if mode == "native" {
            // Pool buffers smaller than the frames: each is dropped whole and counted, none cut:
            // by RX with a UMEM per queue (rx_oversize), by the kernel when the pool is the UMEM
            // (a frame over a chunk; rx_missed).
            let small = yaml.replace("pool: {data_room: 9216}\n", "");
            for (umem, counter) in [("queue", "rx_oversize"), ("pool", "rx_missed")] {
                let small = small.replace(&format!("mode: {mode}"), &format!("mode: {mode}, umem: {umem}"));
                let w = Wasmdp::start(&format!("{name}_small_{umem}"), &small);
                let o = jumbo_ping(&a.0, &net.ip(2), &["-c", "2"]);
                assert!(!o.status.success(), "a 9014-byte frame crossed 2048-byte buffers (umem: {umem})");
                let j = w.stop();
                check_accounting(&j);
                assert!(u(port(&j, "a"), counter) >= 2 && u(port(&j, "b"), "tx_bytes") < 9014, "umem: {umem}: {j}");
            }
        }
    }
}
