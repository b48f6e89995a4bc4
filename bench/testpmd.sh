# Sourced by the scripts that compare with testpmd. testpmd_run_mpps runs dpdk-testpmd with the given arguments for $secs seconds of
# forwarding (timed from its "forwards packets on" line, so EAL start-up is not counted), stops it
# with SIGINT and prints its Mpps: the accumulated TX packets over the forwarding time. That time
# ends when testpmd stops its cores, not at the SIGINT: testpmd notices the signal only at the end
# of its 1 s stats sleep, and these sleeps start with the forwarding, so it forwarded nearly 1 s
# more than $secs (3 s timed to the SIGINT read 42 Mpps where 31.6 were forwarded per second, +33%).
# It ends when "Telling cores to stop" reaches the log (flushed with the statistics right after the
# cores stopped; polled every 10 ms).
# TESTPMD_COUNT=handled counts the accumulated RX packets less TX-dropped instead: the packets sent
# or dropped by an RX callback (an rte_bpf filter's drops never reach TX, yet are its work).
# Needs $tmp (a scratch folder) and $secs. usage: testpmd_run_mpps EAL-AND-APP-ARGS...
testpmd_run_mpps() {
  local log=$tmp/testpmd.log
  dpdk-testpmd "$@" >"$log" 2>&1 &
  local pid=$!
  until grep -q "forwards packets on" "$log" 2>/dev/null; do
    kill -0 $pid 2>/dev/null || { echo "dpdk-testpmd exited early:" >&2; tail -5 "$log" >&2; return 1; }
    sleep 0.01
  done
  local t0 t1 tx n=0
  t0=$(date +%s.%N)
  sleep "$secs"
  kill -INT $pid
  until grep -q "Telling cores to stop" "$log" 2>/dev/null; do
    kill -0 $pid 2>/dev/null || break
    sleep 0.01
    n=$((n + 1))
    # A SIGINT was once seen lost (testpmd forwarding on for minutes): sent again every 2 s.
    [ $((n % 200)) != 0 ] || kill -INT $pid 2>/dev/null || true   # it may have just exited
    [ $n -lt 3000 ] || { kill -KILL $pid; echo "dpdk-testpmd did not stop in 30 s" >&2; return 1; }
  done
  t1=$(date +%s.%N)
  wait $pid || true
  if [ "${TESTPMD_COUNT:-tx}" = handled ]; then
    tx=$(grep -A2 "Accumulated forward statistics" "$log" | awk '/RX-packets/ {rx = $2} /TX-packets/ {print rx - $4}')
  else
    tx=$(grep -A2 "Accumulated forward statistics" "$log" | awk '/TX-packets/ {print $2}')
  fi
  echo "$tx $t0 $t1" | awk '{printf "%.3f\n", $1 / ($3 - $2) / 1e6}'
}

# Instructions per packet of testpmd's forwarding, under valgrind's callgrind: the instructions of its
# forwarding lcore thread over the packets handled (RX less TX-dropped: sent, or dropped by an RX
# callback), after forwarding for $cg_secs seconds. testpmd is stripped in Debian, so the thread is
# counted rather than a function: --separate-threads=yes, the busiest thread other than the main one
# (the EAL launch loop around the forwarding function adds ~50k instructions in all).
# TESTPMD_TOGGLE=FUNCTION also toggles collection on the forwarding function: run_pkt_fwd_on_lcore
# in a testpmd with symbols; '0x0000000000084e10', its offset as callgrind names it, in Debian's
# 22.11.11 build (the same count to 0.01 instruction a packet).
# Needs $cg_secs. usage: testpmd_callgrind_ipp OUT-FILE LOG-FILE EAL-AND-APP-ARGS...
# Prints: instructions/packet, instructions, packets handled.
testpmd_callgrind_ipp() {
  local out=$1 log=$2
  shift 2
  local toggle=()
  [ -n "${TESTPMD_TOGGLE:-}" ] && toggle=(--toggle-collect="$TESTPMD_TOGGLE")
  # --fair-sched: else the spinning forwarding thread starves the main one (it could not stop it).
  valgrind --tool=callgrind --fair-sched=yes --separate-threads=yes --callgrind-out-file="$out" "${toggle[@]}" \
    dpdk-testpmd "$@" >"$log" 2>&1 &
  local pid=$! waited=0
  until grep -q "forwards packets on" "$log" 2>/dev/null; do
    kill -0 $pid 2>/dev/null || { echo "valgrind dpdk-testpmd exited early:" >&2; tail -5 "$log" >&2; exit 1; }
    sleep 0.1; waited=$((waited + 1))
    [ $waited -lt 3000 ] || { kill -INT $pid; echo "testpmd under valgrind did not start in 300 s" >&2; exit 1; }
  done
  sleep "$cg_secs"
  kill -INT $pid
  waited=0   # stopping under valgrind takes about 15 s; SIGINT again every 10 s, at most 2 minutes
  while kill -0 $pid 2>/dev/null; do
    sleep 0.1; waited=$((waited + 1))
    [ $((waited % 100)) != 0 ] || kill -INT $pid 2>/dev/null || true   # it may have just exited
    [ $waited -lt 1200 ] || { kill -KILL $pid; echo "testpmd under valgrind did not stop" >&2; exit 1; }
  done
  wait $pid || true
  python3 - "$out" "$log" <<'PY'
import glob, re, sys
out, log = sys.argv[1:3]
tot = {}
for f in glob.glob(out + '-*'):
    for line in open(f):
        if line.startswith('totals:'):
            tot[f] = int(line.split()[1])
main = out + '-01'
worker = max((f for f in tot if f != main), key=tot.get)
text = open(log).read().split('Accumulated forward statistics')[-1]
rx = int(re.search(r'RX-packets:\s+(\d+)', text).group(1))
txd = int(re.search(r'TX-dropped:\s+(\d+)', text).group(1))
print('%.2f %d %d' % (tot[worker] / (rx - txd), tot[worker], rx - txd))
PY
}
