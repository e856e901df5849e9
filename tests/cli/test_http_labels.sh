#!/usr/bin/env bash
# Run-time labels in linear time with limits (issue 25 item 3, docs/http-api.md "Labels"): on
# main a PUT of 30,000 keys took 11 s with energy_uj frozen, and 100,000 keys stopped the ticks
# for 15 minutes. Now:
# - 30,000 keys (about 0.5 MB, under the 1 MiB body cap) are refused with 413 in well under 2 s
#   while the node's energy_uj keeps advancing; 100,000 keys (1.5 MB) are 413 by size;
# - RUN_LABELS_MAX (1,024) labels of the longest key Kubernetes allows are stored, the GET is
#   fast and lists them all; one more is 413 and changes nothing; replacing and removing work;
# - the key and value limits are Kubernetes' (k8s.io/apimachinery validation: a qualified name
#   of at most 63 characters with an optional DNS-1123 subdomain prefix of at most 253, values at
#   most 63): 253 + '/' + 63 = 317 is accepted, one more character anywhere is 400;
# - null removes a spec label (joulie.io/managed, from specs/smoke.yaml's defaults) and a
#   removed run-time key does not count against the limit.
# Usage: test_http_labels.sh HWEMU_BINARY   (run from the source tree)
set -u
hwemu=$(realpath "$1")
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d /tmp/hwemu-labels.XXXXXX)
pid=
trap '[ -n "$pid" ] && kill -9 $pid 2>/dev/null; rm -rf "$tmp"' EXIT
port=$(free_port)
url=http://127.0.0.1:$port
serve_start "$url" "$tmp/err" --root "$tmp/root" --addr 127.0.0.1:$port --tick 50ms || {
    bad "serve: $(cat "$tmp/err")"
    finish
}
energy() { "$hwemu" cat --node "$1" --root "$tmp/root" /sys/class/powercap/intel-rapl:0/energy_uj; }
# put NODE FILE: "CODE SECONDS" of a PUT of FILE (bounded: 60 s)
put() { curl -s --max-time 60 -o "$tmp/body" -w '%{http_code} %{time_total}' -X PUT --data-binary @"$2" \
    "$url/nodes/$1/labels"; }
gen() { # gen N KEYLEN FILE [PREFIX]: N distinct keys of KEYLEN characters (name part), value "v"
    python3 - "$@" <<'EOF'
import json, sys
n, klen, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
prefix = sys.argv[4] if len(sys.argv) > 4 else ""
keys = {}
for i in range(n):
    name = ("k%d" % i).ljust(klen, "x")  # digits then x: distinct, ends alphanumeric
    keys[prefix + name] = "v"
json.dump(keys, open(path, "w"), separators=(",", ":"))
EOF
}

# 1. 30,000 keys: 413 fast, and the node's energy keeps advancing across the request
gen 30000 6 "$tmp/30k.json"
e0=$(energy intel-0)
r=$(put intel-0 "$tmp/30k.json")
e1=$(energy intel-0)
read -r c s <<<"$r"
[ "$c" = 413 ] && grep -q 'at most 1024 run-time labels' "$tmp/body" && ok || bad "30,000 keys: $r $(head -c 300 "$tmp/body")"
python3 -c "import sys; sys.exit(0 if float('$s') < 2 else 1)" && ok || bad "30,000 keys took $s s"
[ "$e1" -gt "$e0" ] && ok || bad "energy_uj did not advance across the 30,000-key request: $e0 -> $e1"
# 2. 100,000 keys, 1.5 MB: 413 by size
gen 100000 10 "$tmp/100k.json"
r=$(put intel-0 "$tmp/100k.json")
read -r c s <<<"$r"
[ "$c" = 413 ] && grep -q 'larger than 1024 KiB' "$tmp/body" && ok || bad "100,000 keys: $r $(head -c 300 "$tmp/body")"
python3 -c "import sys; sys.exit(0 if float('$s') < 2 else 1)" && ok || bad "100,000 keys took $s s"
[ "$(curl -s "$url/healthz")" = ok ] && ok || bad "healthz after the big requests"

# 3. The limit's worth: 1,024 keys of 317 characters (253 prefix, '/', 63 name)
prefix=$(python3 -c 'print(("a." * 127)[:253])')/
gen 1024 63 "$tmp/1024.json" "$prefix"
e0=$(energy intel-0)
r=$(put intel-0 "$tmp/1024.json")
read -r c s <<<"$r"
[ "$c" = 200 ] && ok || bad "1,024 labels of 317 characters: $r $(head -c 300 "$tmp/body")"
python3 -c "import sys; sys.exit(0 if float('$s') < 2 else 1)" && ok || bad "1,024 labels took $s s"
t=$(curl -s -o "$tmp/get" -w '%{time_total}' "$url/nodes/intel-0/labels")
n=$(python3 -c 'import json,sys; l=json.load(open(sys.argv[1]))["labels"]; print(sum(1 for k in l if k.startswith(sys.argv[2])))' "$tmp/get" "$prefix")
[ "$n" = 1024 ] && ok || bad "GET lists $n of the 1,024 labels"
python3 -c "import sys; sys.exit(0 if float('$t') < 1 else 1)" && ok || bad "GET of 1,024 labels took $t s"
e1=$(energy intel-0)
[ "$e1" -gt "$e0" ] && ok || bad "energy_uj did not advance: $e0 -> $e1"
echo '{"one-more":"v"}' >"$tmp/one.json"
r=$(put intel-0 "$tmp/one.json")
[[ "$r" == "413 "* ]] && grep -q 'would hold 1025 run-time labels: at most 1024' "$tmp/body" && ok \
    || bad "label 1,025: $r $(cat "$tmp/body")"
curl -s "$url/nodes/intel-0/labels" | grep -q one-more && bad "label 1,025 was stored" || ok
# replacing one and removing one (null) then adding one: 200
k0=$(python3 -c 'import json,sys; print(next(iter(json.load(open(sys.argv[1])))))' "$tmp/1024.json")
printf '{"%s":"w","one-more":"v"}' "$k0" >"$tmp/repl.json"
r=$(put intel-0 "$tmp/repl.json")
[[ "$r" == "413 "* ]] && ok || bad "replace + add at the limit: $r"
printf '{"%s":null,"one-more":"v"}' "$k0" >"$tmp/swap.json"
r=$(put intel-0 "$tmp/swap.json")
[[ "$r" == "200 "* ]] && grep -q '"one-more":"v"' "$tmp/body" && ! grep -qF "\"$k0\"" "$tmp/body" && ok \
    || bad "remove one, add one at the limit: $r $(head -c 200 "$tmp/body")"

# 4. Kubernetes' key and value limits, on another node
node=sxm-nopm-0
lim() { # lim JSON CODE WHAT
    echo "$1" >"$tmp/l.json"
    local r
    r=$(put $node "$tmp/l.json")
    [[ "$r" == "$2 "* ]] && ok || bad "$3: $r $(head -c 200 "$tmp/body")"
}
p253=$(python3 -c 'print(("b." * 127)[:253])')
n63=$(python3 -c 'print("n" * 63)')
lim "{\"$p253/$n63\":\"$n63\"}" 200 "key of 253 + 1 + 63 characters, value of 63"
lim "{\"${p253}c/$n63\":\"v\"}" 400 "prefix of 254"
lim "{\"$p253/${n63}n\":\"v\"}" 400 "name of 64"
lim "{\"k\":\"${n63}n\"}" 400 "value of 64"

# 5. null removes a spec label; a removed run-time key leaves the map
curl -s "$url/nodes/$node/labels" | grep -q '"joulie.io/managed"' && ok || bad "the spec label is missing"
lim '{"joulie.io/managed":null,"tmp":"x"}' 200 "remove a spec label"
grep -q '"joulie.io/managed"' "$tmp/body" && bad "the spec label still shows" || ok
lim '{"tmp":null}' 200 "remove a run-time label"
grep -q '"tmp"' "$tmp/body" && bad "the removed label still shows" || ok
kill $pid
wait $pid
pid=
finish
