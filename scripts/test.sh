#!/usr/bin/env bash
# The whole test suite, set-up included: formatting, lints, every crate's tests, fuzzing for a bounded
# time, and a quick run of the benchmark to check that it completes and writes valid JSON (figures
# are not judged here).
set -euo pipefail
cd "$(dirname "$0")/.."
# Each step prints the minutes and seconds since the start, so a slow step shows in the CI log.
step() { printf '== [%d:%02d] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*"; }
# The examples' native builds (`plugin: native:NAME`): their tests, and the bench's baselines.
features=wasmdp/native-examples
./scripts/setup.sh
step "build the WebAssembly plugins"
./scripts/build-plugins.sh

step "cargo fmt --check"
cargo fmt --all -- --check
step "cargo clippy --all-targets"
cargo clippy --workspace --all-targets --features "$features" -q -- -D warnings
step "cargo doc (warnings are errors: broken links fail)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --features "$features" -q
step "cargo test"
cargo test --workspace --features "$features"
# The test executables (each links wasmtime with its line tables: over 3 GB in all) are not run
# again; removed, so that the release build of the instruction guard has the disk they took (a CI
# machine ran out of it there).
remove_test_executables() {
  cargo test --no-run --message-format=json "$@" | python3 -c '
import json, os, sys
for line in sys.stdin:
    m = json.loads(line)
    exe = m.get("executable") if m.get("reason") == "compiler-artifact" else None
    if exe and m["profile"]["test"] and os.path.exists(exe):
        os.remove(exe)'
}
remove_test_executables --workspace --features "$features"
step "loom: the map tables' protocol model-checked (interleavings with up to 2 preemptions)"
LOOM_MAX_PREEMPTIONS=2 cargo test -p wasmdp --features loom --lib -q loom_tests
remove_test_executables -p wasmdp --features loom --lib
step "plugins: tests (native, against the SDK's mock host) and lints"
cargo test --manifest-path plugins/Cargo.toml --target-dir plugins/target -q
cargo clippy --manifest-path plugins/Cargo.toml --target-dir plugins/target --target wasm32-unknown-unknown -q -- -D warnings
cargo fmt --manifest-path plugins/Cargo.toml --all -- --check
# After `cargo test`: the fuzz build shares its dependencies (scripts/fuzz.sh).
step "fuzzing: every target for a bounded time (coverage-guided, stable Rust)"
cargo fmt --manifest-path fuzz/Cargo.toml --all -- --check
./scripts/fuzz.sh "${WASMDP_FUZZ_SECONDS:-20}"
step "wasmdp bench --quick"
# The binary the tests ran (a debug build, already built by `cargo test`): these steps check that the
# commands complete and write what they promise, not their figures, so a release build (minutes of
# LTO) adds nothing here. The bench scripts of bench/ build and measure the release binary.
cargo build -q -p wasmdp --features "$features"
wasmdp="${CARGO_TARGET_DIR:-target}"/debug/wasmdp
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
RUST_LOG=warn "$wasmdp" bench --quick --reps 1 --json "$out/bench.json" --svg "$out/bench.svg"
grep -q "<svg" "$out/bench.svg" && grep -q "plugin-sticky" "$out/bench.svg"
step "wasmdp bench --plugin: a user's plugin against io and the native engine it names"
plugins=plugins/target/wasm32-unknown-unknown/release
RUST_LOG=warn "$wasmdp" bench --plugin "$plugins/wasm_macswap.wasm" --native macswap \
  --quick --reps 1 --json "$out/user.json" >/dev/null
RUST_LOG=warn "$wasmdp" bench --plugin "$plugins/acl.wasm" --params deny_udp_dst_port=9 \
  --quick --reps 1 --json "$out/acl.json" >/dev/null
python3 - "$out/user.json" "$out/acl.json" <<'PY'
import json, sys
cells = {c["path"]: c for c in json.load(open(sys.argv[1]))["results"]}
assert set(cells) == {"wasm", "native", "io"}, cells.keys()
assert all(c["engine"] == "wasm_macswap" and c["mpps"] > 0 for c in cells.values()), cells
assert cells["wasm"]["ratio_to_native"] is not None and cells["wasm"]["ratio_to_io"] is None, cells["wasm"]
acl = {c["path"]: c for c in json.load(open(sys.argv[2]))["results"]}
assert set(acl) == {"wasm", "io"} and acl["wasm"]["ratio_to_io"] is not None, acl
assert acl["wasm"]["mpps"] > 0, "an ACL dropping every frame is measured at the rate it decides"
print("bench --plugin JSON ok")
PY
step "instructions per packet against the committed baseline (callgrind; a path over 1% fails)"
# The release build the benchmarks measure; the counts repeat within 0.05% (valgrind shows the
# AVX2 kernels on any AVX2 machine), so a 1% move is a change, not noise.
bench/instructions.sh --check bench/instructions-baseline.txt 1
step "wasmdp bench memcpy (a short run: checks it completes)"
RUST_LOG=warn "$wasmdp" bench memcpy --iters 200 --json "$out/memcpy.json" >/dev/null
python3 - "$out/bench.json" <<'PY'
import json, sys
cells = json.load(open(sys.argv[1]))["results"]
need = {"engine", "path", "simd", "pkt_size", "burst", "mpps", "ns_per_pkt", "ratio_to_native"}
assert cells, "no cells"
for c in cells:
    assert need <= c.keys(), f"cell lacks {need - c.keys()}: {c}"
    assert c["mpps"] > 0, c
paths = {(c["engine"], c["path"]) for c in cells if c["pkt_size"] == 64 and c["burst"] == 32}
for e in ("io", "macswap"):
    for p in ("native", "plugin", "plugin-sticky"):
        assert (e, p) in paths, f"--quick lacks {e}/{p}"
# Every plugin doing per-packet work runs against a native baseline: the engine (macswap, vxlan) or,
# for the examples, the plugin's own native build; and beside its native build and io where they apply.
for e in ("macswap", "vxlan_decap", "vxlan_encap", "dnat", "l4_lb", "ratelimit"):
    wasm = [c for c in cells if c["engine"] == e and c["path"] == "wasm"]
    assert wasm and wasm[0]["ratio_to_native"] is not None, f"--quick lacks {e}/wasm against native"
    beside = ("native-build",) if e in ("macswap", "vxlan_decap", "vxlan_encap") else ("native", "io")
    for p in beside:
        assert (e, p) in paths, f"--quick lacks {e}/{p}"
print(f"bench JSON ok: {len(cells)} cells")
PY
step "run the default config for 1 s"
RUST_LOG=warn "$wasmdp" run config.yaml --duration 1 --stats-period 0 --stats-json "$out/run.json" >/dev/null
python3 -c "import json,sys; j=json.load(open(sys.argv[1])); assert j['leaked_buffers']==0 and j['mpps']>0, j; print('run JSON ok: %.1f Mpps' % j['mpps'])" "$out/run.json"
step "all passed"
