//! The compile cache: entries are reused, and an entry that was corrupted, swapped, or written by
//! someone else is never run: the module is compiled again, with a warning that says why.

mod common;

use common::{capture_logs, write_wat};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use wasmdp::plugin::{Plugin, Runtime};

const OK: &str = r#"(module (memory (export "memory") 1)
  (func (export "wasmdp_abi_version") (result i32) (i32.const 65536))
  (func (export "wasmdp_init") (param i32 i32) (result i32) (i32.const 0))
  (func (export "wasmdp_on_burst") (param i32 i32) (result i32) (i32.const 0)))"#;

fn policy(path: &Path) -> wasmdp::config::PolicyCfg {
    let yaml = format!("ports:\n  - name: a\n    driver: null\n    policy: {{plugin: {}}}\n", path.display());
    wasmdp::config::parse(&yaml, "test").unwrap().ports[0].policy.first().cloned().unwrap()
}

fn fresh_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("wasmdp-cache-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Loads the plugin with a new runtime on `dir`; returns the log.
fn load(dir: &Path, pol: &wasmdp::config::PolicyCfg) -> String {
    let ((), log) = capture_logs(|| {
        let rt = Runtime::with_cache(Some(dir.to_path_buf())).unwrap();
        Plugin::load(&rt, pol).unwrap_or_else(|e| panic!("{e:#}"));
    });
    log
}

fn entry(dir: &Path, ext: &str) -> PathBuf {
    let found: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    assert_eq!(found.len(), 1, "{found:?}");
    found[0].clone()
}

#[test]
fn entries_are_written_private_and_reused() {
    let dir = fresh_dir("reuse");
    let pol = policy(&write_wat("cached", OK));
    load(&dir, &pol);
    assert_eq!(std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777, 0o700, "folder 0700");
    let cwasm = entry(&dir, "cwasm");
    assert_eq!(std::fs::metadata(&cwasm).unwrap().permissions().mode() & 0o777, 0o600);
    let written = std::fs::metadata(&cwasm).unwrap().modified().unwrap();
    let log = load(&dir, &pol);
    assert_eq!(std::fs::metadata(&cwasm).unwrap().modified().unwrap(), written, "reused, not rewritten");
    assert!(!log.contains("WARN"), "{log}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_corrupted_entry_is_recompiled_with_a_warning() {
    let dir = fresh_dir("corrupt");
    let pol = policy(&write_wat("corrupt", OK));
    load(&dir, &pol);
    let cwasm = entry(&dir, "cwasm");
    let good = std::fs::read(&cwasm).unwrap();
    // Flip bytes in the middle (the code), as a disk error or an attacker would.
    let mut bad = good.clone();
    let mid = bad.len() / 2;
    bad[mid..mid + 16].iter_mut().for_each(|b| *b ^= 0xff);
    std::fs::write(&cwasm, &bad).unwrap();
    let log = load(&dir, &pol);
    assert!(log.contains("does not match the digest") && log.contains("recompiling"), "{log}");
    assert_eq!(std::fs::read(&cwasm).unwrap(), good, "the entry was written again, intact");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_entry_replaced_by_other_code_is_not_run() {
    // A valid precompiled module of another plugin (one whose init refuses), put in place of this
    // plugin's entry: its digest file does not match, so it is never deserialized.
    let dir = fresh_dir("swap");
    let refuse =
        OK.replace("(param i32 i32) (result i32) (i32.const 0))\n", "(param i32 i32) (result i32) (i32.const 9))\n");
    let (a, b) = (policy(&write_wat("swap-a", OK)), policy(&write_wat("swap-b", &refuse)));
    load(&dir, &a);
    let a_entry = entry(&dir, "cwasm");
    let other = fresh_dir("swap-other");
    let ((), _) = capture_logs(|| {
        let rt = Runtime::with_cache(Some(other.clone())).unwrap();
        let _ = Plugin::load(&rt, &b);
    });
    std::fs::copy(entry(&other, "cwasm"), &a_entry).unwrap();
    let log = load(&dir, &a);
    assert!(log.contains("does not match the digest"), "{log}");
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::remove_dir_all(&other).unwrap();
}

#[test]
fn a_cache_writable_by_others_or_owned_by_someone_else_is_not_used() {
    let pol = policy(&write_wat("perm", OK));
    let dir = fresh_dir("open");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    let log = load(&dir, &pol);
    assert!(log.contains("compile cache not used") && log.contains("mode 777"), "{log}");
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "nothing written there");
    std::fs::remove_dir_all(&dir).unwrap();

    // An entry (and its digest) owned by another user: not trusted, even if intact.
    let dir = fresh_dir("owner");
    load(&dir, &pol);
    let cwasm = entry(&dir, "cwasm");
    if std::fs::metadata(&cwasm).unwrap().uid() == 0 {
        // Only root can give a file away.
        std::os::unix::fs::chown(&cwasm, Some(65534), Some(65534)).unwrap();
        let log = load(&dir, &pol);
        assert!(log.contains("owned by uid 65534"), "{log}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The `.cwasm` and `.sum` paths of each entry in `dir`, by key.
fn pairs(dir: &Path) -> Vec<(PathBuf, PathBuf)> {
    let mut keys: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "cwasm"))
        .collect();
    keys.sort();
    keys.into_iter().map(|c| (c.clone(), c.with_extension("sum"))).collect()
}

#[test]
fn another_modules_whole_entry_put_under_this_key_is_not_run() {
    // Module A's entry and digest, self-consistent, copied under module B's key: the digest binds
    // an entry to its key, so B is compiled again instead of running A's code.
    let dir = fresh_dir("pair-swap");
    let refuse =
        OK.replace("(param i32 i32) (result i32) (i32.const 0))\n", "(param i32 i32) (result i32) (i32.const 9))\n");
    let (a, b) = (policy(&write_wat("pair-a", OK)), policy(&write_wat("pair-b", &refuse)));
    load(&dir, &a);
    let a_pair = pairs(&dir).remove(0);
    load(&dir, &b);
    let b_pair = pairs(&dir).into_iter().find(|p| *p != a_pair).unwrap();
    std::fs::copy(&a_pair.0, &b_pair.0).unwrap();
    std::fs::copy(&a_pair.1, &b_pair.1).unwrap();
    let log = load(&dir, &b);
    assert!(log.contains("does not match the digest stored beside it for this key"), "{log}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_symbolic_link_in_place_of_an_entry_or_an_open_parent_folder_is_not_trusted() {
    let pol = policy(&write_wat("link", OK));
    let dir = fresh_dir("link");
    load(&dir, &pol);
    let (cwasm, _) = pairs(&dir).remove(0);
    let real = dir.join("elsewhere.bin");
    std::fs::rename(&cwasm, &real).unwrap();
    std::os::unix::fs::symlink(&real, &cwasm).unwrap();
    let log = load(&dir, &pol);
    assert!(log.contains("symbolic link") && log.contains("recompiling"), "{log}");
    std::fs::remove_dir_all(&dir).unwrap();

    // A private cache folder inside a folder anyone may write to (and rename it in): not used.
    let open = fresh_dir("open-parent");
    std::fs::create_dir_all(&open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    let log = load(&open.join("cache"), &pol);
    assert!(log.contains("compile cache not used") && log.contains("group or others may write to"), "{log}");
    std::fs::remove_dir_all(&open).unwrap();
}
