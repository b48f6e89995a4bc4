#!/usr/bin/env bash
# Instructions per packet handled (forwarded, or dropped by the policy) in the worker loop, per path, under valgrind's callgrind
# (counted only inside `wasmdp::lcore::run`, so start-up and the stop report are left out; repeats
# within 0.05% between runs, unlike wall-clock rates on a shared VM). Two null ports, 64-byte frames,
# burst 32, one lcore. Each row: the path, instructions per packet, and the ratio of its baseline's
# count to its own (1.0 = as cheap as the baseline). A plugin's `_native` row is the same source
# built into the host (`plugin: native:NAME`): the baseline of the per-packet examples, and beside
# the native engines for the others.
#
# usage: bench/instructions.sh [SECONDS=1] [PATH_FILTER]     (needs valgrind: apt-get install valgrind)
#        bench/instructions.sh --plugin FILE.wasm [--params K=V,...] [--native ENGINE] [SECONDS=1]
#        bench/instructions.sh --paths "PATH..." [SECONDS=1]      (these paths exactly: "path instr/pkt" rows)
#        bench/instructions.sh --check BASELINE [SECONDS=1]
#        bench/instructions.sh --bless BASELINE [SECONDS=1]
# --check measures the guarded paths (native io, macswap, 5tswap and the VXLAN engines, the
# per-burst and sticky plugin paths, the 1.0 module, each example plugin) and fails when any costs
# more than 1% over the committed BASELINE (bench/instructions-baseline.txt; scripts/test.sh runs
# it); --bless writes BASELINE from this machine, in a commit that says why the figures moved.
# The second form measures your plugin as `wasmdp bench --plugin` does: on both ports, against io
# on the same ports and frames and, with --native, against that engine. A packet the plugin drops
# counts as handled (its cost is per packet received).
set -euo pipefail
user="" params="" native="" check="" bless="" only=""
while [[ "${1:-}" == --* ]]; do
  case "$1" in
    --check) check=${2:?--check needs a baseline file}; shift 2 ;;
    --bless) bless=${2:?--bless needs a baseline file}; shift 2 ;;
    --plugin) user=$(realpath "${2:?--plugin needs a file}"); shift 2 ;;
    --params) params=${2?--params needs K=V,...}; shift 2 ;;
    --native) native=${2:?--native needs an engine}; shift 2 ;;
    --paths) only=${2:?--paths needs path names}; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
[[ -n "$user" && ! -f "$user" ]] && { echo "--plugin $user: not a file" >&2; exit 2; }
[[ -z "$user" && ( -n "$params" || -n "$native" ) ]] && { echo "--params and --native go with --plugin" >&2; exit 2; }
secs=${1:-1}
filter=${2:-}
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "valgrind is needed: apt-get install valgrind" >&2; exit 1; }
cargo build --release -q -p wasmdp --features native-examples
scripts/build-plugins.sh >/dev/null 2>&1
wasmdp="$PWD/${CARGO_TARGET_DIR:-target}"/release/wasmdp
plugins="$PWD/plugins/target/wasm32-unknown-unknown/release"
tmp=$(mktemp -d /tmp/instructions.XXXXXXXX)   # a path of the same length everywhere (see measure)
trap 'rm -rf "$tmp"' EXIT

# config NAME ENGINE PORT0-EXTRA PORT1-EXTRA
config() {
  cat >"$tmp/$1.yaml" <<YAML
lcores: [$(($(nproc) - 1))]
burst: 32
engine: $2
ports:
  - {name: p0, driver: null, frame: {size: 64${5:-}}$3}
  - {name: p1, driver: null, frame: {size: 64${5:-}}$4}
YAML
}
pol() { # plugin params [native] -> a port's policy: the module, or with `native` its native build
  local plugin="$plugins/$1.wasm"
  [[ "${3:-}" == native ]] && plugin="'native:$1'"
  echo ", policy: {plugin: $plugin, params: {$2}, on_failure: fail_closed, limits: {deadline_us: 1000000}}"
}
v0=", vxlan: {vni: 42, local_ip: 192.0.2.1, remote_ip: 192.0.2.2}"
v1=", vxlan: {vni: 42, local_ip: 192.0.2.2, remote_ip: 192.0.2.1}"
config io io "" ""
config macswap macswap "" ""
config 5tswap 5tswap "" ""
config plugin macswap "$(pol static_policy 'engine: macswap')" "$(pol static_policy 'engine: macswap')"
config plugin_sticky macswap "$(pol static_policy 'engine: macswap, sticky: true')" "$(pol static_policy 'engine: macswap, sticky: true')"
# The same plugin as the released 1.0 SDK built it (it calls run_engine back every burst).
plugins10="$PWD/host/tests/data/abi-1.0"
pol10=", policy: {plugin: $plugins10/static_policy.wasm, params: {engine: macswap}, on_failure: fail_closed, limits: {deadline_us: 1000000}}"
config plugin_1_0 macswap "$pol10" "$pol10"
# Chains of N links that each run the io engine (the static policy, called every burst): what one
# more link costs a chain, beyond its own work (BENCHMARKS.md, "Policy chains").
link() { echo "{name: l$1, plugin: $plugins/static_policy.wasm, params: {engine: io}, on_failure: fail_closed, limits: {deadline_us: 1000000}}"; }
chain() { local out="" i; for ((i = 0; i < $1; i++)); do out+="${out:+, }$(link $i)"; done; echo ", policy: [$out]"; }
for n in 1 2 4; do config chain$n io "$(chain $n)" "$(chain $n)"; done
for n in "" _native; do
  k=${n:+native}
  config wasm_macswap$n io "$(pol wasm_macswap '' $k)" "$(pol wasm_macswap '' $k)"
  config acl$n io "$(pol acl 'deny_udp_dst_port: 9' $k)" "$(pol acl 'deny_udp_dst_port: 9' $k)"
  config acl_pass$n io "$(pol acl 'deny_udp_dst_port: 53' $k)" "$(pol acl 'deny_udp_dst_port: 53' $k)"
  config dnat$n io "$(pol dnat 'match: 198.18.0.0/24, to: 10.9.9.9' $k)" "$(pol dnat 'match: 198.18.0.0/24, to: 10.9.9.9' $k)"
  config dscp_remark$n io "$(pol dscp_remark 'dscp: 46' $k)" "$(pol dscp_remark 'dscp: 46' $k)"
  config l4_lb$n io "$(pol l4_lb "ports: '0,1'" $k)" "$(pol l4_lb "ports: '0,1'" $k)"
  config ratelimit$n io "$(pol ratelimit 'rate_pps: 1000000000' $k)" "$(pol ratelimit 'rate_pps: 1000000000' $k)"
  config vxlan_decap_wasm$n io "$v0$(pol vxlan_decap 'local_ip: 192.0.2.1, vni: 42' $k)" \
    "$v1$(pol vxlan_decap 'local_ip: 192.0.2.2, vni: 42' $k)" ", tunnel: vxlan"
  config vxlan_encap_wasm$n io "$(pol vxlan_encap 'vni: 42, local_ip: 192.0.2.1, remote_ip: 192.0.2.2' $k)" \
    "$(pol vxlan_encap 'vni: 42, local_ip: 192.0.2.2, remote_ip: 192.0.2.1' $k)"
done
# The same ACL written in C, Zig and AssemblyScript (plugins/c-acl, zig-acl, as-acl), beside the Rust one.
for lang in c zig as; do
  config acl_$lang io "$(pol acl_$lang 'deny_udp_dst_port: 9')" "$(pol acl_$lang 'deny_udp_dst_port: 9')"
  config acl_pass_$lang io "$(pol acl_$lang 'deny_udp_dst_port: 53')" "$(pol acl_$lang 'deny_udp_dst_port: 53')"
done
config vxlan_decap vxlan_decap "$v0" "$v1" ", tunnel: vxlan"
config vxlan_encap vxlan_encap "$v0" "$v1"
# The stateful firewall (issue 30): p0 the inside (64 flows, each packet an update of the flow map
# both ports share), p1 the outside sending replies to one of them (each packet a lookup).
fw() { echo "policy: {plugin: $plugins/firewall.wasm, params: {side: $1, flows: 1024}, shared_maps: [fw_flows], on_failure: fail_closed, limits: {deadline_us: 1000000}}"; }
cat >"$tmp/firewall.yaml" <<YAML
lcores: [$(($(nproc) - 1))]
burst: 32
engine: io
ports:
  - {name: p0, driver: null, frame: {size: 64, src_ip: 10.0.0.5, dst_ip: 198.51.100.7, src_port: 40000, dst_port: 443, flows: 64}, $(fw inside)}
  - {name: p1, driver: null, frame: {size: 64, src_ip: 198.51.100.7, dst_ip: 10.0.0.5, src_port: 443, dst_port: 40000}, $(fw outside)}
YAML
# io on the firewall's ports and frames, without policies: the null port's receive of 64 flows
# (a 5-tuple rewritten per packet) costs more than `io`'s one frame, which is the ports' work, not
# the firewall's (as the peer comparisons take io on the same driver).
sed -e 's/, policy: {.*}}$/}/' "$tmp/firewall.yaml" >"$tmp/firewall_io.yaml"
if [[ -n "$user" ]]; then
  # The params as a YAML flow mapping of quoted strings, as `wasmdp bench --params` makes them.
  pyaml=$(python3 - "$params" <<'PY'
import sys
items = [p for p in sys.argv[1].split(',') if p]
out = []
for p in items:
    k, sep, v = p.partition('=')
    if not sep or not k or not all(c.isalnum() or c in '_-.' for c in k):
        sys.exit(f"--params `{p}`: expected KEY=VALUE, the key letters, digits, `_`, `-`, `.`")
    out.append("%s: '%s'" % (k, v.replace("'", "''")))
print('{' + ', '.join(out) + '}')
PY
)
  [[ "$user" == *"'"* ]] && { echo "--plugin $user: a path with a quote is not supported here" >&2; exit 2; }
  upol=", policy: {plugin: '$user', params: $pyaml, on_failure: fail_closed, limits: {deadline_us: 1000000}}"
  config plugin_user io "$upol" "$upol"
  [[ -n "$native" ]] && config native_user "$native" "" ""
fi
declare -A ipp
# The same stack on every machine: the process's arguments and environment sit at the top of its
# stack, so their lengths move where its buffers fall, and that moved some plugin paths' counts by
# about 1% between a run from one folder and from another. The binary is run from a path of a fixed
# length (in the mktemp folder, as the configs) with a fixed environment.
cp "$wasmdp" "$tmp/wasmdp"
valgrind=$(command -v valgrind)
measure() {
  # --fair-sched: valgrind runs one thread at a time, and without it the worker can starve the
  # thread that stops the run after SECONDS (a run of 1 s once took 28).
  (cd "$tmp" && env -i RUST_LOG=warn "$valgrind" --tool=callgrind --fair-sched=yes --callgrind-out-file="$tmp/$1.out" \
    --toggle-collect='wasmdp::lcore::run' "$tmp/wasmdp" run "$tmp/$1.yaml" --duration "$secs" --stats-period 0 \
    --stats-json "$tmp/$1.json") >/dev/null 2>"$tmp/$1.err" || { cat "$tmp/$1.err" >&2; exit 1; }
  ipp[$1]=$(python3 - "$tmp/$1.out" "$tmp/$1.json" <<'PY'
import json, sys
ir = 0
for line in open(sys.argv[1]):
    if line.startswith('summary:') or line.startswith('totals:'):
        ir = int(line.split()[1])
j = json.load(open(sys.argv[2]))
t = j['totals']
# Per packet handled: sent, or dropped by the policy (its work); any other drop is reported.
reasons = {k: v for k, v in t.get('dropped_by_reason', {}).items() if v and k != 'policy'}
if reasons:
    print('dropped packets: %s' % reasons, file=sys.stderr)
print('%.2f' % (ir / (t['tx_packets'] + t['dropped'])))
PY
)
  simd_of[$1]=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['simd'])" "$tmp/$1.json")
}
declare -A simd_of
if [[ -n "$only" ]]; then
  for path in $only; do
    [[ -f "$tmp/$path.yaml" ]] || { echo "--paths: no path \`$path\` here" >&2; exit 2; }
    measure "$path"
    echo "$path ${ipp[$path]}"
  done
  exit 0
fi
if [[ -n "$check$bless" ]]; then
  # The guard: these paths, against the baseline, each at most 1% dearer.
  guard=(io macswap 5tswap plugin plugin_sticky plugin_1_0 chain1 wasm_macswap acl acl_pass dnat dscp_remark \
    l4_lb ratelimit firewall vxlan_decap_wasm vxlan_encap_wasm acl_c acl_zig acl_as vxlan_decap vxlan_encap)
  for path in "${guard[@]}"; do measure "$path"; done
  simd=${simd_of[io]}
  if [[ -n "$bless" ]]; then
    {
      echo "# bench/instructions.sh --check: instructions per packet of each guarded path, 1% allowed."
      echo "# Written by --bless; change it only in a commit that says why the figures moved."
      echo "simd $simd"
      for path in "${guard[@]}"; do echo "$path ${ipp[$path]}"; done
    } >"$bless"
    echo "wrote $bless"
    exit 0
  fi
  python3 - "$check" "$simd" $(for p in "${guard[@]}"; do echo "$p=${ipp[$p]}"; done) <<'PY'
import sys
base_file, simd = sys.argv[1], sys.argv[2]
now = dict(a.split('=', 1) for a in sys.argv[3:])
base, base_simd = {}, None
for line in open(base_file):
    if line.startswith('#') or not line.strip():
        continue
    k, v = line.split()
    if k == 'simd':
        base_simd = v
    else:
        base[k] = float(v)
if base_simd != simd:
    sys.exit(f"{base_file} was measured with the {base_simd} kernels and this machine runs {simd}: "
             "the counts do not compare; bless a baseline on this kind of machine")
bad = []
print('%-20s %10s %10s %8s' % ('path', 'baseline', 'now', 'change'))
for k, b in base.items():
    if k not in now:
        bad.append(f"{k}: in the baseline, not measured")
        continue
    n = float(now[k])
    change = (n - b) / b * 100
    print('%-20s %10.2f %10.2f %+7.2f%%%s' % (k, b, n, change, '  <-- over 1%' if change > 1 else ''))
    if change > 1:
        bad.append(f"{k}: {b:.2f} -> {n:.2f} ({change:+.2f}%)")
for k in now:
    if k not in base:
        bad.append(f"{k}: measured, not in the baseline (bless it)")
if bad:
    sys.exit("instructions per packet over the baseline's 1%:\n  " + "\n  ".join(bad))
print('every guarded path within 1% of', base_file)
PY
  exit $?
fi
printf '%-24s %12s  %s\n' path instr/pkt "ratio to baseline (baseline)"
rows=(io:)
if [[ -n "$user" ]]; then
  rows+=("plugin_user:io")
  [[ -n "$native" ]] && rows+=("native_user:io" "plugin_user:native_user")
else
  rows+=(macswap: plugin:macswap plugin_1_0:macswap chain1:io chain2:chain1 chain4:chain1 wasm_macswap:macswap wasm_macswap_native:macswap \
  wasm_macswap:wasm_macswap_native acl_native:io acl:acl_native acl_pass_native:io acl_pass:acl_pass_native \
  acl_c:acl acl_zig:acl acl_as:acl acl_pass_c:acl_pass acl_pass_zig:acl_pass acl_pass_as:acl_pass dnat_native:io dnat:dnat_native dscp_remark_native:io \
  dscp_remark:dscp_remark_native l4_lb_native:io l4_lb:l4_lb_native \
  ratelimit_native:io ratelimit:ratelimit_native firewall:io firewall_io:io firewall:firewall_io vxlan_decap: vxlan_decap_wasm:vxlan_decap \
  vxlan_decap_wasm_native:vxlan_decap vxlan_decap_wasm:vxlan_decap_wasm_native vxlan_encap: \
  vxlan_encap_wasm:vxlan_encap vxlan_encap_wasm_native:vxlan_encap vxlan_encap_wasm:vxlan_encap_wasm_native)
fi
for row in "${rows[@]}"; do
  path=${row%%:*} base=${row#*:}
  [[ -n "$filter" && "$path" != *"$filter"* && "$base" != *"$filter"* ]] && continue
  [[ -n "${ipp[$path]:-}" ]] || measure "$path"
  if [[ -n "$base" ]]; then
    [[ -n "${ipp[$base]:-}" ]] || measure "$base"
    ratio=$(python3 -c "print('%.2f' % (${ipp[$base]} / ${ipp[$path]}))")
    printf '%-24s %12s  %s (%s)\n' "$path" "${ipp[$path]}" "$ratio" "$base"
  else
    printf '%-24s %12s\n' "$path" "${ipp[$path]}"
  fi
done
