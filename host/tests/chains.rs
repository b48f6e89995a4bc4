//! Policy chains: several links on one port, run in order on every burst (docs/ABI.md, "Policy
//! chains"). Byte-exact composition of every pair of verdicts, failures of a middle link under each
//! failure policy, writes and length changes seen by the next link, hostile links, the bound on the
//! number of links, and per-link counters.

mod common;

use common::{build_error, swapped, write_wat, Wire};
use std::sync::atomic::Ordering::Relaxed;

const HEAD: &str = r#"
  (import "wasmdp" "burst_area" (func $area (param i32 i32 i32) (result i32)))
  (import "wasmdp" "counter_register" (func $creg (param i32 i32) (result i32)))
  (import "wasmdp" "counter_add" (func $cadd (param i32 i64) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 900) "inits")
  (func (export "wasmdp_abi_version") (result i32) (i32.const 65537))"#;

/// A link on the burst area (32 packets, 64-byte windows at 2112, descriptors at 1088) whose
/// instances count themselves in counter `inits` (at their first burst), and whose on_burst runs `per_packet` for each packet `$i`
/// (`$w`: its window, `$d`: its descriptor), then `after`.
fn link(per_packet: &str, after: &str) -> String {
    format!(
        "(module {HEAD}
           (func (export \"wasmdp_init\") (param i32 i32) (result i32)
             (if (i32.ne (call $area (i32.const 1024) (i32.const 32) (i32.const 64)) (i32.const 0))
               (then (return (i32.const 1))))
             (i32.store (i32.const 920) (call $creg (i32.const 900) (i32.const 5)))
             (i32.const 0))
           (global $fresh (mut i32) (i32.const 1))
           (func (export \"wasmdp_on_burst\") (param i32 i32) (result i32)
             (local $i i32) (local $w i32) (local $d i32)
             (if (global.get $fresh)
               (then (drop (call $cadd (i32.load (i32.const 920)) (i64.const 1))) (global.set $fresh (i32.const 0))))
             (i32.store (i32.const 1040) (i32.const 1))
             (block $done (loop $next
               (br_if $done (i32.ge_u (local.get $i) (local.get 1)))
               (local.set $w (i32.add (i32.const 2112) (i32.mul (local.get $i) (i32.const 64))))
               (local.set $d (i32.add (i32.const 1088) (i32.mul (local.get $i) (i32.const 32))))
               {per_packet}
               (local.set $i (i32.add (local.get $i) (i32.const 1)))
               (br $next)))
             {after}
             (i32.const 0)))"
    )
}

/// What a link does to the packets it acts on.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Verdict {
    Pass,
    Drop,
    /// Sent to the stream's own TX port (a).
    SendOwn,
    /// Sent to port b.
    SendOther,
    /// The native MAC swap engine.
    Engine,
}

const VERDICTS: [Verdict; 5] = [Verdict::Pass, Verdict::Drop, Verdict::SendOwn, Verdict::SendOther, Verdict::Engine];

/// A link that gives `v` to the packets whose UDP destination port has bit `mask` set (the byte at
/// window offset 37), and passes the others.
fn verdict_link(v: Verdict, mask: u8) -> String {
    let (code, arg) = match v {
        Verdict::Pass => (0, 0),
        Verdict::Drop => (1, 0),
        Verdict::SendOwn => (2, 0),
        Verdict::SendOther => (2, 1),
        Verdict::Engine => (3, 2),
    };
    link(
        &format!(
            "(if (i32.and (i32.load8_u offset=37 (local.get $w)) (i32.const {mask}))
               (then (i32.store8 offset=16 (local.get $d) (i32.const {code}))
                     (i32.store16 offset=18 (local.get $d) (i32.const {arg}))))"
        ),
        "",
    )
}

/// A 64-byte UDP frame to port `dst_port` (its low byte at offset 37).
fn frame(dst_port: u16) -> Vec<u8> {
    common::udp(64, [10, 0, 0, 2], 1000, dst_port, None)
}

/// The chain's YAML on port a, links given as (name, module file, extra keys).
fn chain(links: &[(&str, &std::path::Path, &str)]) -> String {
    let items: Vec<String> = links
        .iter()
        .map(|(name, p, extra)| {
            format!("{{name: {name}, plugin: {}, limits: {{deadline_us: 500000}}{extra}}}", p.display())
        })
        .collect();
    format!("policy: [{}]", items.join(", "))
}

/// What a packet becomes after link verdict `v` acted on it: `None` when it left the chain.
fn apply(v: Verdict, f: Vec<u8>) -> Option<Vec<u8>> {
    match v {
        Verdict::Pass | Verdict::SendOwn => Some(f),
        Verdict::Drop | Verdict::SendOther => None,
        Verdict::Engine => Some(swapped(&f)),
    }
}

#[test]
fn every_pair_of_verdicts_composes_byte_for_byte() {
    // Frames 0..4: bit 1 of the destination port makes the first link act, bit 2 the second.
    let frames: Vec<Vec<u8>> = (0..8u16).map(frame).collect();
    for v1 in VERDICTS {
        for v2 in VERDICTS {
            let (p1, p2) = (
                write_wat(&format!("chain-{v1:?}-1"), &verdict_link(v1, 1)),
                write_wat(&format!("chain-{v2:?}-2"), &verdict_link(v2, 2)),
            );
            let mut w = Wire::with_sends(&chain(&[("one", &p1, ""), ("two", &p2, "")]), true);
            let got = w.send(&frames);
            let (mut want, mut drops, mut sent) = (Vec::new(), [0u64; 2], 0);
            for (t, f) in frames.iter().enumerate() {
                let mut f = Some(f.clone());
                for (k, (v, bit)) in [(v1, 1), (v2, 2)].into_iter().enumerate() {
                    let Some(g) = f.take() else { break };
                    f = if t & bit != 0 { apply(v, g) } else { Some(g) };
                    if f.is_none() {
                        match v {
                            Verdict::Drop => drops[k] += 1,
                            _ => sent += 1,
                        }
                    }
                }
                want.extend(f);
            }
            assert_eq!(got, want, "{v1:?} then {v2:?}");
            let c = w.counts();
            assert_eq!((c.drops.policy, c.redirected_out), (drops[0] + drops[1], sent), "{v1:?} then {v2:?}: {c:?}");
            for (k, d) in drops.iter().enumerate() {
                assert_eq!(w.link(k).drops.load(Relaxed), *d, "{v1:?} then {v2:?}: link {k}'s drops");
            }
            // The second link is called only when the first left it packets (every case here).
            assert_eq!((w.link(0).calls.load(Relaxed), w.link(1).calls.load(Relaxed)), (1, 1), "{v1:?} then {v2:?}");
        }
    }
}

/// A link that adds 1 to payload byte 50 of every packet and marks it dirty (51 bytes back).
fn increment_link() -> String {
    link(
        "(i32.store8 offset=50 (local.get $w) (i32.add (i32.load8_u offset=50 (local.get $w)) (i32.const 1)))
         (i32.store16 offset=24 (local.get $d) (i32.const 51))",
        "",
    )
}

#[test]
fn sixteen_links_each_see_the_writes_of_those_before_and_a_seventeenth_is_refused() {
    let p = write_wat("chain-increment", &increment_link());
    let names: Vec<String> = (0..16).map(|k| format!("l{k}")).collect();
    let links: Vec<(&str, &std::path::Path, &str)> = names.iter().map(|n| (n.as_str(), p.as_path(), "")).collect();
    let mut w = Wire::new(&chain(&links));
    let frames: Vec<Vec<u8>> = (0..4u16).map(frame).collect();
    let want: Vec<Vec<u8>> = frames
        .iter()
        .map(|f| {
            let mut g = f.clone();
            g[50] = g[50].wrapping_add(16);
            g
        })
        .collect();
    assert_eq!(w.send(&frames), want);
    for k in 0..16 {
        assert_eq!(w.link(k).calls.load(Relaxed), 1, "link {k}");
    }
    let names: Vec<String> = (0..17).map(|k| format!("l{k}")).collect();
    let links: Vec<(&str, &std::path::Path, &str)> = names.iter().map(|n| (n.as_str(), p.as_path(), "")).collect();
    let e = build_error(&format!("ports:\n  - {{name: a, driver: null, {}}}\n", chain(&links)));
    assert!(e.contains("more than 16 links in the policy chain; the limit is 16"), "{e}");
}

#[test]
fn link_names_are_checked_and_a_single_policy_is_a_chain_of_one() {
    let p = write_wat("chain-names", &increment_link());
    let e =
        build_error(&format!("ports:\n  - {{name: a, driver: null, {}}}\n", chain(&[("x", &p, ""), ("x", &p, "")])));
    assert!(e.contains("ports[0] (`a`).policy[1]: link name \"x\" is also link 0's"), "{e}");
    let e = build_error(&format!("ports:\n  - {{name: a, driver: null, {}}}\n", chain(&[("bad/name", &p, "")])));
    assert!(e.contains("policy[0].name: \"bad/name\" is not a link name"), "{e}");
    // Without names, the files' stems; two links of one file need names.
    let e = build_error(&format!(
        "ports:\n  - {{name: a, driver: null, policy: [{{plugin: {0}}}, {{plugin: {0}}}]}}\n",
        p.display()
    ));
    assert!(e.contains("link name \"chain-names\" is also link 0's"), "{e}");
    let e = build_error("ports:\n  - {name: a, driver: null, policy: []}\n");
    assert!(e.contains("an empty policy chain"), "{e}");
    // A mapping is one link, named after its file.
    let mut w = Wire::new(&format!("policy: {{plugin: {}}}", p.display()));
    let f = frame(1);
    let mut g = f.clone();
    g[50] += 1;
    assert_eq!(w.send(&[f]), [g]);
}

#[test]
fn the_first_link_of_a_port_that_makes_packets_is_called_with_its_empty_burst() {
    // txonly receives nothing: the burst is empty when the chain starts. The first link is called
    // with it and answers an error, so the port's engine (txonly) stands in and makes the frames;
    // the second link is called on them.
    let refuse = write_wat("chain-first-errs", &link("", "(return (i32.const 7))"));
    let inc = write_wat("chain-after-txonly", &increment_link());
    let yaml = format!(
        "engine: txonly\nports:\n  - {{name: a, driver: null, policy: [{{name: first, plugin: {}}}, {{name: inc, plugin: {}}}]}}\n  - {{name: b, driver: null}}\n",
        refuse.display(),
        inc.display()
    );
    let j = common::run_yaml(&yaml, 0.2);
    let links = j["ports"][0]["plugin_links"].as_array().unwrap();
    assert!(j["totals"]["tx_packets"].as_u64().unwrap() > 0, "{}", j["totals"]);
    assert!(links[0]["errors"].as_u64().unwrap() > 0 && links[1]["calls"].as_u64().unwrap() > 0, "{links:?}");
}

#[test]
fn a_link_writes_and_changes_lengths_the_next_one_sees() {
    // The first link strips the Ethernet header (head -14); the second writes the length it is
    // given (descriptor LEN) into the first byte of its window, marked dirty.
    let strip = write_wat("chain-strip", &link("(i32.store16 offset=20 (local.get $d) (i32.const -14))", ""));
    let report = write_wat(
        "chain-report",
        &link(
            "(i32.store8 (local.get $w) (i32.load (local.get $d)))
             (i32.store16 offset=24 (local.get $d) (i32.const 1))",
            "",
        ),
    );
    let mut w = Wire::new(&chain(&[("strip", &strip, ""), ("report", &report, "")]));
    let f = frame(9);
    let mut want = f[14..].to_vec();
    want[0] = 50;
    assert_eq!(w.send(&[f]), [want]);
}

#[test]
fn a_failing_middle_link_follows_its_own_failure_policy() {
    let swap = write_wat("chain-swap", &verdict_link(Verdict::Engine, 0xFF));
    // Writes into the window of every packet, marks it, then traps: nothing of its call applies.
    let trap = write_wat(
        "chain-trap",
        &link(
            "(i32.store8 (local.get $w) (i32.const 0xEE)) (i32.store16 offset=24 (local.get $d) (i32.const 1))",
            "unreachable",
        ),
    );
    let drop_odd = write_wat("chain-drop-odd", &verdict_link(Verdict::Drop, 1));
    let frames: Vec<Vec<u8>> = (1..7u16).map(frame).collect();
    for policy in ["fail_open", "reload", "fail_closed"] {
        let mut w = Wire::new(&chain(&[
            ("swap", &swap, ""),
            ("broken", &trap, &format!(", on_failure: {policy}")),
            ("acl", &drop_odd, ""),
        ]));
        let got = w.send(&frames);
        let c = w.counts();
        let (broken, acl) = (w.link(1), w.link(2));
        assert_eq!(broken.traps.load(Relaxed), 1, "{policy}");
        if policy == "fail_closed" {
            // Dropped where it broke; the ACL after it never runs on that burst.
            assert!(got.is_empty(), "{policy}");
            assert_eq!((c.drops.plugin, broken.drops.load(Relaxed)), (6, 6), "{policy}: {c:?}");
            assert_eq!(acl.calls.load(Relaxed), 0, "{policy}");
        } else {
            // The port's engine (io) stands in for the broken link: the swap stays, its 0xEE does
            // not come through, and the ACL after it still drops.
            let want: Vec<Vec<u8>> = frames.iter().filter(|f| f[37] & 1 == 0).map(|f| swapped(f)).collect();
            assert_eq!(got, want, "{policy}");
            assert_eq!((c.drops.policy, acl.drops.load(Relaxed), broken.drops.load(Relaxed)), (3, 3, 0), "{policy}");
        }
        assert_eq!(w.link(0).calls.load(Relaxed), 1, "{policy}");
    }
}

#[test]
fn a_link_cannot_reach_past_what_the_link_before_left() {
    // The first link trims every packet to 20 bytes; the second asks to trim 30 more and to strip 40
    // from the front, and writes 64 dirty bytes: each packet it oversteps is dropped as `headroom`,
    // counted, and nothing is read or written past what the packet holds.
    let trim = write_wat("chain-trim", &link("(i32.store16 offset=22 (local.get $d) (i32.const -44))", ""));
    let greedy = write_wat(
        "chain-greedy",
        &link(
            "(if (i32.and (local.get $i) (i32.const 1))
               (then (i32.store16 offset=22 (local.get $d) (i32.const -30)))
               (else (i32.store16 offset=20 (local.get $d) (i32.const -40))))",
            "",
        ),
    );
    let frames: Vec<Vec<u8>> = (0..4u16).map(frame).collect();
    let mut w = Wire::new(&chain(&[("trim", &trim, ""), ("greedy", &greedy, "")]));
    assert!(w.send(&frames).is_empty());
    let c = w.counts();
    assert_eq!((c.drops.headroom, c.drops.total(), w.link(1).drops.load(Relaxed)), (4, 4, 4), "{c:?}");
    // And a window marked dirty past a 20-byte packet's end is refused whole (BAD_RANGE is for
    // `dirty` past the window; within it, only the packet's bytes go back).
    let scribble = write_wat(
        "chain-scribble",
        &link("(memory.fill (local.get $w) (i32.const 0xAB) (i32.const 64)) (i32.store16 offset=24 (local.get $d) (i32.const 64))", ""),
    );
    let mut w = Wire::new(&chain(&[("trim", &trim, ""), ("scribble", &scribble, "")]));
    let got = w.send(&frames);
    assert_eq!(got, vec![vec![0xAB; 20]; 4], "20 bytes each, all of them the link's");
}

mod live {
    use super::*;
    use common::live::{bytes_per_packet, save, wait_for};
    use common::plugin_path;
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;
    use wasmdp::dataplane::{self, Overrides, RunOptions};
    use wasmdp::stats::StatsView;

    /// Port a's chain as (link, calls, inits counter) in order.
    fn links(view: &StatsView) -> Vec<(String, u64, u64)> {
        let t = view.plugins_per_port()[0].clone().unwrap();
        t.links.iter().map(|(n, l)| (n.clone(), l.calls, l.counters.get("inits").copied().unwrap_or(0))).collect()
    }

    #[test]
    fn links_are_edited_reordered_added_and_removed_live_each_alone_without_loss() {
        let dir = std::env::temp_dir().join(format!("wasmdp-chain-live-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("config.yaml");
        let pass = write_wat("chain-live-pass", &link("", ""));
        let inc = write_wat("chain-live-inc", &increment_link());
        let tagger = |mode: &str| {
            format!(
                "{{name: tag, plugin: {}, params: {{mode: {mode}, vlan: 10, vlan_outer: 20}}, limits: {{deadline_us: 500000}}}}",
                plugin_path("vlan_tagger").display()
            )
        };
        let pass_link =
            |name: &str| format!("{{name: {name}, plugin: {}, limits: {{deadline_us: 500000}}}}", pass.display());
        let cfg = |links: &[String]| {
            format!(
                "burst: 32\nports:\n  - name: a\n    driver: null\n    policy: [{}]\n  - {{name: b, driver: null}}\n",
                links.join(", ")
            )
        };
        save(&path, &cfg(&[pass_link("first"), tagger("vlan"), pass_link("last")]));
        let dp = dataplane::build(&wasmdp::config::load(&path).unwrap(), &Overrides::default()).unwrap();
        let opts = RunOptions { watch: Some(path.clone()), ..RunOptions::default() };
        let running = dataplane::start(dp, &opts, Arc::new(AtomicBool::new(false))).unwrap();
        let (r, view) = (running.reloads.clone(), running.view.clone());
        assert_eq!(bytes_per_packet(&view), 68.0);
        let names = |v: &StatsView| links(v).into_iter().map(|l| l.0).collect::<Vec<_>>();
        let inits = |v: &StatsView, n: &str| links(v).into_iter().find(|l| l.0 == n).map(|l| l.2);
        assert_eq!(names(&view), ["first", "tag", "last"]);
        let reload = |text: String, what: &str| {
            let (before, rejected) = (r.applied.load(Relaxed), r.rejected.load(Relaxed));
            save(&path, &text);
            wait_for(what, || r.applied.load(Relaxed) > before);
            assert_eq!(r.rejected.load(Relaxed), rejected, "{what}: {}", r.last_error.lock().unwrap());
        };
        // Edit the middle link: it alone is made anew; the others keep their instances.
        let calls_first = links(&view)[0].1;
        reload(cfg(&[pass_link("first"), tagger("qinq"), pass_link("last")]), "edit");
        assert_eq!(bytes_per_packet(&view), 72.0, "the edited link runs");
        assert_eq!((inits(&view, "first"), inits(&view, "last")), (Some(1), Some(1)), "kept, not re-made");
        assert!(links(&view)[0].1 > calls_first, "first's counters go on");
        // A chain that cannot load (a link's file is missing) is refused whole: the running chain
        // and its counters stay as they were, no link of the refused one shows.
        let rejected = r.rejected.load(Relaxed);
        save(
            &path,
            &cfg(&[
                pass_link("first"),
                tagger("qinq"),
                format!("{{name: ghost, plugin: {}}}", dir.join("nope.wasm").display()),
            ]),
        );
        wait_for("the refusal", || r.rejected.load(Relaxed) > rejected);
        assert!(r.last_error.lock().unwrap().contains("link `ghost`"), "{}", r.last_error.lock().unwrap());
        assert_eq!(names(&view), ["first", "tag", "last"]);
        // One whose new link refuses its init: its instances were being made, then dropped.
        let rejected = r.rejected.load(Relaxed);
        let refuse = common::plugin_path("faulty_refuse");
        save(
            &path,
            &cfg(&[pass_link("first"), tagger("qinq"), format!("{{name: ghost, plugin: {}}}", refuse.display())]),
        );
        wait_for("the second refusal", || r.rejected.load(Relaxed) > rejected);
        assert_eq!(names(&view), ["first", "tag", "last"], "no counters of the refused link are left");
        assert_eq!(bytes_per_packet(&view), 72.0, "the running chain goes on");
        // Reorder, add, remove: live, the kept links never re-made.
        reload(cfg(&[pass_link("last"), tagger("qinq"), pass_link("first")]), "reorder");
        assert_eq!(names(&view), ["last", "tag", "first"]);
        reload(
            cfg(&[
                pass_link("last"),
                tagger("qinq"),
                pass_link("first"),
                format!("{{name: inc, plugin: {}}}", inc.display()),
            ]),
            "add",
        );
        wait_for("the added link's calls", || links(&view).iter().any(|l| l.0 == "inc" && l.1 > 0));
        reload(cfg(&[tagger("qinq"), format!("{{name: inc, plugin: {}}}", inc.display())]), "remove");
        assert_eq!(names(&view), ["tag", "inc"]);
        assert_eq!(bytes_per_packet(&view), 72.0);
        assert_eq!(inits(&view, "inc"), Some(1));
        reload(cfg(&[]).replace("policy: []", "engine: io"), "no policy");
        let report = running.finish(&opts).unwrap();
        assert_eq!(report.leaked, 0);
        let j = &report.json;
        let t = &j["totals"];
        assert_eq!(t["dropped"], 0, "nothing lost across five switches: {t}");
        for s in j["streams"].as_array().unwrap() {
            let u = |k: &str| s[k].as_u64().unwrap();
            assert_eq!(u("rx_packets") + u("generated"), u("tx_packets") + u("dropped") + u("redirected_out"), "{s}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

/// `examples/chain`: acl -> ratelimit -> l4_lb on a replayed capture.
mod example {
    use super::*;
    use common::{pcap_packets, plugin_path};
    use std::collections::BTreeMap;
    use std::path::{Path, PathBuf};

    /// The example's config with its files in `dir`, replayed once as fast as possible (or as the
    /// example says, with `live`), and the ratelimit link's params `rl`.
    fn config(dir: &Path, live: bool, rl: &str) -> String {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let text = std::fs::read_to_string(root.join("examples/chain/config.yaml")).unwrap();
        let plugins = plugin_path("acl").parent().unwrap().display().to_string() + "/";
        let text = text
            .replace("../../plugins/target/wasm32-unknown-unknown/release/", &plugins)
            .replace("traffic.pcap", &dir.join("traffic.pcap").display().to_string())
            .replace("tx: b1.pcap", &format!("tx: {}", dir.join("b1.pcap").display()))
            .replace("tx: b2.pcap", &format!("tx: {}", dir.join("b2.pcap").display()))
            .replace("{rate_pps: 1000, burst: 100}", rl);
        assert!(text.contains(rl), "the example's rl params moved: update this test");
        if live {
            text
        } else {
            text.replace("repeat: forever, rate_pps: 20000", "repeat: 1")
        }
    }

    fn traffic(dir: &Path) -> Vec<Vec<u8>> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let pcap = dir.join("traffic.pcap");
        let ok = std::process::Command::new("python3")
            .arg(root.join("examples/chain/make-traffic.py"))
            .arg(&pcap)
            .status()
            .expect("python3 runs the example's traffic generator");
        assert!(ok.success());
        pcap_packets(&pcap)
    }

    fn temp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("wasmdp-chain-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn the_example_chain_filters_limits_and_balances_byte_for_byte() {
        let dir = temp("example");
        let input = traffic(&dir);
        // At most 40 packets a source (1 a second: none more during the replay).
        let j = common::run_yaml(&config(&dir, false, "{rate_pps: 1, burst: 40}"), 1.0);
        let (b1, b2) = (pcap_packets(&dir.join("b1.pcap")), pcap_packets(&dir.join("b2.pcap")));
        // What must come out: no DNS (the ACL), each source's first 40 others (the limiter).
        let mut left: BTreeMap<u8, usize> = BTreeMap::new();
        let want: Vec<&Vec<u8>> = input
            .iter()
            .filter(|f| u16::from_be_bytes([f[36], f[37]]) != 53)
            .filter(|f| {
                let n = left.entry(f[29]).or_insert(0);
                *n += 1;
                *n <= 40
            })
            .collect();
        assert_eq!(want.len(), 16 * 40);
        // The balancer keeps each source's flow on one backend, in order; together they are what
        // passed, byte for byte.
        let on = |f: &Vec<u8>| (b1.contains(f), b2.contains(f));
        for f in &want {
            assert!(matches!(on(f), (true, false) | (false, true)), "each passed packet on one backend");
        }
        for side in [&b1, &b2] {
            let expect: Vec<&Vec<u8>> = want.iter().copied().filter(|f| side.contains(f)).collect();
            assert_eq!(side.iter().collect::<Vec<_>>(), expect, "a backend's packets, in order");
        }
        assert_eq!(b1.len() + b2.len(), want.len());
        assert!(!b1.is_empty() && !b2.is_empty(), "both backends used");
        let p = &j["ports"][0];
        let links = p["plugin_links"].as_array().unwrap();
        let drops: Vec<u64> = links.iter().map(|l| l["drops"].as_u64().unwrap()).collect();
        assert_eq!(drops, [128, (1024 - 640) as u64, 0], "dropped by the ACL, then the limiter: {p}");
        assert_eq!(j["totals"]["dropped_by_reason"]["policy"], 128 + 384, "{}", j["totals"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_middle_link_is_swapped_under_traffic_alone_and_nothing_is_lost() {
        use std::sync::atomic::AtomicBool;
        use std::sync::Arc;
        use std::time::{Duration, Instant};
        use wasmdp::dataplane::{self, Overrides, RunOptions};
        let dir = temp("example-live");
        traffic(&dir);
        let path = dir.join("config.yaml");
        std::fs::write(&path, config(&dir, true, "{rate_pps: 1000000, burst: 100000}")).unwrap();
        let dp = dataplane::build(&wasmdp::config::load(&path).unwrap(), &Overrides::default()).unwrap();
        let opts = RunOptions { watch: Some(path.clone()), ..RunOptions::default() };
        let running = dataplane::start(dp, &opts, Arc::new(AtomicBool::new(false))).unwrap();
        let (r, view) = (running.reloads.clone(), running.view.clone());
        let link = |n: usize| view.plugins_per_port()[0].clone().unwrap().links[n].1.clone();
        let until = Instant::now() + Duration::from_secs(10);
        while link(2).calls < 20 {
            assert!(Instant::now() < until, "no traffic through the chain");
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(link(1).drops, 0, "the limiter lets everything through at first");
        // The limiter now holds each source to 5 packets a second: only it is reloaded.
        let (acl, lb) = (link(0).calls, link(2).calls);
        common::live::save(&path, &config(&dir, true, "{rate_pps: 5, burst: 5}"));
        while r.applied.load(Relaxed) == 0 {
            assert!(Instant::now() < until, "the reload never came: {}", r.last_error.lock().unwrap());
            std::thread::sleep(Duration::from_millis(5));
        }
        while link(1).drops == 0 {
            assert!(Instant::now() < until, "the new limiter never dropped");
            std::thread::sleep(Duration::from_millis(5));
        }
        let (a, l) = (link(0), link(2));
        assert!(a.calls > acl && l.calls > lb, "the ACL's and the balancer's counters went on");
        let report = running.finish(&opts).unwrap();
        assert_eq!(report.leaked, 0);
        let t = &report.json["totals"];
        let reasons = t["dropped_by_reason"].as_object().unwrap();
        for (k, v) in reasons {
            assert!(k == "policy" || v == 0, "only policy drops across the swap: {t}");
        }
        for s in report.json["streams"].as_array().unwrap() {
            let u = |k: &str| s[k].as_u64().unwrap();
            assert_eq!(
                u("rx_packets") + u("redirected_in"),
                u("tx_packets") + u("dropped") + u("redirected_out"),
                "{s}"
            );
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
