#!/usr/bin/env bash
# --shard I/N (docs/kubernetes.md "Sharding"): three shards of a 7-node spec are disjoint and
# together the whole spec, each the k-th nodes with k mod 3 = I (the rule, checked against the
# spec's order as `clusterspec list` prints it); auto/N takes I from the host name; a served
# shard renders, steps and shows only its nodes (/debug/nodes, /metrics, the root's segments,
# hwemu exec); bad shards are refused with the reason.
# Usage: test_shard.sh HWEMU_BINARY   (run from the source tree)
set -u
hwemu=$1
py=/usr/bin/python3
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill -9 $pid 2>/dev/null; rm -rf "$tmp"' EXIT
cat >"$tmp/spec.yaml" <<'EOF'
apiVersion: sim.joulie.io/v1alpha1
kind: ClusterSpec
metadata: {name: sharded}
spec:
  pools:
  - {name: intel, profile: intel-xeon-2s-rapl, count: 3}
  - {name: amd, profile: amd-epyc-2s-hsmp, count: 2}
  - {name: vm, profile: vm-no-powercap, count: 2}
EOF
S=(--spec "$tmp/spec.yaml")

"$hwemu" clusterspec list "${S[@]}" | awk '{print $1}' >"$tmp/all"
[ "$(wc -l <"$tmp/all")" = 7 ] && ok || bad "the spec lists $(wc -l <"$tmp/all") nodes, not 7"
for i in 0 1 2; do
    "$hwemu" clusterspec list "${S[@]}" --shard $i/3 | awk '{print $1}' >"$tmp/s$i" || bad "list --shard $i/3 failed"
    # the rule: the k-th node of the whole list (from 0) when k mod 3 = i
    awk -v i=$i '(NR - 1) % 3 == i' "$tmp/all" | cmp -s - "$tmp/s$i" && ok || bad "shard $i/3: $(tr '\n' ' ' <"$tmp/s$i")"
done
[ "$(cat "$tmp/s0" "$tmp/s1" "$tmp/s2" | sort | uniq -d | wc -l)" = 0 ] && ok || bad "shards overlap"
cat "$tmp/s0" "$tmp/s1" "$tmp/s2" | sort | cmp -s - <(sort "$tmp/all") && ok || bad "the shards' union is not the spec"
HOSTNAME=hwemu-2 "$hwemu" clusterspec list "${S[@]}" --shard auto/3 | awk '{print $1}' | cmp -s - "$tmp/s2" \
    && ok || bad "auto/3 on hwemu-2 is not shard 2"
SIM_SHARD=1/3 "$hwemu" clusterspec list "${S[@]}" | awk '{print $1}' | cmp -s - "$tmp/s1" && ok || bad "SIM_SHARD"
"$hwemu" clusterspec render-nodes "${S[@]}" --shard 0/3 | grep -c '^kind: Node' | grep -qx "$(wc -l <"$tmp/s0")" \
    && ok || bad "render-nodes --shard 0/3"

# Refused, with the reason.
chk() { # EXPECTED-TEXT ARGS...
    local want=$1 out rc
    shift
    out=$("$@" 2>&1); rc=$?
    [ $rc = 2 ] && grep -qF -- "$want" <<<"$out" && ok || bad "$* -> rc=$rc: $out"
}
chk 'is not a shard: I/N with 0 <= I < N' "$hwemu" clusterspec list "${S[@]}" --shard 3/3
chk 'is not a shard' "$hwemu" clusterspec list "${S[@]}" --shard 1
chk 'is not a shard' "$hwemu" clusterspec list "${S[@]}" --shard x/3
chk 'does not end in -I' env HOSTNAME=engine "$hwemu" clusterspec list "${S[@]}" --shard auto/3
chk 'there are only 3 shards' env HOSTNAME=hwemu-3 "$hwemu" clusterspec list "${S[@]}" --shard auto/3
out=$("$hwemu" serve "${S[@]}" --root "$tmp/none" --addr 127.0.0.1:0 --shard 7/8 2>&1); rc=$?
[ $rc = 1 ] && grep -q "shard 7/8 has no node: the spec has 7 nodes" <<<"$out" && ok || bad "empty shard: rc=$rc $out"

# A served shard: only its nodes.
port=$(free_port)
url=http://127.0.0.1:$port
serve_start "$url" "$tmp/serve.err" "${S[@]}" --root "$tmp/r" --addr 127.0.0.1:$port --tick 200ms --shard 1/3 \
    || { bad "serve --shard 1/3 did not come up: $(cat "$tmp/serve.err")"; finish; }
grep -q "shard 1/3: 2 of the spec's 7 nodes" "$tmp/serve.err" && ok || bad "start line: $(cat "$tmp/serve.err")"
curl -s "$url/debug/nodes" | "$py" -c 'import json,sys; print("\n".join(n["node"] for n in json.load(sys.stdin)["nodes"]))' \
    | sort | cmp -s - <(sort "$tmp/s1") && ok || bad "/debug/nodes: $(curl -s "$url/debug/nodes" | head -c 300)"
m=$(curl -s "$url/metrics" | grep -o 'node="[^"]*"' | sort -u | sed 's/node="\(.*\)"/\1/')
[ "$m" = "$(sort "$tmp/s1")" ] && ok || bad "/metrics names nodes $(echo $m)"
ls "$tmp/r" | grep '\.seg$' | sed 's/\.seg$//' | sort | cmp -s - <(sort "$tmp/s1") && ok || bad "segments: $(ls "$tmp/r")"
sleep 0.5 # past the first ticks
e1=$(curl -s "$url/telemetry/intel-1" | "$py" -c 'import json,sys; print(json.load(sys.stdin)["energyJoules"])')
sleep 0.5
e2=$(curl -s "$url/telemetry/intel-1" | "$py" -c 'import json,sys; print(json.load(sys.stdin)["energyJoules"])')
"$py" -c "import sys; sys.exit(0 if $e2 > $e1 > 0 else 1)" && ok || bad "intel-1 energy did not advance: $e1 -> $e2"
code=$(curl -s -o /dev/null -w '%{http_code}' "$url/telemetry/intel-0")
[ "$code" = 404 ] && ok || bad "another shard's node answered $code"
"$hwemu" exec --root "$tmp/r" --node intel-1 -- true && ok || bad "exec on the shard's node"
out=$("$hwemu" exec --root "$tmp/r" --node intel-0 -- true 2>&1) && bad "exec on another shard's node ran" || ok
kill $pid; wait $pid; pid=
finish
