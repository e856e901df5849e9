#!/usr/bin/env bash
# fakesmi as rocm-smi and amd-smi against a running `hwemu serve` of tests/specs/gpu.yaml: the
# exact text of rocm-smi (90-column spacers, tabs, Python floats) and its one-line JSON, power
# caps set and reset by both tools and read back from hwmon, the power settling under a cap,
# the real refusals (above the maximum, the W7900's cap pinned at 241 W), the legacy variant's
# --showpowercap, argparse errors, amd-smi's JSON shapes, a set without root, and the same
# tools found on PATH through `hwemu exec`. Expected texts are in tests/fakesmi/amd/.
# Usage: test_fakesmi_amd.sh HWEMU_BINARY   (run from the source tree; fakesmi is the binary
# beside hwemu, or $HWEMU_FAKESMI)
set -u
hwemu=$1
fakesmi=${HWEMU_FAKESMI:-$(dirname "$hwemu")/fakesmi}
py=/usr/bin/python3
golden=tests/fakesmi/amd
. "$(dirname "$0")/lib.sh"
root=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill -9 $pid 2>/dev/null; rm -rf "$root"' EXIT
port=$(free_port)
url=http://127.0.0.1:$port
R=$root/r
TT=$'\t\t' # rocm-smi's GPU[n]<TAB><TAB>: prefix

[ -x "$fakesmi" ] || { bad "no fakesmi binary at $fakesmi"; finish; }
serve_start "$url" "$root/serve.err" --spec tests/specs/gpu.yaml --root "$R" --addr 127.0.0.1:$port --tick 200ms ||
    { bad "serve did not come up: $(cat "$root/serve.err")"; finish; }

# smi NODE TOOL ARGS...: the tool on NODE; stdout in $out, stderr in $err, exit code in $rc.
out=$root/out err=$root/err
smi() {
    local node=$1
    shift
    HWEMU_ROOT=$R HWEMU_NODE=$node "$fakesmi" "$@" >"$out" 2>"$err" </dev/null
    rc=$?
}
cat_node() { "$hwemu" cat --root "$R" --node "$1" "$2"; }
# same FILE TEXT: does the file hold exactly TEXT (printf format)?
same() { cmp -s "$1" <(printf "$2"); }
# json EXPR: EXPR over the JSON document in $out, printed by Python.
json() { "$py" -c "import json,sys; d=json.load(open('$out')); print($1)"; }
MI_CAP0=/sys/class/drm/card1/device/hwmon/hwmon2/power1_cap # GPU 0: card1, after the BMC's card0
MI_CAP1=/sys/class/drm/card2/device/hwmon/hwmon3/power1_cap
W79_CAP0=/sys/class/drm/card0/device/hwmon/hwmon2/power1_cap
W79_LEVEL0=/sys/class/drm/card0/device/power_dpm_force_performance_level

# --- rocm-smi, current variant (mi300x-0: 8 MI300X, cap 0-750 W, power1_input) ---

smi mi300x-0 rocm-smi --showmaxpower
[ $rc -eq 0 ] && cmp -s "$out" $golden/rocm_showmaxpower.txt && [ ! -s "$err" ] && ok ||
    bad "--showmaxpower: rc=$rc $(diff "$out" $golden/rocm_showmaxpower.txt) $(cat "$err")"

smi mi300x-0 rocm-smi --showpower
sed 's/\(Power (W): \)[0-9]*\.[0-9]*$/\1<W>/' "$out" >"$root/framed"
[ $rc -eq 0 ] && cmp -s "$root/framed" $golden/rocm_showpower.txt && ok ||
    bad "--showpower framing: $(diff "$root/framed" $golden/rocm_showpower.txt)"
"$py" -c "
import sys
ws = [float(l.rsplit(': ', 1)[1]) for l in open('$out') if l.startswith('GPU[')]
sys.exit(0 if len(ws) == 8 and all(0 < w <= 750 for w in ws) else 1)" && ok || bad "--showpower values: $(cat "$out")"
# The value is power1_input in uW as a Python float: read both within one tick.
matched=0
for _ in $(seq 10); do
    uw=$(cat_node mi300x-0 /sys/class/drm/card1/device/hwmon/hwmon2/power1_input)
    smi mi300x-0 rocm-smi -d 0 -P
    want=$("$py" -c "print(repr($uw / 1000000))")
    grep -q "^GPU\[0\]$TT: Current Socket Graphics Package Power (W): $want\$" "$out" && { matched=1; break; }
done
[ $matched -eq 1 ] && ok || bad "-P is not power1_input/1e6 as a Python float: $uw -> $(cat "$out")"

smi mi300x-0 rocm-smi --showpower --showmaxpower --json
[ $rc -eq 0 ] && [ "$(wc -l <"$out")" -eq 1 ] && [ ! -s "$err" ] && ok || bad "--json is not one line: $(cat "$out" "$err")"
[ "$(json 'list(d) == ["card%d" % i for i in range(8)] and all(c["Max Graphics Package Power (W)"] == "750.0" and list(c) == ["Max Graphics Package Power (W)", "Current Socket Graphics Package Power (W)"] for c in d.values())')" = True ] &&
    ok || bad "--json content: $(cat "$out")"
grep -q '{"card0": {"Max Graphics Package Power (W)": "750.0", "Current Socket Graphics Package Power (W)": "[0-9.]*"}, "card1": ' "$out" &&
    ok || bad "--json separators: $(cat "$out")"

smi mi300x-0 rocm-smi -t -c -p -u -d 0 --json
[ "$(json 'sorted(d["card0"]) == sorted(["Temperature (Sensor edge) (C)", "Temperature (Sensor junction) (C)", "Temperature (Sensor memory) (C)", "mclk clock speed:", "mclk clock level:", "sclk clock speed:", "sclk clock level:", "Performance Level", "GPU use (%)"]) and d["card0"]["Performance Level"] == "auto"')" = True ] &&
    ok || bad "-t -c -p -u --json: $(cat "$out")"

smi mi300x-0 rocm-smi -d 0 --setpoweroverdrive 300
[ $rc -eq 0 ] && cmp -s "$out" $golden/rocm_set300.txt && [ ! -s "$err" ] && ok ||
    bad "--setpoweroverdrive 300: rc=$rc $(diff "$out" $golden/rocm_set300.txt) $(cat "$err")"
[ "$(cat_node mi300x-0 $MI_CAP0)" = 300000000 ] && ok || bad "power1_cap after set: $(cat_node mi300x-0 $MI_CAP0)"
settled=
for _ in $(seq 15); do
    smi mi300x-0 rocm-smi -d 0 --showpower
    w=$(sed -n "s/^GPU\[0\]$TT: Current Socket Graphics Package Power (W): //p" "$out")
    "$py" -c "import sys; sys.exit(0 if $w <= 300.0 else 1)" && { settled=$w; break; }
    sleep 0.2
done
[ -n "$settled" ] && ok || bad "-P did not settle under the 300 W cap within 3 s: $w"

smi mi300x-0 rocm-smi -d 0 --setpoweroverdrive 800
[ $rc -eq 0 ] && cmp -s "$out" $golden/rocm_set_refused.txt &&
    same "$err" 'ERROR: GPU[0]\t: Unable to set Power OverDrive\nERROR: GPU[0]\t\t: Value cannot be greater than: 750W \n' &&
    ok || bad "--setpoweroverdrive 800: rc=$rc $(cat "$out" "$err")"
[ "$(cat_node mi300x-0 $MI_CAP0)" = 300000000 ] && ok || bad "a refused set changed power1_cap"
smi mi300x-0 rocm-smi -d 0 --setpoweroverdrive 800 --loglevel error
[ $rc -eq 1 ] && ok || bad "--loglevel error keeps the failure's exit code: rc=$rc"

smi mi300x-0 rocm-smi --showpowercap
[ $rc -eq 2 ] && [ ! -s "$out" ] && head -c 20 "$err" | grep -q '^usage: rocm-smi \[-h\]' &&
    grep -q '^rocm-smi: error: unrecognized arguments: --showpowercap$' "$err" && ok ||
    bad "--showpowercap on the current variant: rc=$rc $(cat "$err")"
smi mi300x-0 rocm-smi --showp
[ $rc -eq 2 ] && grep -q '^rocm-smi: error: ambiguous option: --showp could match --showproductname, --showpagesinfo, ' "$err" &&
    ok || bad "ambiguous prefix: $(cat "$err")"
smi mi300x-0 rocm-smi --showprod -d 0 --json
[ "$(json 'd["card0"]["Card Series"] == "AMD Instinct MI300X" and d["card0"]["GFX Version"] == "gfx942"')" = True ] &&
    ok || bad "--showprod prefix: $(cat "$out" "$err")"
smi mi300x-0 rocm-smi -d 9 -P
[ $rc -eq 0 ] && [ ! -s "$out" ] && same "$err" 'WARNING: No such device card9\n' && ok || bad "-d 9: $(cat "$out" "$err")"
smi mi300x-0 rocm-smi --showfan
[ $rc -eq 2 ] && same "$err" 'fakesmi: rocm-smi option --showfan is not emulated\n' && ok || bad "--showfan: $(cat "$err")"

# --- rocm-smi, legacy-agent-contract variant (legacy-0) ---

smi legacy-0 rocm-smi --showpowercap --showproductname --json
[ $rc -eq 0 ] && [ "$(json 'len(d) == 8 and all(c["Max Graphics Package Power (W)"] == "750.0" and c["Min Graphics Package Power (W)"] == "0.0" and c["Current Power Cap (W)"] == "750.0" and 0 < float(c["Average Graphics Package Power (W)"]) <= 750 and c["Card SKU"] == "X0000000" for c in d.values())')" = True ] &&
    ok || bad "legacy --showpowercap: rc=$rc $(cat "$out" "$err")"

# --- The W7900 (cap pinned at 241 W; unprivileged rocm-smi sets do nothing) ---

smi w7900-0 rocm-smi -d 0 --setpoweroverdrive 200
[ $rc -eq 0 ] && grep -q "^ERROR: GPU\[0\]$TT: Value cannot be less than: 241W \$" "$err" && ok ||
    bad "W7900 --setpoweroverdrive 200: rc=$rc $(cat "$err")"
[ "$(cat_node w7900-0 $W79_CAP0)" = 241000000 ] && ok || bad "W7900 cap moved"
smi w7900-0 amd-smi set -g 0 -o ppt0 200
[ $rc -eq 0 ] && same "$out" 'GPU: 0\n    POWERCAP: Power cap must be between 241W and 241W\n\n' && ok ||
    bad "W7900 amd-smi set -o ppt0 200: rc=$rc $(cat "$out" "$err")"

HWEMU_UNPRIVILEGED=1 smi w7900-0 rocm-smi --setperflevel high
[ $rc -eq 0 ] && [ ! -s "$out" ] && [ ! -s "$err" ] && [ "$(cat_node w7900-0 $W79_LEVEL0)" = auto ] && ok ||
    bad "unprivileged --setperflevel: rc=$rc $(cat "$out" "$err") level $(cat_node w7900-0 $W79_LEVEL0)"
smi w7900-0 rocm-smi --setperflevel high -d 0
[ $rc -eq 0 ] && grep -q "^GPU\[0\]$TT: Performance level set to high\$" "$out" && [ "$(cat_node w7900-0 $W79_LEVEL0)" = high ] &&
    ok || bad "--setperflevel high: rc=$rc $(cat "$out" "$err") level $(cat_node w7900-0 $W79_LEVEL0)"
sleep 0.5 # the level stays after the ticks that follow the write
smi w7900-0 rocm-smi --showperflevel -d 0 1
[ "$(grep '^GPU' "$out")" = "$(printf 'GPU[0]\t\t: Performance Level: high\nGPU[1]\t\t: Performance Level: auto')" ] &&
    ok || bad "--showperflevel: $(cat "$out")"

# --- amd-smi 7.2 (mi300x-0) ---

smi mi300x-0 amd-smi reset -g 0 -o
[ $rc -eq 0 ] && same "$out" 'GPU: 0\n    POWERCAP:\n        PPT0: Successfully reset power cap to 750W\n        PPT1: [AMDSMI_STATUS_NOT_SUPPORTED] Unable to reset to default power cap\n\n' &&
    [ "$(cat_node mi300x-0 $MI_CAP0)" = 750000000 ] && ok || bad "reset -o: rc=$rc $(cat "$out" "$err")"
smi mi300x-0 amd-smi set -g 0 -o ppt0 300
[ $rc -eq 0 ] && same "$out" 'GPU: 0\n    POWERCAP: Successfully set PPT0 power cap to 300W\n\n' &&
    [ "$(cat_node mi300x-0 $MI_CAP0)" = 300000000 ] && ok || bad "set -o ppt0 300: rc=$rc $(cat "$out" "$err")"
smi mi300x-0 amd-smi set -g 0 -o PPT0 300 --json
[ $rc -eq 0 ] && same "$out" '[\n    {\n        "gpu": 0,\n        "powercap": "PPT0 power cap is already set to 300W"\n    }\n]\n' &&
    ok || bad "set --json: $(cat "$out" "$err")"
smi mi300x-0 amd-smi set -g 0 -o 300
[ $rc -eq 2 ] && grep -q '^amd-smi set: error: argument -o/--power-cap: expected 2 arguments$' "$err" && ok ||
    bad "7.2 -o with one value: rc=$rc $(cat "$err")"
smi mi300x-0 amd-smi set -g 0 -o ppt2 300
[ $rc -eq 1 ] && same "$err" "amdsmi_cli_exceptions.AmdSmiInvalidParameterException: Parameter 'ppt2' is invalid. Run 'amd-smi set -h' for more info. Error code: -2\n" &&
    ok || bad "ppt2: rc=$rc $(cat "$err")"
HWEMU_UNPRIVILEGED=1 smi mi300x-0 amd-smi set -g 1 -o ppt0 400
[ $rc -eq 1 ] && [ ! -s "$out" ] && cmp -s "$err" $golden/amd_no_perm.txt && [ "$(cat_node mi300x-0 $MI_CAP1)" = 750000000 ] &&
    ok || bad "unprivileged set: rc=$rc $(cat "$out" "$err")"

smi mi300x-0 amd-smi static --limit --json
[ $rc -eq 0 ] && [ "$(json 'list(d) == ["gpu_data"] and [g["gpu"] for g in d["gpu_data"]] == list(range(8)) and d["gpu_data"][0]["limit"]["ppt0"] == {"max_power_limit": {"value": 750, "unit": "W"}, "min_power_limit": {"value": 0, "unit": "W"}, "socket_power_limit": {"value": 300, "unit": "W"}} and d["gpu_data"][0]["limit"]["ppt1"]["max_power_limit"] == "N/A"')" = True ] &&
    ok || bad "static --limit --json: rc=$rc $(cat "$out" "$err")"
smi mi300x-0 amd-smi static --limit --json -g 2
cmp -s "$out" $golden/amd_static_limit_g2.json && ok || bad "static --limit --json -g 2: $(diff "$out" $golden/amd_static_limit_g2.json)"
smi mi300x-0 amd-smi static --limit -g 2
cmp -s "$out" $golden/amd_static_limit_g2.txt && ok || bad "static --limit -g 2: $(diff "$out" $golden/amd_static_limit_g2.txt)"

smi mi300x-0 amd-smi metric -p --json
[ $rc -eq 0 ] && [ "$(json 'len(d["gpu_data"]) == 8 and all(0 < g["power"]["socket_power"]["value"] <= 750 and g["power"]["socket_power"]["unit"] == "W" and g["power"]["throttle_status"] == "N/A" for g in d["gpu_data"])')" = True ] &&
    ok || bad "metric -p --json: $(cat "$out" "$err")"
smi mi300x-0 amd-smi metric --power -g 2 3
sed 's/\(SOCKET_POWER: \)[0-9]* W$/\1<W> W/' "$out" >"$root/framed"
cmp -s "$root/framed" $golden/amd_metric_power_g23.txt && ok || bad "metric --power: $(diff "$root/framed" $golden/amd_metric_power_g23.txt)"

smi mi300x-0 amd-smi list -g 0 1
cmp -s "$out" $golden/amd_list_g01.txt && ok || bad "list -g 0 1: $(diff "$out" $golden/amd_list_g01.txt)"
smi mi300x-0 amd-smi list --json
[ "$(json '[(g["gpu"], g["bdf"], g["node_id"], g["partition_id"]) for g in d] == [(i, "0000:%02x:00.0" % (0x10 + i), i + 1, 0) for i in range(8)]')" = True ] &&
    ok || bad "list --json: $(cat "$out" "$err")"

# --- amd-smi 7.1 (legacy-0) ---

smi legacy-0 amd-smi set -g 0 -o 300
[ $rc -eq 0 ] && same "$out" 'GPU: 0\n    POWERCAP: Successfully set power cap to 300W\n\n' && ok || bad "7.1 set -o 300: $(cat "$out" "$err")"
smi legacy-0 amd-smi set -g 0 -o ppt0 300
[ $rc -eq 1 ] && grep -q "^amdsmi_cli_exceptions.AmdSmiInvalidParameterValueException: Value 'ppt0' is not of valid type or format. Run 'amd-smi set -h' for more info. Error code: -5$" "$err" &&
    ok || bad "7.1 -o ppt0: rc=$rc $(cat "$err")"
smi legacy-0 amd-smi static --limit --json -g 0
[ "$(json 'd["gpu_data"][0]["limit"]["socket_power"] == {"value": 300, "unit": "W"} and list(d["gpu_data"][0]["limit"])[:3] == ["max_power", "min_power", "socket_power"]')" = True ] &&
    ok || bad "7.1 static --limit: $(cat "$out")"
smi legacy-0 amd-smi reset -g 0 -o
same "$out" 'GPU: 0\n    POWERCAP: Successfully set power cap to 750W\n\n' && ok || bad "7.1 reset -o: $(cat "$out" "$err")"

# --- Through hwemu exec: the node's tools first on PATH ---

o=$(HWEMU_FAKESMI=$fakesmi "$hwemu" exec --root "$R" --node mi300x-0 -- rocm-smi -d 1 --showmaxpower 2>&1)
grep -q "^GPU\[1\]$TT: Max Graphics Package Power (W): 750.0\$" <<<"$o" && ok || bad "rocm-smi through hwemu exec: $o"
o=$(HWEMU_FAKESMI=$fakesmi "$hwemu" exec --root "$R" --node w7900-0 -- amd-smi list -g 0 2>&1)
grep -q '^    BDF: 0000:10:00.0$' <<<"$o" && ok || bad "amd-smi through hwemu exec: $o"

# A run's cost is bench/fakesmi_bench.sh's to measure (a timed check here fails on a loaded machine).

finish
