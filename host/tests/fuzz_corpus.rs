//! The fuzz corpus as regression tests: every input kept in fuzz/corpus/<target>/ (seeds and the
//! inputs that once crashed or hung something) runs through its target on every `cargo test`.
//! Coverage-guided runs that find new ones: scripts/fuzz.sh.

use std::path::Path;

fn each(target: &str, run: impl Fn(&[u8])) -> usize {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus").join(target);
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        let data = std::fs::read(&path).unwrap();
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(&data)));
        assert!(r.is_ok(), "{target}: {} failed", path.display());
        n += 1;
    }
    n
}

#[test]
fn every_corpus_input_passes_its_target() {
    assert!(each("config", wasmdp::fuzzing::config) > 0);
    assert!(each("capture", wasmdp::fuzzing::capture) > 0);
    assert!(each("wire", wasmdp::fuzzing::wire) > 0);
    assert!(
        each("hostcalls", |d| {
            wasmdp::fuzzing::hostcalls(d);
        }) > 0
    );
}
