#!/usr/bin/env python3
"""Shares of a JFR recording's execution samples, as the README quotes them.

  QE_JAVA_OPTS="-XX:StartFlightRecording=filename=/tmp/remote.jfr,settings=profile" \
    bin/qe ratios --replicated --only remote-append-async --sizes 40 --rounds 60 --warmup-rounds 10 --slice 50000
  docs/perf-data/2026-12-07-append-batch/jfr-share.py /tmp/remote.jfr [METHOD ...]

Prints each thread's share of all samples, then for each METHOD (default: the writer sessions' catch-up and what
it read with) the share of all samples with that method anywhere on the stack, per thread. A sample counts once
per method however deep it recurses. JFR samples only threads running Java code, and attributes time in
intrinsic stubs to a nearby frame: read shares as where to look, and confirm with a ratio run.
"""
import collections
import re
import subprocess
import sys

DEFAULT = ["io.queueenterprise.replication.client.WriterSessions.catchUp",
           "io.queueenterprise.queue.ReplicaStore$RawTailer.next",
           "io.queueenterprise.queue.ReplicaWriteFeed.read"]

recording = sys.argv[1]
methods = sys.argv[2:] or DEFAULT
text = subprocess.run(["jfr", "print", "--events", "jdk.ExecutionSample", "--stack-depth", "64", recording],
                      check=True, capture_output=True, text=True).stdout
threads = collections.Counter()
hits = collections.Counter()
total = 0
for event in text.split("jdk.ExecutionSample")[1:]:
    frames = {re.sub(r"\(.*", "", f) for f in re.findall(r"^\s+([\w.$<>]+\(.*?\))\s+line:", event, re.M)}
    if not frames:
        continue
    match = re.search(r'sampledThread = "([^"]*)"', event)
    thread = match.group(1) if match else "?"
    total += 1
    threads[thread] += 1
    for m in methods:
        if m in frames:
            hits[(m, thread)] += 1
print("%d samples" % total)
for thread, n in threads.most_common(6):
    print("  %5.1f %%  %s" % (100.0 * n / total, thread))
for m in methods:
    for (method, thread), n in sorted(hits.items()):
        if method == m:
            print("  %5.1f %%  %s on %s" % (100.0 * n / total, m.rsplit(".", 2)[-2] + "." + m.rsplit(".", 1)[-1], thread))
