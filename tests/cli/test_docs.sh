#!/usr/bin/env bash
# The documentation points only inside the repository: every relative link of README.md, docs/
# and the folders' README.md files names a file or directory of the tree (and an anchor, when
# given, a heading of that page), and no tracked file refers to documents outside it. And the
# folders' maps are whole: a folder's README.md names every C source and header of the folder.
set -euo pipefail
cd "$(dirname "$0")/../.."

python3 - <<'EOF'
import os, re, subprocess, sys

def anchors(path):
    out = set()
    for line in open(path, encoding="utf-8"):
        m = re.match(r"#+\s+(.*)", line)
        if m:
            a = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-")
            out.add(a)
    return out

tracked = subprocess.check_output(["git", "ls-files"], text=True).split()
pages = [f for f in tracked if f.endswith(".md") and "node_modules" not in f]
bad = 0
for page in pages:
    base = os.path.dirname(page)
    for n, line in enumerate(open(page, encoding="utf-8"), 1):
        for target in re.findall(r"\]\(([^)\s]+)\)", line):
            if re.match(r"[a-z]+://", target) or target.startswith("mailto:"):
                continue
            path, _, anchor = target.partition("#")
            full = os.path.normpath(os.path.join(base, path)) if path else page
            if full.startswith(".."):
                print(f"{page}:{n}: link {target} leaves the repository"); bad += 1
            elif not os.path.exists(full):
                print(f"{page}:{n}: link {target}: no {full} in the tree"); bad += 1
            elif anchor and full.endswith(".md") and anchor not in anchors(full):
                print(f"{page}:{n}: link {target}: {full} has no heading #{anchor}"); bad += 1
# The team's notes outside the repository, by name; a name is fine once the tree has a page of it.
names = ["sysfs-abi", "gpu-tools", "upstream-hwemu", "interposition", "joulie-compat", "joulie-docs", "ceems-paper",
         "ceems-testbed", "whole-node", "msr-ipmi", "emulate-mode", "nvml", "telemetry", "DESIGN"]
have = {os.path.basename(f) for f in tracked}
outside = re.compile(r"\.\./shared|steering repo|(?<![\w/.-])(" + "|".join(n for n in names if n + ".md" not in have) + r")\.md")
for f in tracked:
    if "node_modules" in f or f == "tests/cli/test_docs.sh":
        continue
    try:
        text = open(f, encoding="utf-8").read()
    except (UnicodeDecodeError, IsADirectoryError, FileNotFoundError):
        continue
    for n, line in enumerate(text.split("\n"), 1):
        m = outside.search(line)
        if m:
            print(f"{f}:{n}: refers to {m.group(0)}, a document outside the repository"); bad += 1
# A folder's README.md names each of its .c and .h files in backquotes: by name (`node.c`), stem
# (`node`), or a pattern that takes it in (`segment.[ch]`, `wrap_*.c`); a header is named with its
# .c (the header is that file's interface), one without a .c by its own name.
import fnmatch
sources = {}
for f in tracked:
    if f.endswith((".c", ".h")) and "node_modules" not in f:
        sources.setdefault(os.path.dirname(f), []).append(os.path.basename(f))
readmes = 0
for folder, files in sorted(sources.items()):
    readme = os.path.join(folder, "README.md")
    if readme not in tracked:
        continue
    readmes += 1
    names = [t.split("/")[-1] for t in re.findall(r"`([^`\s]+)`", open(readme, encoding="utf-8").read())]
    for f in sorted(files):
        stem = os.path.splitext(f)[0]
        also = [stem + ".c"] if f.endswith(".h") and stem + ".c" in files else []
        if not any(fnmatch.fnmatchcase(n, t) for n in [f, stem] + also for t in names):
            print(f"{readme}: does not name {f} of its folder: add a line saying what `{f}` owns"); bad += 1
if bad:
    sys.exit(f"test_docs: {bad} problem(s)")
print(f"test_docs: {len(pages)} pages, every link inside the repository; {readmes} folder READMEs name all their files")
EOF
