#!/usr/bin/env bash
# `hwemu profiles`: every builtin loads and shows its facts with sources; a local profile
# that extends a builtin merges as profiles/README.md documents; usage errors exit 2.
# Usage: test_profiles.sh HWEMU_BINARY   (run from the source tree)
set -u
hwemu=$1
. "$(dirname "$0")/lib.sh"
expect_line() { # output, fixed string, what
    if grep -qF -- "$2" <<<"$1"; then ok; else bad "$3: no line '$2'"; fi
}

builtins="amd-epyc-2s-energy-only amd-epyc-2s-hsmp amd-epyc-9534-2s-energy-only intel-xeon-2s-rapl
intel-xeon-6530-2s-rapl intel-xeon6-2s-tpmi nvidia-h100-nvl-8gpu nvidia-h100-sxm-8gpu vm-no-powercap
nvidia-h100-sxm-4gpu nvidia-l40s-4gpu amd-instinct-mi300x-8gpu amd-radeon-pro-w7900-4gpu intel-flex-170-4gpu
amd-epyc-7763-2s-energy-only"
list=$("$hwemu" profiles list) || bad "profiles list failed"
for p in $builtins; do
    grep -q "^$p " <<<"$list" && ok || bad "profiles list lacks $p"
    out=$("$hwemu" profiles show "$p") || { bad "profiles show $p failed"; continue; }
    # Every fact line carries a source in brackets; a non-plain fact names a known kind.
    facts=$(grep -c ' = .*    \[' <<<"$out")
    [ "$facts" -gt 10 ] && ok || bad "$p shows only $facts facts"
    unsourced=$(grep ' = ' <<<"$out" | grep -v -E '    \[(plain|assumed:.+|published:.+|corpus:.+|measured:.+|derived:.+)\]$' || true)
    [ -z "$unsourced" ] && ok || bad "$p has fact lines without a valid source: $unsourced"
done

out=$("$hwemu" profiles show intel-xeon-2s-rapl)
expect_line "$out" "  cpu.modelName = Intel(R) Xeon(R) Platinum 8260 CPU @ 2.40GHz    [corpus:corpus#cpuinfo]" "8260 model"
expect_line "$out" "  physics.cpu.maxPkgW = 165    [published:ark8260]" "8260 TDP"
expect_line "$out" "  ark8260: published: Intel ARK, Xeon Platinum 8260, SKU 192474" "8260 sources"
out=$("$hwemu" profiles show nvidia-h100-sxm-8gpu)
expect_line "$out" "extends: nvidia-h100-nvl-8gpu" "sxm extends"
expect_line "$out" "  cpu.modelName = Intel(R) Xeon(R) Platinum 8260 CPU @ 2.40GHz    [corpus:corpus#cpuinfo]" "sxm keeps the CPU block"
out=$("$hwemu" profiles show amd-epyc-2s-energy-only)
expect_line "$out" "  physics.cpu.model = catalog-curve    [plain]" "9654 curve model"
expect_line "$out" "  physics.cpu.curveNodeW = [128, 257, 300, 340, 378, 410, 442, 498, 577, 697, 817]" "9654 curve"
out=$("$hwemu" profiles show intel-xeon6-2s-tpmi)
expect_line "$out" "limitBits = 18" "tpmi limitBits"

# A local profile extending a builtin.
out=$("$hwemu" profiles show lab-xeon --profiles-dir tests/corpus/profiles-good) || bad "show lab-xeon failed"
expect_line "$out" "file: tests/corpus/profiles-good/lab-xeon.yaml" "local file"
expect_line "$out" "  physics.cpu.idlePkgW = 35    [measured:labsheet#idle]" "child value and source win"
expect_line "$out" "  physics.cpu.maxPkgW = 165    [published:ark8260]" "parent value kept beside it"
expect_line "$out" "  cpufreq.governor = performance    [assumed:the lab runs the performance governor]" "child governor"
expect_line "$out" "  cpufreq.driver = intel_pstate    [corpus:corpus#cpufreq-driver]" "parent driver"
expect_line "$out" "  node.labels.lab: lab.example.com/room = b12" "child label group"
expect_line "$out" "  node.labels.cpu: kubernetes.io/arch = amd64" "parent label group"
expect_line "$out" "  labsheet: measured: lab power sheet" "child source"
expect_line "$out" "  ark8260: published:" "parent source"
list=$(SIM_PROFILES_DIR=tests/corpus/profiles-good "$hwemu" profiles list)
grep -q "^lab-xeon  *intel-xeon-2s-rapl  *tests/corpus/profiles-good/lab-xeon.yaml" <<<"$list" && ok || bad "SIM_PROFILES_DIR list: $list"

# Usage errors: exit 2 with a message.
"$hwemu" profiles show >/dev/null 2>&1; [ $? -eq 2 ] && ok || bad "show without name: not exit 2"
"$hwemu" profiles frobnicate >/dev/null 2>&1; [ $? -eq 2 ] && ok || bad "unknown subcommand: not exit 2"
"$hwemu" profiles list --bogus >/dev/null 2>&1; [ $? -eq 2 ] && ok || bad "unknown option: not exit 2"
err=$("$hwemu" profiles show intel-xeon-2s-rap 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && ok || bad "unknown profile: exit $rc"
expect_line "$err" 'no profile named "intel-xeon-2s-rap" (did you mean "intel-xeon-2s-rapl"?)' "unknown profile message"
err=$("$hwemu" profiles list --profiles-dir /nonexistent 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && ok || bad "missing profiles dir: exit $rc"
expect_line "$err" "/nonexistent: cannot read the profiles directory: No such file or directory" "missing dir message"
"$hwemu" profiles --help | grep -q "^Usage: hwemu profiles list" && ok || bad "profiles --help"
finish
