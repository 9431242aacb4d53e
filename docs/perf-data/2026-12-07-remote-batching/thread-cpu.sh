#!/usr/bin/env bash
# Per-thread CPU per append of one replicated subject run alone (the tables of README.md):
#   docs/perf-data/2026-12-07-remote-batching/thread-cpu.sh SUBJECT [SIZE] [SLICE] [SEND_BATCHING_US]
# e.g. thread-cpu.sh remote-append-async 40 100000 20 ; thread-cpu.sh replicated-async 40 100000
# Reads /proc/<pid>/task/*/stat (utime, stime, minflt) every 0.3 s while both nodes' duty threads exist and prints the
# last such sample divided by the appends the run made (warm-up rounds included): CPU ns per append per thread.
set -euo pipefail
subject=$1; size=${2:-40}; slice=${3:-100000}; batching=${4:-20}; rounds=40; warmup=5
root="$(cd "$(dirname "$0")/../../.." && pwd)"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
trap 'echo "thread-cpu.sh: line $LINENO failed (exit $?); the run printed:" >&2; cat "$out/run.txt" >&2 2>/dev/null || true' ERR
"$root/bin/qe" ratios --replicated --only "$subject" --sizes "$size" --rounds $rounds --warmup-rounds $warmup \
  --slice "$slice" --send-batching-us "$batching" > "$out/run.txt" 2>&1 &
qe=$!
jvm=""
for _ in $(seq 600); do jvm=$(pgrep -P $qe java || true); [[ -n "$jvm" ]] && break; sleep 0.1; done
[[ -n "$jvm" ]] || { echo "no JVM under $qe" >&2; exit 1; }
hz=$(getconf CLK_TCK)
while kill -0 "$jvm" 2>/dev/null; do
  snap=$(for t in /proc/$jvm/task/*; do n=$(cat "$t/comm" 2>/dev/null || true); s=($(sed 's/^.*) //' "$t/stat" 2>/dev/null || true))
         [[ -n "$n" && ${#s[@]} -gt 12 ]] && echo "$n|${s[11]}|${s[12]}|${s[7]}"; done; true)  # a thread may end mid-read
  [[ $(grep -c '^qe-replication' <<<"$snap") -ge 2 ]] && echo "$snap" > "$out/last"
  sleep 0.3
done
wait $qe || true
grep median "$out/run.txt"
python3 - "$out/last" $(( (rounds + warmup) * slice )) "$hz" <<'P'
import sys
path, n, hz = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rows = [l.rstrip('\n').split('|') for l in open(path)]
ns = lambda ticks: int(ticks) * 1e9 / hz / n
total = 0
for name, u, s, faults in sorted(rows, key=lambda r: -(int(r[1]) + int(r[2]))):
    t = ns(u) + ns(s); total += t
    if t >= 30:
        print("  %-16s %6.0f ns per append (user %5.0f, kernel %5.0f), %5.1f minor faults per 1,000 appends"
              % (name, t, ns(u), ns(s), int(faults) * 1000 / n))
print("  all threads %6.0f ns per append" % total)
P
