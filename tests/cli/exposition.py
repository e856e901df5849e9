"""exposition: what the CLI tests' inline Python checks share (lib.sh puts this directory on
PYTHONPATH): the labelled samples of the Prometheus text a URL serves, a file of an emulated node
read through `hwemu cat`, and the failed checks that end the script."""
import re
import subprocess
import sys
import urllib.request


def series(url, raw=False):
    """{family: [(labels, value)]} of the labelled samples at url, values as floats; with raw,
    {family: [(labels, label names in their order, value as written)]}."""
    out = {}
    for line in urllib.request.urlopen(url).read().decode().splitlines():
        m = re.match(r'^(\w+)\{(.*)\} (\S+)$', line)
        if m:
            pairs = re.findall(r'(\w+)="([^"]*)"', m.group(2))
            sample = (dict(pairs), [k for k, _ in pairs], m.group(3)) if raw else (dict(pairs), float(m.group(3)))
            out.setdefault(m.group(1), []).append(sample)
    return out


def cat(hwemu, root, node, path):
    """The content of path on node, as `hwemu cat` prints it, stripped."""
    return subprocess.run([hwemu, "cat", "--root", root, "--node", node, path], capture_output=True, text=True,
                          check=True).stdout.strip()


fails = []


def check(ok, what):
    if not ok:
        fails.append(what)


def report():
    """Prints every failed check and exits 1 if there was one (0 otherwise)."""
    for f in fails:
        print("FAIL detail:", f)
    sys.exit(1 if fails else 0)
