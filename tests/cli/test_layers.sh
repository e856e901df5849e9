#!/usr/bin/env bash
# The house's rules (docs/ARCHITECTURE.md "Layers"), checked on the source tree:
# - every #include "..." of a folder names a header of that folder or of a layer it may use;
# - the segment library builds alone as a shared object that needs libc only.
# Fails with the offending file:line and the rule it breaks.
set -euo pipefail
cd "$(dirname "$0")/../.."

python3 - <<'EOF'
import os, re, sys

# folder -> the folders its files may include (itself always).
allowed = {
    "engine/segment":   [],
    "engine/kube":      [],
    "engine/model":     ["engine/segment"],
    "engine/physics":   [],
    "engine/render":    ["engine/model", "engine/physics", "engine/segment"],
    "engine/runtime":   ["engine/render", "engine/model", "engine/physics", "engine/segment"],
    "engine/runs":      ["engine/runtime", "engine/render", "engine/model", "engine/physics", "engine/segment"],
    "engine/cluster":   ["engine/kube", "engine/runs", "engine/runtime", "engine/render", "engine/model", "engine/physics",
                         "engine/segment"],
    "engine/telemetry": ["engine/cluster", "engine/runs", "engine/runtime", "engine/render", "engine/model", "engine/physics", "engine/segment"],
    "engine/cli":       ["engine/telemetry", "engine/cluster", "engine/kube", "engine/runs", "engine/runtime", "engine/render", "engine/model", "engine/physics",
                         "engine/segment", "shim"],
    "shim":             ["engine/segment"],
    "fakesmi":          ["engine/segment"],
    "fakesmi/nvml":     ["engine/segment"],
}
home = {}  # header name -> folder
for folder in allowed:
    for f in os.listdir(folder):
        if f.endswith(".h"):
            if f in home:
                sys.exit(f"test_layers: {f} is in both {home[f]} and {folder}: header names must be unique")
            home[f] = folder
bad = 0
for folder, deps in allowed.items():
    for f in sorted(os.listdir(folder)):
        if not f.endswith((".c", ".h")):
            continue
        path = os.path.join(folder, f)
        for n, line in enumerate(open(path, encoding="utf-8"), 1):
            m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
            if not m:
                continue
            h = m.group(1)
            where = home.get(h)
            if where is None:
                print(f"{path}:{n}: includes \"{h}\", which is no header of a known folder")
                bad += 1
            elif where != folder and where not in deps:
                print(f"{path}:{n}: includes {where}/{h}: {folder} may include only "
                      f"{', '.join(deps) or 'itself'} (a lower layer never includes a higher one)")
                bad += 1
if bad:
    sys.exit(f"test_layers: {bad} include(s) against the layering")
print("test_layers: includes follow the layers")
EOF

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
${CC:-cc} -std=gnu11 -D_GNU_SOURCE -shared -fPIC -Wl,--no-undefined engine/segment/*.c -o "$tmp/libseg.so"
needed=$(readelf -d "$tmp/libseg.so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
if [ "$needed" != "libc.so.6 " ]; then
  echo "test_layers: engine/segment needs more than libc: $needed" >&2
  exit 1
fi
echo "test_layers: engine/segment builds alone and needs only libc.so.6"
