#!/usr/bin/env bash
# Instructions per key of a batch map lookup, the host side alone (`map_lookup_batch` on the
# plugin's memory, `lookup_batch_in`), under callgrind: batches of 32 hits in a map of 1000 random
# keys, the table keyed with a fixed key so a run repeats to the instruction.
#
# With --single: `map_lookup`'s table side instead, one key a call (`ops::maps::lookup`).
#
# usage: bench/map-cost.sh [--single] [KIND:KEY_SIZE:VALUE_SIZE:TTL_MS ...]   (default: the shapes BENCHMARKS.md shows)
#        KIND: hash or lru_hash                                             (needs valgrind)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "valgrind is needed: apt-get install valgrind" >&2; exit 1; }
toggle='*lookup_batch_in*' single=
if [[ "${1:-}" == --single ]]; then
  toggle='*single_lookup_for_cost*' single=1
  shift
fi
shapes=("$@")
[[ ${#shapes[@]} -gt 0 ]] || shapes=(hash:4:4:0 hash:8:8:0 hash:13:8:0 hash:16:8:0 lru_hash:13:1:60000)
bin=$(cargo test --release -q -p wasmdp --lib --no-run --message-format=json 2>/dev/null |
  python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["kind"] == ["lib"]:
        print(m["executable"])')
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%-24s %10s\n' shape instr/key
for s in "${shapes[@]}"; do
  WASMDP_MAP_COST=$s WASMDP_MAP_COST_SINGLE=$single valgrind --tool=callgrind --callgrind-out-file="$tmp/out" --toggle-collect="$toggle" \
    "$bin" --ignored --exact plugin::ops::maps::batch::tests::batch_lookup_cost -q >/dev/null 2>"$tmp/err" \
    || { cat "$tmp/err" >&2; exit 1; }
  ir=$(awk '/^(summary|totals):/ {print $2; exit}' "$tmp/out")
  printf '%-24s %10s\n' "$s" "$(python3 -c "print('%.1f' % ($ir / (20000 * 32)))")"
done
