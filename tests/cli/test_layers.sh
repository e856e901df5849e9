#!/usr/bin/env bash
# The house's rules (docs/ARCHITECTURE.md "Layers"), checked on the source tree:
# - every #include "..." of a folder names a header of that folder or of a layer it may use;
# - the segment library builds alone as a shared object that needs libc only;
# and on the build tree of the hwemu binary given as $1 (as ctest runs it):
# - no two files of one folder depend on each other, even through others (a circle): file A
#   depends on file B when A's object file uses a global symbol B's defines (nm).
# Fails with the offending file:line, or the circle and its symbols, and the rule it breaks.
set -euo pipefail
# The build tree: the nearest directory above the binary that holds CMakeCache.txt.
build=""
if [ -n "${1:-}" ]; then
  dir=$(cd "$(dirname "$1")" && pwd)
  while [ "$dir" != / ] && [ ! -f "$dir/CMakeCache.txt" ]; do dir=$(dirname "$dir"); done
  [ -f "$dir/CMakeCache.txt" ] && build=$dir
fi
if [ -z "$build" ]; then
  echo "test_layers: no CMake build tree above '${1:-}': run it as bash tests/cli/test_layers.sh build/hwemu" \
       "after a build (the circle check reads the object files)" >&2
  exit 1
fi
export HWEMU_LAYERS_BUILD=$build
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
    "engine/telemetry": ["engine/cluster", "engine/runs", "engine/runtime", "engine/render", "engine/model", "engine/physics",
                         "engine/segment"],
    "engine/cli":       ["engine/telemetry", "engine/cluster", "engine/kube", "engine/runs", "engine/runtime", "engine/render",
                         "engine/model", "engine/physics", "engine/segment", "shim/supervisor"],
    "shim/emu":         ["engine/segment"],
    "shim/preload":     ["shim/emu", "engine/segment"],
    "shim/supervisor":  ["shim/emu", "engine/segment"],
    "fakesmi":          ["engine/segment"],
    "fakesmi/nvml":     ["engine/segment"],
    "fakesmi/amdsmi":   ["fakesmi", "engine/segment"],
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

# ---- No circle between the files of one folder ----
# Each folder's files, as their object files in the build tree show them: a compiler's depfile
# (x.c.o.d, written by GCC and Clang under every CMake generator) names the source of its
# object first (CMake compiles every source by its absolute path), whatever the target's name or
# binary directory. A source built into several targets counts with the union of its symbols.
import subprocess
build = os.environ["HWEMU_LAYERS_BUILD"]
root = os.getcwd()
objects = {}  # source path relative to the tree -> its object files
for dirpath, _, files in os.walk(build):
    for f in files:
        if not f.endswith(".o.d"):
            continue
        deps = open(os.path.join(dirpath, f), encoding="utf-8", errors="replace").read()
        first = deps.split(":", 1)[-1].replace("\\\n", " ").split()
        obj = os.path.join(dirpath, f[:-2])
        if not first or not os.path.isabs(first[0]) or not os.path.exists(obj):
            continue
        src = os.path.relpath(os.path.realpath(first[0]), os.path.realpath(root))
        objects.setdefault(src, []).append(obj)

def symbols(objs):
    """The global symbols the objects define and the ones they use."""
    defined, used = set(), set()
    for o in objs:
        out = subprocess.run(["nm", "-P", "-g", o], capture_output=True, text=True)
        if out.returncode:
            sys.exit(f"test_layers: nm {o}: {out.stderr.strip()}")
        for line in out.stdout.splitlines():
            parts = line.split()
            if len(parts) < 2:
                continue
            (used if parts[1] in "Uvw" else defined).add(parts[0])
    return defined, used - defined

# The C library's names: a file that defines one (the shim's wrappers of open, write, ...) stands
# in for libc, and a file that calls write means libc's, not the wrapper's file.
libc = subprocess.run([os.environ.get("CC", "cc"), "-print-file-name=libc.so.6"], capture_output=True,
                      text=True).stdout.strip()
out = subprocess.run(["nm", "-D", "--defined-only", libc], capture_output=True, text=True)
if out.returncode or not out.stdout:
    sys.exit(f"test_layers: nm -D {libc}: {out.stderr.strip() or 'no symbols'}: the circle check needs the C library's names")
libc_names = {line.split()[-1].split("@")[0] for line in out.stdout.splitlines() if line.split()}

circles = 0
unbuilt = []
for folder in allowed:
    files = sorted(f for f in os.listdir(folder) if f.endswith(".c"))
    defs, uses = {}, {}
    for f in files:
        objs = objects.get(os.path.join(folder, f))
        if not objs:
            unbuilt.append(os.path.join(folder, f))
            continue
        d, u = symbols(objs)
        uses[f] = u
        for sym in d:
            defs.setdefault(sym, set()).add(f)
    # edge a -> b: a uses a symbol b defines, with the symbols
    edges = {f: {} for f in uses}
    for a, u in uses.items():
        for sym in u - libc_names:
            for b in defs.get(sym, ()):
                if b != a:
                    edges[a].setdefault(b, []).append(sym)
    # Tarjan's strongly connected components: every one of more than one file holds a circle.
    index, low, stack, on, comps = {}, {}, [], set(), []
    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))
    for v in sorted(edges):
        if v not in index:
            visit(v)
    for comp in comps:
        # one circle through the component's first file (a shortest way back to it), each step
        # with the symbols it uses
        start, inside = comp[0], set(comp)
        prev, queue = {start: None}, [start]
        back = None
        while queue and back is None:
            v = queue.pop(0)
            for w in sorted(edges[v]):
                if w == start:
                    back = v
                    break
                if w in inside and w not in prev:
                    prev[w] = v
                    queue.append(w)
        path = [back]
        while prev[path[-1]] is not None:
            path.append(prev[path[-1]])
        path = path[::-1] + [start]
        steps = "; ".join(f"{a} uses {', '.join(sorted(edges[a][b])[:6])}"
                          f"{' ...' if len(edges[a][b]) > 6 else ''} of {b}" for a, b in zip(path, path[1:]))
        print(f"{folder}: {' -> '.join(path)} ({steps})")
        if len(comp) > len(path) - 1:
            print(f"{folder}:   the same circle also takes in {', '.join(f for f in comp if f not in path)}")
        circles += 1
if unbuilt:
    print(f"test_layers: no object file in {build} for {', '.join(unbuilt)}: every .c of a layer's folder must be "
          f"built (rebuild, or add the file to its folder's CMakeLists.txt) so the circle check sees it")
if circles:
    print(f"test_layers: {circles} circle(s) between the files of one folder: move what the files share into a "
          f"common file they all use (as render_gpu_common.c, nvidia_smi_common.c), so no file depends on one that "
          f"depends back on it")
if circles or unbuilt:
    sys.exit(1)
print(f"test_layers: no circle between the files of a folder ({len(allowed)} folders, their object files in {build})")
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
