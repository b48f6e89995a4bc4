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
