#!/usr/bin/env bash
# Instructions of one single-key map call made from WebAssembly, all of it: the module's call, the
# wasmtime trampoline, the host function's range checks and the table's work. Hand-written modules
# (1.1, an 8-byte-key hash map of 1024 entries holding the key used) whose on_burst makes, per
# packet, one `map_lookup`, one `map_update` or one `map_add` of that key, or nothing but a load
# and a store; each runs through `bench/instructions.sh --plugin` (callgrind, two null ports, 64 B,
# burst 32), and a call's cost is its path minus the empty one.
#
# usage: bench/map-calls.sh [SECONDS=1]      (needs valgrind and wat2wasm: apt-get install valgrind wabt)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v wat2wasm >/dev/null || { echo "wat2wasm is needed: apt-get install wabt" >&2; exit 1; }
secs=${1:-1}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
module() { # NAME BODY: the module with BODY once per packet
  cat >"$tmp/$1.wat" <<WAT
(module
  (import "wasmdp" "map_declare" (func \$declare (param i32 i32 i32 i32 i32 i32) (result i32)))
  (import "wasmdp" "map_update" (func \$update (param i32 i32 i32) (result i32)))
  (import "wasmdp" "map_lookup" (func \$lookup (param i32 i32 i32) (result i32)))
  (import "wasmdp" "map_add" (func \$add (param i32 i32 i32 i64) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 800) "hits")
  (func (export "wasmdp_abi_version") (result i32) (i32.const 65537))
  (func (export "wasmdp_init") (param i32 i32) (result i32)
    (if (i32.ne (call \$declare (i32.const 800) (i32.const 4) (i32.const 0) (i32.const 8) (i32.const 8) (i32.const 1024)) (i32.const 0))
      (then (return (i32.const 5))))
    (i64.store (i32.const 900) (i64.const 0x0102030405060708))
    (i64.store (i32.const 916) (i64.const 42))
    (if (i32.ne (call \$update (i32.const 0) (i32.const 900) (i32.const 916)) (i32.const 0))
      (then (return (i32.const 6))))
    (i32.const 0))
  (func (export "wasmdp_on_burst") (param i32 i32) (result i32) (local \$i i32)
    (block \$out (loop \$l
      (br_if \$out (i32.ge_u (local.get \$i) (local.get 1)))
      $2
      (local.set \$i (i32.add (local.get \$i) (i32.const 1)))
      (br \$l)))
    (i32.const 0)))
WAT
  wat2wasm "$tmp/$1.wat" -o "$tmp/$1.wasm"
}
module none '(i64.store (i32.const 908) (i64.load (i32.const 900)))'
module map_lookup '(drop (call $lookup (i32.const 0) (i32.const 900) (i32.const 908)))'
module map_update '(drop (call $update (i32.const 0) (i32.const 900) (i32.const 916)))'
module map_add '(drop (call $add (i32.const 0) (i32.const 900) (i32.const 0) (i64.const 1)))'
per_pkt() { bench/instructions.sh --plugin "$tmp/$1.wasm" "$secs" | awk '$1 == "plugin_user" {print $2}'; }
none=$(per_pkt none)
printf '%-12s %10s\n' call instr/call
for call in map_lookup map_update map_add; do
  printf '%-12s %10s\n' "$call" "$(python3 -c "print('%.1f' % ($(per_pkt "$call") - $none))")"
done
