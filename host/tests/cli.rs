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
