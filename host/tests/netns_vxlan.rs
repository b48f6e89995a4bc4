//! Interoperability with the Linux kernel's own VXLAN: a namespace `u` holds a kernel VXLAN device
//! (`ip link add ... type vxlan`) whose underlay veth is wasmdp's port `under`; a namespace `h` is a
//! plain host on wasmdp's port `lan`. wasmdp encapsulates what `h` sends (`vxlan_encap`, towards the
//! kernel's end) and decapsulates what the kernel sends back (`vxlan_decap`): `h` pings the kernel's
//! VXLAN address across the tunnel, over an IPv4 and over an IPv6 underlay, with af_packet ports and
//! with af_xdp ports (the packet pool as the UMEM: the outer headers go into the headroom of the
//! buffer the kernel received the frame in). Root only; cleaned up.
#![cfg(target_os = "linux")]

mod common;

use common::netns::*;

/// MAC wasmdp's `under` port uses, and the kernel's underlay veth (set, so both ends know them).
const UNDER_MAC: &str = "02:00:00:00:77:03";
const KERNEL_MAC: &str = "02:00:00:00:77:02";

/// A port's driver section for `driver` on interface `iface`.
fn driver(driver: &str, iface: &str) -> String {
    match driver {
        "af_xdp" => format!("driver: af_xdp, af_xdp: {{iface: {iface}, mode: native}}"),
        _ => format!("driver: af_packet, af_packet: {{iface: {iface}}}"),
    }
}

fn tunnel(v6: bool, drv: &str) {
    let name = format!("vxlan interop over IPv{} on {drv}", if v6 { 6 } else { 4 });
    let mut net = Net::new();
    let s = net.subnet;
    // Underlay: the kernel's end .2, wasmdp's .3; overlay: the host .1, the kernel's VXLAN device .2.
    let (kernel_ip, wasmdp_ip, plen) = if v6 {
        (format!("2001:db8:77:{s}::2"), format!("2001:db8:77:{s}::3"), 64)
    } else {
        (net.ip(2), net.ip(3), 24)
    };
    let overlay = |h: u32| format!("10.78.{s}.{h}");
    let built = setup(&name, || {
        let h = net.side_with('h', &format!("{}/24", overlay(1)))?;
        let u = net.side_with('u', &format!("{kernel_ip}/{plen}"))?;
        let ns = &u.0;
        run_ok(&["ip", "-n", ns, "link", "set", &u.1, "address", KERNEL_MAC])?;
        run_ok(&["ip", "-n", ns, "neigh", "add", &wasmdp_ip, "lladdr", UNDER_MAC, "dev", &u.1])?;
        run_ok(&[
            "ip", "-n", ns, "link", "add", "vx0", "type", "vxlan", "id", "42", "local", &kernel_ip, "remote",
            &wasmdp_ip, "dstport", "4789", "dev", &u.1,
        ])?;
        run_ok(&["ip", "-n", ns, "addr", "add", &format!("{}/24", overlay(2)), "dev", "vx0"])?;
        run_ok(&["ip", "-n", ns, "link", "set", "vx0", "up"])?;
        Ok((h, u))
    });
    let Some((h, under)) = built else { return };
    let yaml = format!(
        "topology: paired\nports:\n\
         \x20 - {{name: lan, engine: vxlan_encap, {}}}\n\
         \x20 - {{name: under, engine: vxlan_decap, mac: '{UNDER_MAC}', peer_mac: '{KERNEL_MAC}', {},\n\
         \x20     vxlan: {{vni: 42, local_ip: '{wasmdp_ip}', remote_ip: '{kernel_ip}'}}}}\n",
        driver(drv, &h.2),
        driver(drv, &under.2)
    );
    let w = Wasmdp::start(&format!("vxlan{}{drv}", if v6 { 6 } else { 4 }), &yaml);
    let o = ping(&h.0, &overlay(2));
    let err = std::fs::read_to_string(w.dir.join("stderr")).unwrap_or_default();
    assert_ok(&format!("{name}: ping from the host to the kernel's VXLAN device"), &o, &err);
    let j = w.stop();
    check_accounting(&j);
    // ARP and three echo requests each way at least; what the kernel sends that is not the tunnel
    // (IPv6 router solicitations on the underlay) is a `tunnel` drop.
    assert!(u(port(&j, "under"), "encapsulated") >= 4, "{j}");
    assert!(u(port(&j, "under"), "decapsulated") >= 4, "{j}");
    if drv == "af_xdp" {
        for p in ["lan", "under"] {
            assert_eq!(u(port(&j, p), "umem_copies"), 0, "port {p}: {j}");
        }
    }
    let stats = sh(&["ip", "-n", &under.0, "-s", "link", "show", "vx0"]);
    eprintln!("{name}: kernel vx0 {}", String::from_utf8_lossy(&stats.stdout));
}

#[test]
fn netns_kernel_vxlan_and_wasmdp_exchange_pings_over_ipv4() {
    tunnel(false, "af_packet");
}

#[test]
fn netns_kernel_vxlan_and_wasmdp_exchange_pings_over_ipv6() {
    tunnel(true, "af_packet");
}

#[test]
fn netns_kernel_vxlan_and_wasmdp_exchange_pings_over_af_xdp_ports() {
    tunnel(false, "af_xdp");
    tunnel(true, "af_xdp");
}
