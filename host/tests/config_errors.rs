//! Bad configs are refused with a message that names the key, the value, what is allowed and, where
//! the parser knows it, the line.

use wasmdp::config;

fn err(yaml: &str) -> String {
    match config::parse(yaml, "cfg.yaml") {
        Ok(_) => panic!("accepted:\n{yaml}"),
        Err(e) => format!("{e:#}"),
    }
}

fn assert_has(msg: &str, parts: &[&str]) {
    for p in parts {
        assert!(msg.contains(p), "message lacks `{p}`: {msg}");
    }
}

const PORT: &str = "ports:\n  - {name: a, driver: null}\n";

#[test]
fn the_default_config_is_valid() {
    config::parse(config::DEFAULT_YAML, "config.yaml").unwrap();
}

#[test]
fn unknown_keys_name_the_key_and_line() {
    assert_has(&err(&format!("burts: 32\n{PORT}")), &["cfg.yaml", "burts", "line 1"]);
    assert_has(
        &err("ports:\n  - name: a\n    driver: null\n    enigne: io\n"),
        &["enigne", "line 4", "expected one of"],
    );
}

#[test]
fn out_of_range_values_say_what_is_allowed() {
    assert_has(&err(&format!("burst: 1000\n{PORT}")), &["1000", "1..=512", "line 1"]);
    assert_has(&err("ports:\n  - {name: a, driver: null, frame: {size: 20}}\n"), &["20", "60..=9000", "line 2"]);
}

#[test]
fn unknown_names_list_the_alternatives() {
    assert_has(&err(&format!("engine: macswapp\n{PORT}")), &["macswapp", "macswap", "5tswap", "line 1"]);
    assert_has(&err("ports:\n  - {name: a, driver: nul}\n"), &["`nul`", "null, ring", "line 2"]);
    assert_has(&err(&format!("simd: avx3\n{PORT}")), &["avx3", "auto, scalar, sse, avx2, avx512"]);
    assert_has(
        &err("ports:\n  - {name: a, driver: null, tx_offloads: [vlan]}\n"),
        &["`vlan`", "vlan_insert", "qinq_insert"],
    );
    assert_has(&err("ports:\n  - {name: a, driver: null, mac: '02:00'}\n"), &["02:00", "MAC"]);
}

#[test]
fn cross_references_are_checked() {
    assert_has(
        &err("ports:\n  - {name: a, driver: ring, ring: {peer: z}}\n"),
        &["ports[0]", "ring.peer", "`z`", "`a`"],
    );
    assert_has(
        &err("ports:\n  - {name: a, driver: null}\n  - {name: a, driver: null}\n"),
        &["ports[1].name", "unique"],
    );
    assert_has(&err(&format!("streams:\n  - {{rx: a, tx: b}}\n{PORT}")), &["streams[0].tx", "`b`"]);
    assert_has(&err(&format!("streams:\n  - {{rx: a, tx: a, tx_queue: 3}}\n{PORT}")), &["tx_queue", "3"]);
    assert_has(
        &err(&format!("streams:\n  - {{rx: a, tx: a}}\n  - {{rx: a, tx: a}}\n{PORT}")),
        &["streams[1]", "two streams"],
    );
    assert_has(
        &err("pool: {data_room: 2048}\nports:\n  - {name: a, driver: null, frame: {size: 3000}}\n"),
        &["frame.size", "data_room"],
    );
    assert_has(
        &err("ports:\n  - {name: a, driver: ring, ring: {peer: a}, tx_offloads: [macsec_insert]}\n"),
        &["macsec_insert", "ring"],
    );
    assert_has(
        &err("pool: {headroom: 4}\nports:\n  - {name: a, driver: null, tx_offloads: [qinq_insert]}\n"),
        &["headroom", "8"],
    );
    assert_has(&err("ports: []\n"), &["at least one port"]);
    assert_has(&err("ports:\n  - {name: a, driver: null, engine: icmpecho}\n"), &["ports[0]", "icmpecho", "ipv4"]);
    assert_has(
        &err("ports:\n  - {name: a, driver: null, engine: icmpecho, icmpecho: {ipv4: [10.0.0.1], others: txonly}}\n"),
        &["icmpecho.others", "txonly", "drop"],
    );
    assert_has(&err("ports:\n  - {name: a, driver: null, pcap: {rx: x.pcap}}\n"), &["pcap", "only for driver `pcap`"]);
}

#[test]
fn yaml_syntax_errors_carry_the_line() {
    assert_has(&err("ports:\n  - {name: a, driver: null\n"), &["cfg.yaml", "line"]);
}

#[test]
fn sizes_that_multiply_are_bounded_with_the_keys_and_the_maximum() {
    // 4 MiB x 65536 blocks = 256 GiB of AF_PACKET ring: refused before any socket exists.
    assert_has(
        &err("ports:\n  - {name: a, driver: af_packet, af_packet: {iface: lo, block_size: 4194304, block_count: 65536}}\n"),
        &["af_packet", "block_size 4194304 x block_count 65536", "256.0 GiB", "maximum is 1.0 GiB"],
    );
    assert_has(
        &err(&format!("tx_retry: {{count: 20, delay_us: 1000000}}\n{PORT}")),
        &["tx_retry", "count 20 x delay_us 1000000", "maximum is 100000 us"],
    );
    assert_has(&err(&format!("pool: {{size: 64}}\nburst: 512\n{PORT}")), &["pool.size", "512", "at least 768"]);
    assert_has(&err("ports:\n  - {name: a, driver: null, tx_first: 1000000}\n"), &["1000000", "0..=65536"]);
    // A pool bigger than the machine.
    let huge = "pool: {size: 4194304, data_room: 16384}\nports:\n  - {name: a, driver: null}\n";
    if wasmdp::config::available_memory().is_some_and(|m| m < 60 << 30) {
        assert_has(&err(huge), &["needs up to", "pool", "available"]);
    }
}

#[test]
fn cores_are_range_checked_before_anything_is_expanded() {
    assert_has(&err(&format!("lcores: [1, 1]\n{PORT}")), &["lcores", "core 1 is listed twice"]);
    assert_has(&err(&format!("lcores: [100000]\n{PORT}")), &["lcores", "out of range"]);
    assert_has(&err(&format!("lcores: [999]\n{PORT}")), &["lcores", "999"]);
}

#[test]
fn topology_queue_mismatches_are_config_errors() {
    assert_has(
        &err("ports:\n  - {name: a, driver: null, queues: 2}\n  - {name: b, driver: null}\n"),
        &["topology", "`a` has 2 queues", "`b` with 1"],
    );
}

#[test]
fn deep_nesting_is_refused_fast() {
    let t = std::time::Instant::now();
    let yaml = format!("ports: {}", "[".repeat(100_000));
    assert_has(&err(&yaml), &["nested", "maximum is 32"]);
    assert!(t.elapsed() < std::time::Duration::from_secs(1), "took {:?}", t.elapsed());
}

#[test]
fn files_that_are_not_configs_are_refused_without_reading_them() {
    let e = format!("{:#}", config::load(std::path::Path::new("/dev/zero")).unwrap_err());
    assert_has(&e, &["/dev/zero", "character device, not a regular file"]);
    let big = std::env::temp_dir().join(format!("wasmdp-big-{}.yaml", std::process::id()));
    std::fs::File::create(&big).unwrap().set_len(2 << 20).unwrap();
    let e = format!("{:#}", config::load(&big).unwrap_err());
    std::fs::remove_file(&big).unwrap();
    assert_has(&e, &["2097152 bytes", "limit is 1048576"]);
}

#[test]
fn callers_can_tell_a_missing_file_from_a_wrong_one() {
    use wasmdp::config::ConfigError;
    let missing = config::load(std::path::Path::new("/nonexistent/cfg.yaml")).unwrap_err();
    assert!(matches!(&missing, ConfigError::Read { source, .. } if source.is_not_found()), "{missing:?}");
    assert!(matches!(config::parse("burts: 1\nports: []\n", "x"), Err(ConfigError::Syntax { .. })));
    assert!(matches!(config::parse("ports: []\n", "x"), Err(ConfigError::Invalid { .. })));
}

#[test]
fn tunnel_engines_need_the_section_of_the_port_they_read() {
    let two =
        |a: &str, b: &str| format!("ports:\n  - {{name: a, driver: null{a}}}\n  - {{name: b, driver: null{b}}}\n");
    // A decapsulation reads the port it receives on.
    assert_has(
        &err(&format!("engine: vxlan_decap\n{}", two("", ", vxlan: {local_ip: 192.0.2.1}"))),
        &["ports[0] (`a`).vxlan", "vxlan_decap", "a -> b", "`vxlan:` section of the port it receives on"],
    );
    // An encapsulation reads the port it transmits on, and needs the far end and the VNI there.
    let t = ", geneve: {local_ip: 192.0.2.1, vni: 7}";
    assert_has(
        &err(&format!("engine: geneve_encap\n{}", two(t, t))),
        &["ports[1] (`b`).geneve", "geneve_encap", "`remote_ip`"],
    );
    assert_has(
        &err(&format!("engine: vxlan_encap\n{}", two("", ", vxlan: {local_ip: 192.0.2.1, remote_ip: 192.0.2.2}"))),
        &["ports[1] (`b`).vxlan", "`vni`"],
    );
    // Decapsulating without a VNI accepts any: valid.
    config::parse(
        &format!("engine: vxlan_decap\n{}", two(", vxlan: {local_ip: 10.0.0.1}", ", vxlan: {local_ip: 10.0.0.2}")),
        "ok",
    )
    .unwrap();
}

#[test]
fn tunnel_values_are_checked_with_what_is_allowed() {
    let port = |t: &str| format!("ports:\n  - {{name: a, driver: null, {t}}}\n");
    assert_has(
        &err(&port("vxlan: {local_ip: 192.0.2.1, remote_ip: '2001:db8::2'}")),
        &["ports[0] (`a`).vxlan.remote_ip", "different families"],
    );
    assert_has(&err(&port("vxlan: {local_ip: 192.0.2.1, vni: 16777216}")), &["16777216", "0..=16777215", "line 2"]);
    assert_has(&err(&port("vxlan: {local_ip: 0.0.0.0}")), &["local_ip", "not a unicast address"]);
    assert_has(
        &err(&port("vxlan: {local_ip: 192.0.2.1, dst_port: 0}")),
        &["ports[0].vxlan", "invalid value 0", "1..=65535", "line 2"],
    );
    assert_has(&err(&port("tunnel_others: forward")), &["forward", "drop", "pass"]);
    assert_has(&err(&port("frame: {tunnel: gre}")), &["`gre`", "vxlan, geneve"]);
    assert_has(&err(&port("frame: {tunnel: vxlan}")), &["frame.tunnel", "`vxlan:` section"]);
    assert_has(
        &err(&port("frame: {tunnel: vxlan}, vxlan: {local_ip: 192.0.2.1, vni: 1}")),
        &["frame.tunnel needs `remote_ip`"],
    );
    assert_has(
        &err(&port("frame: {size: 2000, tunnel: vxlan}, vxlan: {local_ip: 192.0.2.1, remote_ip: 192.0.2.2, vni: 1}")),
        &["frame.size", "50 bytes of outer headers", "pool.data_room 2048"],
    );
}

#[test]
fn encapsulation_needs_the_headroom_for_its_headers() {
    let t = ", vxlan: {local_ip: '2001:db8::1', remote_ip: '2001:db8::2', vni: 5}";
    let yaml = format!("engine: vxlan_encap\npool: {{headroom: 64}}\nports:\n  - {{name: a, driver: null{t}}}\n");
    assert_has(&err(&yaml), &["pool.headroom", "64", "70 bytes", "`a`", "at least 70"]);
    let tagged = yaml.replace("headroom: 64", "headroom: 72").replace("null,", "null, tx_offloads: [vlan_insert],");
    assert_has(&err(&tagged), &["pool.headroom", "74 bytes", "tags"]);
}

#[test]
fn control_and_metrics_keys_are_checked() {
    assert_has(&err(&format!("metrics: {{listen: 'nowhere:x'}}\n{PORT}")), &["metrics", "listen", "line 1"]);
    assert_has(&err(&format!("control: {{sockett: /tmp/x}}\n{PORT}")), &["sockett", "line 1"]);
    let off = config::parse(&format!("control: {{socket: null}}\n{PORT}"), "cfg.yaml").unwrap();
    assert_eq!(off.control.socket, None);
}

#[test]
fn af_xdp_keys_are_checked_before_any_socket_exists() {
    let port = |opts: &str| format!("ports:\n  - {{name: a, driver: af_xdp, af_xdp: {{iface: veth0{opts}}}}}\n");
    config::parse(&port(", mode: native, zero_copy: off, frame_size: 4096, ring_size: 512"), "cfg.yaml").unwrap();
    assert_has(&err(&port(", frame_size: 3000")), &["af_xdp.frame_size", "3000", "2048 or 4096"]);
    assert_has(&err(&port(", frame_size: 8192")), &["8192", "2048..=4096"]);
    assert_has(&err(&port(", ring_size: 100")), &["af_xdp.ring_size", "100", "power of two"]);
    assert_has(&err(&port(", ring_size: 32768")), &["32768", "64..=16384"]);
    assert_has(&err(&port(", mode: turbo")), &["turbo", "auto", "native", "generic"]);
    assert_has(&err(&port(", zero_copy: maybe")), &["maybe", "auto", "on", "off"]);
    assert_has(&err(&port(", mode: generic, zero_copy: on")), &["af_xdp.zero_copy", "generic XDP always copies"]);
    assert_has(
        &err("ports:\n  - {name: a, driver: af_xdp, queues: 2, af_xdp: {iface: veth0, queue_start: 4095}}\n"),
        &["af_xdp.queue_start", "4095 + queues 2", "past queue 4095"],
    );
    assert_has(
        &err("ports:\n  - {name: a, driver: af_xdp, af_xdp: {iface: 'a/b'}}\n"),
        &["af_xdp.iface", "invalid interface name"],
    );
    assert_has(&err("ports:\n  - {name: a, driver: af_xdp}\n"), &["af_xdp: missing", "af_xdp: {iface: NAME}"]);
    assert_has(
        &err("ports:\n  - {name: a, driver: af_packet, af_packet: {iface: lo}, af_xdp: {iface: lo}}\n"),
        &["af_xdp: only for driver `af_xdp`"],
    );
    // 64 queues x 16384 x 2 frames of 4096 B = 8 GiB of UMEM: held against the machine's memory.
    let big = "ports:\n  - {name: a, driver: af_xdp, queues: 64, af_xdp: {iface: veth0, frame_size: 4096, ring_size: 16384}}\n";
    if let Err(e) = config::parse(big, "cfg.yaml") {
        assert_has(&format!("{e:#}"), &["af_packet/af_xdp rings", "af_xdp.ring_size"]);
    }
}

#[test]
fn more_ports_than_a_plugin_context_describes_are_refused() {
    let ports = |n: usize| {
        let list: String = (0..n).map(|i| format!("  - {{name: p{i}, driver: null}}\n")).collect();
        format!("ports:\n{list}")
    };
    config::parse(&ports(config::MAX_PORTS), "cfg.yaml").unwrap();
    assert_has(&err(&ports(config::MAX_PORTS + 1)), &["ports", "257 ports given", "at most 256"]);
}

#[test]
fn initial_map_entries_name_a_map_of_the_port_and_a_file() {
    let policy = |p: &str| err(&format!("ports:\n  - {{name: a, driver: null, policy: {{plugin: x.wasm, {p}}}}}\n"));
    assert_has(&policy("map_entries: {'bad name': r.txt}"), &["map_entries", "\"bad name\"", "[A-Za-z0-9_.-]"]);
    assert_has(
        &policy("shared_maps: [routes], map_entries: {routes: r.txt}"),
        &["ports[0] (`a`).policy.map_entries", "\"routes\"", "also in shared_maps"],
    );
    assert_has(&policy("map_entries: [r.txt]"), &["map_entries", "map"]);
}

#[test]
fn a_map_starts_from_its_entries_file_or_its_pin_file_not_both() {
    let yaml = "ports:\n  - {name: a, driver: null, policy: {plugin: x.wasm, map_entries: {m: a.txt}, map_pins: {m: m.pin}}}\n";
    assert_has(&err(yaml), &["policy.map_pins", "\"m\"", "also in map_entries"]);
    let yaml =
        "ports:\n  - {name: a, driver: null, policy: {plugin: x.wasm, shared_maps: [m], map_pins: {m: m.pin}}}\n";
    assert_has(&err(yaml), &["policy.map_pins", "also in shared_maps"]);
}
