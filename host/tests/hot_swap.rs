//! Live reloads under continuous traffic: 100 edits of the config file, alternating between two
//! policies and between valid and invalid files. Every valid one is applied (and its effect shows on
//! the frames sent), every invalid one rejected (and the previous effect stays), no packet is lost
//! without a counted reason, and every buffer comes back.

mod common;

use common::live::{bytes_per_packet, save, wait_for};
use common::plugin_path;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};
use wasmdp::dataplane::{self, Overrides, RunOptions};
use wasmdp::stats::StatsView;

/// Two null ports (a -> b carries the policy's frames) and a ring pair looping seeded packets, whose
/// native engine changes with the policy.
fn config(policy: &str, ring_engine: &str, extra: &str) -> String {
    format!(
        "burst: 32\n{extra}ports:\n  - name: a\n    driver: null\n    policy: {policy}\n  - {{name: b, driver: null}}\n  - {{name: r0, driver: ring, ring: {{peer: r1}}, tx_first: 2, engine: {ring_engine}}}\n  - {{name: r1, driver: ring, ring: {{peer: r0}}, tx_first: 2}}\n"
    )
}

fn tagger(mode: &str) -> String {
    format!(
        "{{plugin: {}, params: {{mode: {mode}, vlan: 10, vlan_outer: 20}}, limits: {{deadline_us: 500000}}}}",
        plugin_path("vlan_tagger").display()
    )
}

#[test]
fn a_hundred_reloads_under_traffic_lose_nothing() {
    let dir = std::env::temp_dir().join(format!("wasmdp-hot-swap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path: PathBuf = dir.join("config.yaml");
    let valid = [(config(&tagger("vlan"), "io", ""), 68.0), (config(&tagger("qinq"), "macswap", ""), 72.0)];
    let missing = format!("{{plugin: {}}}", dir.join("nope.wasm").display());
    let refuse = format!("{{plugin: {}}}", plugin_path("faulty_refuse").display());
    let invalid = [
        "ports: [\n".to_string(),
        config(&tagger("vlan"), "warp", ""),
        config(&missing, "io", ""),
        config(&tagger("vlan"), "io", "pool: {size: 4096}\n"),
        config(&refuse, "io", ""),
    ];
    save(&path, &valid[0].0);
    let cfg = wasmdp::config::load(&path).unwrap();
    let dp = dataplane::build(&cfg, &Overrides::default()).unwrap();
    let opts = RunOptions { watch: Some(path.clone()), ..RunOptions::default() };
    let running = dataplane::start(dp, &opts, Arc::new(AtomicBool::new(false))).unwrap();
    let r = running.reloads.clone();
    let done = |r: &wasmdp::reload::ReloadStats| r.applied.load(Relaxed) + r.rejected.load(Relaxed);
    assert_eq!(bytes_per_packet(&running.view), 68.0);
    let mut expect = 68.0;
    for i in 0..100 {
        let before = done(&r);
        if i % 2 == 0 {
            let (text, size) = &valid[(i / 2 + 1) % 2];
            save(&path, text);
            expect = *size;
        } else {
            save(&path, &invalid[(i / 2) % invalid.len()]);
        }
        wait_for(&format!("reload {i}"), || done(&r) > before);
        std::thread::sleep(Duration::from_millis(30));
        assert_eq!(
            done(&r),
            before + 1,
            "reload {i}: one file change, one reload (applied {}, rejected {})",
            r.applied.load(Relaxed),
            r.rejected.load(Relaxed)
        );
        assert_eq!(bytes_per_packet(&running.view), expect, "reload {i}: frames on the wire");
    }
    assert_eq!((r.applied.load(Relaxed), r.rejected.load(Relaxed)), (50, 50));
    assert_eq!(r.generation.load(Relaxed), 50, "every valid change switched something");
    let report = running.finish(&opts).unwrap();
    assert_eq!(report.leaked, 0);
    let j = &report.json;
    for s in j["streams"].as_array().unwrap() {
        let u = |k: &str| s[k].as_u64().unwrap();
        assert_eq!(
            u("rx_packets") + u("generated") + u("redirected_in"),
            u("tx_packets") + u("dropped") + u("redirected_out"),
            "stream {s}"
        );
    }
    let t = &j["totals"];
    assert_eq!(t["dropped"], 0, "{t}");
    assert_eq!(t["generated"].as_u64(), Some(4 * 32), "the ring seeds");
    assert_eq!(t["in_flight"].as_u64(), Some(4 * 32), "the ring seeds are still looping: none lost");
    eprintln!("reloads: {}", j["reloads"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn equal_file_counts_as_applied_without_a_switch_and_a_rebuilt_plugin_is_reloaded() {
    let dir = std::env::temp_dir().join(format!("wasmdp-hot-swap-same-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("config.yaml");
    // A private copy of the plugin, to "rebuild" it under the same path.
    let wasm = dir.join("policy.wasm");
    std::fs::copy(plugin_path("vlan_tagger"), &wasm).unwrap();
    let policy = format!("{{plugin: {}, params: {{vlan: 10}}, limits: {{deadline_us: 500000}}}}", wasm.display());
    let text = config(&policy, "io", "");
    save(&path, &text);
    let cfg = wasmdp::config::load(&path).unwrap();
    let dp = dataplane::build(&cfg, &Overrides::default()).unwrap();
    let opts = RunOptions { watch: Some(path.clone()), ..RunOptions::default() };
    let running = dataplane::start(dp, &opts, Arc::new(AtomicBool::new(false))).unwrap();
    let r = running.reloads.clone();
    save(&path, &text);
    wait_for("the equal file", || r.applied.load(Relaxed) == 1);
    assert_eq!(r.generation.load(Relaxed), 0, "nothing to swap");
    assert_eq!(bytes_per_packet(&running.view), 68.0);
    // The plugin file is replaced by another module: the port switches to it.
    std::fs::copy(plugin_path("static_policy"), dir.join("new.wasm")).unwrap();
    std::fs::rename(dir.join("new.wasm"), &wasm).unwrap();
    // Time passes after a reload that published nothing: the next reload's gap is its own, not
    // the time since then.
    std::thread::sleep(Duration::from_millis(700));
    wait_for("the rebuilt plugin", || r.generation.load(Relaxed) == 1);
    assert_eq!(bytes_per_packet(&running.view), 64.0, "static_policy (macswap, no offloads) adds no tag");
    let gap = r.last_max_gap_us.load(Relaxed);
    assert!(gap < 300_000, "the longest loop gap of the reload was {gap} us");
    // Likewise after a rejected reload.
    save(&path, "ports: [\n");
    wait_for("the rejection", || r.rejected.load(Relaxed) == 1);
    std::thread::sleep(Duration::from_millis(700));
    save(&path, &config(&policy, "macswap", ""));
    wait_for("the next reload", || r.generation.load(Relaxed) == 2);
    let gap = r.last_max_gap_us.load(Relaxed);
    assert!(gap < 300_000, "after a rejected reload, the next gap was {gap} us");
    assert!(r.max_gap_us.load(Relaxed) < 300_000);
    let report = running.finish(&opts).unwrap();
    assert_eq!(report.leaked, 0);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_reload_into_a_failing_plugin_follows_its_failure_policy_with_backoff() {
    let dir = std::env::temp_dir().join(format!("wasmdp-hot-swap-fail-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("config.yaml");
    let trap = common::write_wat(
        "trap-every-burst",
        r#"(module (memory (export "memory") 1)
             (func (export "wasmdp_abi_version") (result i32) (i32.const 65536))
             (func (export "wasmdp_init") (param i32 i32) (result i32) (i32.const 0))
             (func (export "wasmdp_on_burst") (param i32 i32) (result i32) unreachable))"#,
    );
    let good = format!("{{plugin: {}, params: {{engine: io}}}}", plugin_path("static_policy").display());
    let failing = |policy: &str| {
        format!("{{plugin: {}, on_failure: {policy}, max_failures: 100, failure_window_s: 60}}", trap.display())
    };
    save(&path, &config(&good, "io", ""));
    let cfg = wasmdp::config::load(&path).unwrap();
    let dp = dataplane::build(&cfg, &Overrides::default()).unwrap();
    let opts = RunOptions { watch: Some(path.clone()), ..RunOptions::default() };
    let running = dataplane::start(dp, &opts, Arc::new(AtomicBool::new(false))).unwrap();
    let r = running.reloads.clone();
    let a = || running.view.plugins_per_port()[0].clone().unwrap_or_default();
    // Under `reload`: a new instance at once after the first trap, then after 10, 20, 40, ... ms.
    save(&path, &config(&failing("reload"), "io", ""));
    wait_for("the failing plugin", || r.generation.load(Relaxed) == 1);
    let traps0 = a().traps;
    std::thread::sleep(Duration::from_millis(1300));
    let traps = a().traps - traps0;
    // 0 + 10 + 20 + 40 + 80 + 160 + 320 + 640 ms = 1.27 s: 8 traps, give or take the machine.
    assert!((5..=11).contains(&traps), "{traps} traps in 1.3 s under reload with backoff");
    let b = |v: &StatsView| v.per_port(&v.snapshot())[1];
    assert_eq!(b(&running.view).drops.plugin, 0, "fail over to the native engine, not to drops");
    // Under `fail_closed`: the stream drops its bursts, counted as `plugin`.
    save(&path, &config(&failing("fail_closed"), "io", ""));
    wait_for("fail_closed", || r.generation.load(Relaxed) == 2);
    let before = b(&running.view).drops.plugin;
    std::thread::sleep(Duration::from_millis(200));
    assert!(b(&running.view).drops.plugin > before + 1000, "bursts dropped as `plugin`");
    let report = running.finish(&opts).unwrap();
    assert_eq!(report.leaked, 0);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_plugin_file_replaced_by_a_device_or_a_fifo_is_refused_at_reload_without_reading_it() {
    // Once: a symlink to /dev/zero was read at reload until the OOM killer came, and a FIFO hung
    // the control thread (and every reload after it).
    let dir = common::live::fresh_dir("reload-files");
    let plugin = dir.join("policy.wasm");
    std::fs::copy(plugin_path("static_policy"), &plugin).unwrap();
    let path = dir.join("config.yaml");
    let policy = |engine: &str| {
        format!("{{plugin: {}, params: {{engine: {engine}}}, limits: {{deadline_us: 500000}}}}", plugin.display())
    };
    std::fs::write(&path, config(&policy("io"), "io", "")).unwrap();
    let cfg = wasmdp::config::load(&path).unwrap();
    let dp = dataplane::build(&cfg, &Overrides::default()).unwrap();
    let sock = dir.join("ctl.sock");
    let opts = RunOptions { watch: Some(path.clone()), control: Some(sock.clone()), ..RunOptions::default() };
    let running = dataplane::start(dp, &opts, Arc::new(AtomicBool::new(false))).unwrap();
    let reload = || {
        let t = Instant::now();
        let a = wasmdp::control::request(&sock, &serde_json::json!({"cmd": "reload"})).unwrap();
        (a["result"].clone(), t.elapsed())
    };
    let real = dir.join("real.wasm");
    std::fs::rename(&plugin, &real).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &plugin).unwrap();
    let (r, took) = reload();
    assert_eq!(r["outcome"], "rejected", "{r}");
    assert!(r["error"].as_str().unwrap().contains("is a character device"), "{r}");
    assert!(took < Duration::from_secs(3), "{took:?}");
    std::fs::remove_file(&plugin).unwrap();
    let c = std::ffi::CString::new(plugin.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let (r, took) = reload();
    assert_eq!(r["outcome"], "rejected", "{r}");
    assert!(r["error"].as_str().unwrap().contains("is a FIFO"), "{r}");
    assert!(took < Duration::from_secs(3), "{took:?}");
    // The control thread is free: the real file back, and a change, is applied.
    std::fs::remove_file(&plugin).unwrap();
    std::fs::rename(&real, &plugin).unwrap();
    save(&path, &config(&policy("macswap"), "io", ""));
    let (r, _) = reload();
    assert_eq!(r["outcome"], "applied", "{r}");
    let report = running.finish(&opts).unwrap();
    assert_eq!(report.leaked, 0);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A Kubernetes ConfigMap volume, as kubelet's atomic writer makes and updates it: the files live in
/// a timestamped folder, `..data` links to it, each user-visible name links through `..data`; an
/// update writes a new folder, links `..data_tmp` to it, renames `..data_tmp` over `..data` and
/// removes the old folder. Neither `config.yaml` nor the name it points to is touched.
struct ConfigMapVolume {
    dir: PathBuf,
    version: u32,
}

impl ConfigMapVolume {
    /// A volume holding `files` (name, contents).
    fn new(dir: PathBuf, files: &[(&str, Vec<u8>)]) -> ConfigMapVolume {
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut v = ConfigMapVolume { dir, version: 0 };
        v.update(files);
        for (name, _) in files {
            std::os::unix::fs::symlink(format!("..data/{name}"), v.dir.join(name)).unwrap();
        }
        v
    }

    /// The atomic writer's update.
    fn update(&mut self, files: &[(&str, Vec<u8>)]) {
        let old = format!("..2026_12_04_00_00_0{}.{}", self.version, 1000 + self.version);
        self.version += 1;
        let new = format!("..2026_12_04_00_00_0{}.{}", self.version, 1000 + self.version);
        std::fs::create_dir(self.dir.join(&new)).unwrap();
        for (name, data) in files {
            std::fs::write(self.dir.join(&new).join(name), data).unwrap();
        }
        std::os::unix::fs::symlink(&new, self.dir.join("..data_tmp")).unwrap();
        std::fs::rename(self.dir.join("..data_tmp"), self.dir.join("..data")).unwrap();
        if self.version > 1 {
            std::fs::remove_dir_all(self.dir.join(old)).unwrap();
        }
    }
}

#[test]
fn a_configmap_update_swapping_the_data_link_is_applied_exactly_once() {
    let dir = std::env::temp_dir().join(format!("wasmdp-configmap-{}", std::process::id()));
    let wasm = std::fs::read(plugin_path("vlan_tagger")).unwrap();
    let policy =
        |mode: &str| format!("{{plugin: vlan_tagger.wasm, params: {{mode: {mode}, vlan: 10, vlan_outer: 20}}}}");
    let files = |mode: &str| {
        [("config.yaml", config(&policy(mode), "io", "").into_bytes()), ("vlan_tagger.wasm", wasm.clone())]
    };
    let mut volume = ConfigMapVolume::new(dir.clone(), &files("vlan"));
    let path = dir.join("config.yaml");
    let cfg = wasmdp::config::load(&path).unwrap();
    let dp = dataplane::build(&cfg, &Overrides::default()).unwrap();
    let opts = RunOptions { watch: Some(path.clone()), ..RunOptions::default() };
    let running = dataplane::start(dp, &opts, Arc::new(AtomicBool::new(false))).unwrap();
    let r = running.reloads.clone();
    assert_eq!(bytes_per_packet(&running.view), 68.0);

    volume.update(&files("qinq"));
    wait_for("the ConfigMap update to be applied", || r.applied.load(Relaxed) == 1);
    // The events of the swap's later steps (the old folder removed) reload nothing more.
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!((r.applied.load(Relaxed), r.rejected.load(Relaxed), r.generation.load(Relaxed)), (1, 0, 1));
    assert_eq!(bytes_per_packet(&running.view), 72.0, "the new ConfigMap's policy runs");

    // A second update: again once.
    volume.update(&files("vlan"));
    wait_for("the second update to be applied", || r.applied.load(Relaxed) == 2);
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!((r.applied.load(Relaxed), r.rejected.load(Relaxed), r.generation.load(Relaxed)), (2, 0, 2));
    assert_eq!(bytes_per_packet(&running.view), 68.0);
    let report = running.finish(&opts).unwrap();
    assert_eq!(report.leaked, 0);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A file the dataplane writes all the time in the config's folder (a pcap port's TX file) is not
/// a change of the config: its events must not keep the debounce from ever ending.
#[test]
fn a_file_written_all_the_time_beside_the_config_does_not_hold_reloads_back() {
    let dir = common::live::fresh_dir("busy-folder");
    let path = dir.join("config.yaml");
    let yaml = |engine: &str| {
        format!(
            "engine: {engine}\nstreams: [{{rx: a, tx: w}}]\nports:\n  - {{name: a, driver: null}}\n  - {{name: w, driver: pcap, pcap: {{tx: {}}}}}\n",
            dir.join("out.pcap").display()
        )
    };
    save(&path, &yaml("io"));
    let cfg = wasmdp::config::load(&path).unwrap();
    let dp = dataplane::build(&cfg, &Overrides::default()).unwrap();
    let opts = RunOptions { watch: Some(path.clone()), ..RunOptions::default() };
    let running = dataplane::start(dp, &opts, Arc::new(AtomicBool::new(false))).unwrap();
    let r = running.reloads.clone();
    std::thread::sleep(Duration::from_millis(200));
    save(&path, &yaml("macswap"));
    wait_for("the edit to be applied while out.pcap grows", || r.applied.load(Relaxed) == 1);
    running.finish(&opts).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

/// An edit saved the moment the previous reload is counted must be applied too: the watcher's
/// record of what it loaded is taken before it reads the files, never after (a record taken after
/// a reload can already hold the next edit, which then looks like nothing changed).
#[test]
fn an_edit_saved_as_soon_as_the_last_reload_is_counted_is_applied() {
    let dir = common::live::fresh_dir("edit-right-after");
    let path = dir.join("config.yaml");
    let valid = [(config(&tagger("vlan"), "io", ""), 68.0), (config(&tagger("qinq"), "macswap", ""), 72.0)];
    save(&path, &valid[0].0);
    let cfg = wasmdp::config::load(&path).unwrap();
    let dp = dataplane::build(&cfg, &Overrides::default()).unwrap();
    let opts = RunOptions { watch: Some(path.clone()), ..RunOptions::default() };
    let running = dataplane::start(dp, &opts, Arc::new(AtomicBool::new(false))).unwrap();
    let r = running.reloads.clone();
    for i in 1..=30u64 {
        save(&path, &valid[i as usize % 2].0);
        wait_for(&format!("edit {i} to be applied"), || r.applied.load(Relaxed) >= i);
    }
    assert_eq!((r.applied.load(Relaxed), r.rejected.load(Relaxed)), (30, 0));
    assert_eq!(bytes_per_packet(&running.view), valid[0].1, "the last edit runs");
    running.finish(&opts).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}
