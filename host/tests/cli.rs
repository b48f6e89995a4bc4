//! The binary as a user runs it.

use std::process::Command;

fn wasmdp(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_wasmdp")).args(args).env("RUST_LOG", "warn").output().unwrap()
}

#[test]
fn run_forwards_and_writes_the_json_report() {
    let dir = std::env::temp_dir().join(format!("wasmdp-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("stats.json");
    let cfg = concat!(env!("CARGO_MANIFEST_DIR"), "/../config.yaml");
    let out =
        wasmdp(&["run", cfg, "--duration", "0.5", "--stats-period", "0.2", "--stats-json", json.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("Port statistics for port 0 (gen0)"), "{stdout}");
    assert!(stdout.contains("Accumulated forward statistics for all ports"), "{stdout}");
    assert!(stdout.contains("Plugin: calls"), "the default config runs a policy on gen0: {stdout}");
    let j: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert!(j["mpps"].as_f64().unwrap() > 0.0);
    assert_eq!(j["ports"].as_array().unwrap().len(), 4);
    assert_eq!(j["leaked_buffers"], 0);
    assert!(j["ports"][0]["plugin_calls"].as_u64().unwrap() > 0, "{}", j["ports"][0]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn overrides_apply_and_bad_ones_are_refused() {
    let cfg = concat!(env!("CARGO_MANIFEST_DIR"), "/../config.yaml");
    let out = wasmdp(&["run", cfg, "--duration", "0.1", "--stats-period", "0", "--engine", "nope"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--engine `nope`"));
    let out = wasmdp(&["run", cfg, "--duration", "0.1", "--lcores", "999"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("core 999 is not available"));
}

#[test]
fn validate_reports_the_file_and_the_problem() {
    let dir = std::env::temp_dir().join(format!("wasmdp-validate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.yaml");
    std::fs::write(&bad, "ports:\n  - {name: a, driver: null, engine: warp}\n").unwrap();
    let out = wasmdp(&["validate", bad.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1));
    assert!(err.contains("bad.yaml") && err.contains("warp") && err.contains("line 2"), "{err}");
    let out = wasmdp(&["validate", dir.join("missing.yaml").to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn help_documents_every_run_flag() {
    let out = wasmdp(&["run", "--help"]);
    let help = String::from_utf8_lossy(&out.stdout);
    for flag in ["--duration", "--stats-period", "--stats-json", "--lcores", "--burst", "--engine", "--simd"] {
        assert!(help.contains(flag), "{flag} missing from help");
    }
}

#[test]
fn huge_core_lists_are_refused_with_a_message() {
    let cfg = concat!(env!("CARGO_MANIFEST_DIR"), "/../config.yaml");
    for list in ["0-100000000000", "0-4000000000"] {
        let out = wasmdp(&["run", cfg, "--duration", "0.1", "--lcores", list]);
        assert_eq!(out.status.code(), Some(2), "a usage error, not an abort");
        assert!(String::from_utf8_lossy(&out.stderr).contains("out of range"));
    }
}

#[test]
fn every_number_on_the_command_line_is_range_checked() {
    let cases: &[&[&str]] = &[
        &["bench", "--seconds=-1"],
        &["bench", "--seconds", "nan"],
        &["bench", "--reps", "0"],
        &["bench", "--sizes", "10"],
        &["bench", "--bursts", "600"],
        &["bench", "memcpy", "--iters", "0"],
        &["run", "--duration", "inf"],
        &["run", "--stats-period", "-3"],
        &["run", "--burst", "0"],
    ];
    for args in cases {
        let out = wasmdp(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("allowed") || err.contains("unexpected argument"), "{args:?}: {err}");
    }
}

/// Writes `yaml` to a config file and returns what `validate` and `run` say of it.
fn validate_and_run(name: &str, yaml: &str) -> (std::process::Output, std::process::Output) {
    let dir = std::env::temp_dir().join(format!("wasmdp-agree-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cfg = dir.join("cfg.yaml");
    std::fs::write(&cfg, yaml).unwrap();
    let c = cfg.to_str().unwrap();
    let v = wasmdp(&["validate", c]);
    let r = wasmdp(&["run", c, "--duration", "0.2", "--stats-period", "0", "--no-reload"]);
    std::fs::remove_dir_all(&dir).unwrap();
    (v, r)
}

#[test]
fn validate_refuses_what_run_refuses_with_the_same_reason() {
    let refuse_init =
        concat!(env!("CARGO_MANIFEST_DIR"), "/../plugins/target/wasm32-unknown-unknown/release/faulty_refuse.wasm");
    let cases = [
        (
            "missing-plugin",
            "ports:\n  - name: a\n    driver: null\n    policy: {plugin: /nonexistent/p.wasm}\n",
            "cannot read",
        ),
        ("dir-plugin", "ports:\n  - name: a\n    driver: null\n    policy: {plugin: /tmp}\n", "is a directory"),
        ("dup-cores", "lcores: [0, 0]\nports:\n  - {name: a, driver: null}\n", "listed twice"),
        ("no-core", "lcores: [999]\nports:\n  - {name: a, driver: null}\n", "core 999"),
        ("queues", "ports:\n  - {name: a, driver: null, queues: 2}\n  - {name: b, driver: null}\n", "queues"),
        ("no-iface", "ports:\n  - {name: a, driver: af_packet, af_packet: {iface: nosuch0}}\n", "does not exist"),
        ("no-capture", "ports:\n  - {name: a, driver: pcap, pcap: {rx: /nonexistent.pcap}}\n", "nonexistent.pcap"),
        (
            "init",
            &format!("ports:\n  - name: a\n    driver: null\n    policy: {{plugin: {refuse_init}}}\n"),
            "init refused",
        ),
    ];
    for (name, yaml, why) in cases {
        let (v, r) = validate_and_run(name, yaml);
        let (ve, re) = (String::from_utf8_lossy(&v.stderr), String::from_utf8_lossy(&r.stderr));
        assert!(!v.status.success() && ve.contains(why), "{name}: validate said {ve}");
        assert!(!r.status.success() && re.contains(why), "{name}: run said {re}");
    }
    // The build hint only where it helps: a missing file under a target folder.
    let (v, _) = validate_and_run("dir-hint", "ports:\n  - name: a\n    driver: null\n    policy: {plugin: /tmp}\n");
    assert!(!String::from_utf8_lossy(&v.stderr).contains("build-plugins"));
}

#[test]
fn sighup_reloads_the_configuration() {
    let dir = std::env::temp_dir().join(format!("wasmdp-sighup-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cfg = dir.join("cfg.yaml");
    std::fs::write(&cfg, "ports:\n  - {name: a, driver: null}\n  - {name: b, driver: null}\n").unwrap();
    let json = dir.join("stats.json");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_wasmdp"))
        .args(["run", cfg.to_str().unwrap(), "--stats-period", "0", "--stats-json", json.to_str().unwrap()])
        .env("RUST_LOG", "warn")
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(800));
    // SAFETY: signalling our own child process by its id.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGHUP) };
    std::thread::sleep(std::time::Duration::from_millis(400));
    // SAFETY: as above.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    assert!(child.wait().unwrap().success());
    let j: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(j["reloads"]["applied"], 1, "the SIGHUP reloaded the (unchanged) file: {}", j["reloads"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn perf_map_names_the_plugin_functions_compiled_or_cached() {
    let dir = std::env::temp_dir().join(format!("wasmdp-perfmap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cfg = concat!(env!("CARGO_MANIFEST_DIR"), "/../config.yaml");
    // Twice with one cache folder: the module compiled, then loaded from the cache.
    for run in ["compiled", "cached"] {
        let child = Command::new(env!("CARGO_BIN_EXE_wasmdp"))
            .args(["run", cfg, "--duration", "0.3", "--stats-period", "0"])
            .env("RUST_LOG", "warn")
            .env("WASMDP_PERF_MAP", "1")
            .env("WASMDP_CACHE_DIR", &dir)
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let map = std::path::PathBuf::from(format!("/tmp/perf-{}.map", child.id()));
        let out = child.wait_with_output().unwrap();
        let text = std::fs::read_to_string(&map).unwrap_or_default();
        std::fs::remove_file(&map).ok();
        assert!(out.status.success(), "{run}: {}", String::from_utf8_lossy(&out.stderr));
        // The example is stripped of its name section: its functions are named by index.
        let plugin_functions = text.lines().filter(|l| l.contains(" wasm[0]::function[")).count();
        assert!(plugin_functions > 0, "{run}: {map:?} names none of the plugin's functions:\n{text}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Runs wasmdp with its standard output a pipe whose reader is gone (`wasmdp ... | head` after
/// `head` exited); returns the exit status and stderr.
fn with_stdout_closed(args: &[&str]) -> (std::process::ExitStatus, String) {
    use std::io::Read;
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_wasmdp"))
        .args(args)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let mut err = String::new();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    (child.wait().unwrap(), err)
}

#[test]
fn a_closed_standard_output_ends_a_command_quietly_and_a_run_still_reports() {
    // `wasmdp ctl ... | head` once panicked ("failed printing to stdout: Broken pipe"); after a
    // closed terminal the final statistics panicked and --stats-json was never written.
    let cfg = concat!(env!("CARGO_MANIFEST_DIR"), "/../config.yaml");
    let (status, err) = with_stdout_closed(&["validate", cfg]);
    assert!(status.success() && !err.contains("panicked"), "{status}: {err}");
    let dir = std::env::temp_dir().join(format!("wasmdp-cli-closed-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("stats.json");
    let (status, err) = with_stdout_closed(&[
        "run",
        cfg,
        "--duration",
        "0.5",
        "--stats-period",
        "0.1",
        "--no-reload",
        "--stats-json",
        json.to_str().unwrap(),
    ]);
    assert!(status.success() && !err.contains("panicked"), "{status}: {err}");
    let j: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(j["leaked_buffers"], 0, "the report was written whatever stdout did");
    let (status, err) = with_stdout_closed(&["bench", "memcpy", "--iters", "5", "--json", json.to_str().unwrap()]);
    assert!(status.success() && !err.contains("panicked"), "{status}: {err}");
    std::fs::remove_dir_all(&dir).unwrap();
}
