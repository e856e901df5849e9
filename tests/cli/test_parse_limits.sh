#!/usr/bin/env bash
# Parsers linear in their input, limits checked while parsing (engine/model/ytree.c): generated
# hostile specs fail or pass with a clear message: 100k nested flow sequences in 200 KB, 100k
# nested flow mappings, 100k labels (accepted), 100k labels and one duplicate (the duplicate
# named), an alias bomb. Each run is bounded by `timeout 20` (a hang fails the test); the
# seconds each took are printed for the record, never asserted.
# Usage: test_parse_limits.sh HWEMU_BINARY   (run from the source tree)
set -u
hwemu=$1
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
/usr/bin/python3 - "$tmp" <<'PY'
import sys
d, n = sys.argv[1], 100000
head = "apiVersion: sim.joulie.io/v1alpha1\nkind: ClusterSpec\nmetadata: {name: t}\n"
pools = "  pools:\n  - {name: vm, profile: vm-no-powercap, count: 1}\n"
open(d + "/nest-seq.yaml", "w").write(head + "spec: " + "[" * n + "]" * n + "\n")
open(d + "/nest-map.yaml", "w").write(head + "spec: " + "{a: " * n + "x" + "}" * n + "\n")
labels = "".join('      l%d.example.com/k: "v%d"\n' % (i, i) for i in range(n))
open(d + "/labels.yaml", "w").write(head + "spec:\n  defaults:\n    labels:\n" + labels + pools)
open(d + "/dup.yaml", "w").write(head + "spec:\n  defaults:\n    labels:\n" + labels +
                                 '      l5.example.com/k: "again"\n' + pools)
bomb = "a0: &a0 [" + ", ".join(["x"] * 20) + "]\n"
for i in range(1, 12):
    bomb += "a%d: &a%d [%s]\n" % (i, i, ", ".join(["*a%d" % (i - 1)] * 20))
open(d + "/bomb.yaml", "w").write(head + "spec:\n  x:\n" + "".join("    " + l + "\n" for l in bomb.splitlines()))
PY
# run NAME EXPECTED_EXIT PATTERN: validate the spec, exit code and message checked, time printed.
run() {
    local name=$1 want=$2 pat=$3 t0 t1 rc
    t0=$(date +%s%N)
    timeout 20 "$hwemu" clusterspec validate --spec "$tmp/$name.yaml" >"$tmp/$name.out" 2>&1
    rc=$?
    t1=$(date +%s%N)
    printf '%s: %d ms (exit %d, %d bytes of input)\n' "$name" $(((t1 - t0) / 1000000)) $rc "$(stat -c %s "$tmp/$name.yaml")"
    [ $rc = "$want" ] && { [ -z "$pat" ] || grep -q -- "$pat" "$tmp/$name.out"; } && ok || bad "$name: exit $rc, $(head -c 400 "$tmp/$name.out")"
    [ "$(wc -l <"$tmp/$name.out")" -le 3 ] && ok || bad "$name: $(wc -l <"$tmp/$name.out") lines of messages"
}
run nest-seq 1 "nest-seq.yaml:4:71: the document nests deeper than 64 levels"
run nest-map 1 "nest-map.yaml:4:260: the document nests deeper than 64 levels"
run labels 0 ""
run dup 1 "dup.yaml:100007:7: duplicate key \"l5.example.com/k\" (first at line 12); remove one of them"
run bomb 1 "expands to more than 1000000 nodes (a recursive alias?)"

# An extends chain of 40 profiles: refused for the profiles with more than 32 above them and
# accepted for the others, the same whatever the file names (so whichever loads first): once
# with names ascending along the chain, once descending.
/usr/bin/python3 - "$tmp" <<'PY'
import os, sys
body = """description: A small test machine.
sources:
  doc: {kind: published, ref: "a data sheet"}
node:
  capacity: {src: "published:doc", cpu: 4, memoryKi: 1000000}
cpu:
  src: "published:doc"
  vendorID: GenuineIntel
  modelName: Test CPU
  sockets: 1
  coresPerSocket: 2
  threadsPerCore: 2
"""
for order in ("up", "down"):
    d = os.path.join(sys.argv[1], "chain-" + order)
    os.mkdir(d)
    for i in range(40):  # c00 is the root; c<i> extends c<i-1>
        name = "c%02d" % i if order == "up" else "c%02d" % (39 - i)
        parent = ("c%02d" % (i - 1) if order == "up" else "c%02d" % (40 - i)) if i else None
        with open(os.path.join(d, name + ".yaml"), "w") as f:
            f.write("schemaVersion: 1\nname: %s\n" % name + ("extends: %s\n" % parent if parent else "") + body)
PY
for order in up down; do
    "$hwemu" profiles list --profiles-dir "$tmp/chain-$order" >"$tmp/chain-$order.out" 2>"$tmp/chain-$order.err"
    echo "chain-$order: exit $?"
    grep -c "its extends chain has more than 32 profiles above it" "$tmp/chain-$order.err" >"$tmp/chain-$order.n"
done
# profiles 33..39 along the chain have 33..39 above them: 7 refused, the 33 others listed
[ "$(cat "$tmp/chain-up.n")" = 7 ] && ok || bad "chain up: $(cat "$tmp/chain-up.n") refused: $(head -3 "$tmp/chain-up.err")"
[ "$(cat "$tmp/chain-down.n")" = 7 ] && ok || bad "chain down: $(cat "$tmp/chain-down.n") refused: $(head -3 "$tmp/chain-down.err")"
grep -q "cycle" "$tmp"/chain-*.err && bad "a chain called a cycle: $(grep cycle "$tmp"/chain-*.err | head -2)" || ok
finish
