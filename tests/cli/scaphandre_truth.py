"""scaphandre_truth: one interval of Scaphandre's Prometheus exporter against the engine's truth,
shared by tests/cli/test_scaphandre.sh (which asserts the tolerances) and bench/attribution.sh
(which prints the table). Run it under `hwemu exec --node NODE` (the preload shim then answers its
reads of the node's powercap files in this process, as for Scaphandre):
  scaphandre_truth.py ENGINE_URL SCAPH_URL NODE [INTERVAL_S [TICK_S]]
prints one JSON object: rows (what, scaph, ref or the bracket lo..hi, err), the engine's pace, the
gaps between the reference's reads and Scaphandre's socket 0 (gapS) and host (hostGapS) reads, the
domains Scaphandre found.

How Scaphandre 1.0.0 computes what it exports (src/exporters/prometheus.rs show_metrics,
src/sensors/mod.rs get_records_diff_power_microwatts, src/sensors/powercap_rapl.rs): a scrape
more than 2 s after the previous request refreshes the topology (reads every socket's and
domain's energy_uj, then the host record: psys if the node has it, else the packages plus the
DRAM domains), each record stamped with the wall clock right after its read; every scrape then
exports the last record of each counter (`*_energy_microjoules`) and the power between the last
two records (`*_power_microwatts` = difference in uJ / difference of the stamps in s). So a scrape
shows the power over the interval between the two latest refreshes.

The truth, two ways:
- the counters: /debug/energy (the engine's counters at the last published tick, J) read just
  before and just after the refreshing scrape bracket what Scaphandre read: before <= read <=
  after + one tick of energy (a file read is computed at its instant, at most one tick past the
  publication). Exact: no tolerance.
- the power over the interval: this process reads the same energy_uj files right before each of
  the two refreshing scrapes and stamps them the same way, so its (difference / difference of
  stamps) covers Scaphandre's interval but for the few ms between its read and Scaphandre's at
  each end. That is the engine's energy per wall-clock second. /telemetry's powerWatts is the
  physics' power per emulated second: the two differ by the engine's pace (emulated over wall
  seconds over the interval, paceRatio here), which drifts by a few % when the machine is so
  loaded that ticks run late and catch up."""
import json
import os
import re
import sys
import time
import urllib.request

PC = "/sys/class/powercap"


def get(url):
    return urllib.request.urlopen(url, timeout=20).read().decode()


def scrape(url):
    """{family: [(labels, value)]} of every sample (labelled or not) Scaphandre serves."""
    out = {}
    for line in get(url).splitlines():
        m = re.match(r'^(\w+)(?:\{(.*)\})? (\S+)$', line)
        if m:
            labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2) or ""))
            out.setdefault(m.group(1), []).append((labels, float(m.group(3))))
    return out


def one(s, name, **labels):
    vals = [v for l, v in s.get(name, []) if all(l.get(k) == x for k, x in labels.items())]
    return vals[0] if len(vals) == 1 else None


def zones():
    """{(socket, domain or None): energy_uj path} as Scaphandre's powercap sensor finds them
    (intel-rapl:N a socket, intel-rapl:N:M its domain named by the name file)."""
    out = {}
    for d in sorted(os.listdir(PC)):
        m = re.match(r'^intel-rapl:(\d+)(?::(\d+))?$', d)
        if not m:
            continue
        name = open(f"{PC}/{d}/name").read().strip()
        if name == "psys":
            continue
        out[(m.group(1), None if m.group(2) is None else name)] = f"{PC}/{d}/energy_uj"
    return out


def read_zones(zs):
    """{key: (uJ, stamp)}: each read stamped right after it, as Scaphandre stamps its records."""
    out = {}
    for k, path in zs.items():
        with open(path) as f:
            v = int(f.read())
        out[k] = (v, time.time())
    return out


def engine_view(engine, node):
    en = next(n for n in json.loads(get(engine + "/debug/energy"))["nodes"] if n["node"] == node)
    tel = json.loads(get(engine + "/telemetry/" + node))
    return {"pkgJ": {str(p["index"]): p["energyJoules"] for p in en["packages"]},
            "pkgW": {str(p["index"]): p["powerWatts"] for p in tel["packages"]},
            "dramW": tel["cpu"]["dramPowerWatts"], "nodeW": tel["nodePowerWatts"]}


def main():
    engine, scaph, node = sys.argv[1:4]
    interval = float(sys.argv[4]) if len(sys.argv) > 4 else 2.5
    tick = float(sys.argv[5]) if len(sys.argv) > 5 else 0.2
    zs = zones()
    time.sleep(2.1)  # past Scaphandre's 2 s refresh guard since whoever scraped it last
    tel0 = engine_view(engine, node)
    a0 = read_zones(zs)
    s0 = scrape(scaph)  # refresh r0
    time.sleep(interval)
    tel1 = engine_view(engine, node)
    a1 = read_zones(zs)
    s = scrape(scaph)  # refresh r1: the power over r0..r1
    tel2 = engine_view(engine, node)

    rows = []

    def row(what, got, want, lo=None, hi=None):
        err = None if got is None or want is None else (got - want) / want
        rows.append({"what": what, "scaph": got, "ref": want, "lo": lo, "hi": hi, "err": err})

    ref_w = {k: (a1[k][0] - a0[k][0]) / 1e6 / (a1[k][1] - a0[k][1]) for k in zs}
    host = 0.0
    for (sock, dom) in sorted(zs, key=lambda k: (k[0], k[1] or "")):
        w = ref_w[(sock, dom)]
        if dom is None:
            e = one(s, "scaph_socket_energy_microjoules", socket_id=sock)
            lo, hi = tel1["pkgJ"][sock], tel2["pkgJ"][sock] + max(tel1["pkgW"][sock], tel2["pkgW"][sock]) * tick
            got = None if e is None else e / 1e6
            rows.append({"what": f"socket {sock} energy J", "scaph": got, "ref": None, "lo": lo, "hi": hi,
                         "err": None if got is None else (0.0 if lo <= got <= hi else 1.0)})
            p = one(s, "scaph_socket_power_microwatts", socket_id=sock)
            row(f"socket {sock} power W", None if p is None else p / 1e6, w)
            host += w
        else:
            p = one(s, "scaph_domain_power_microwatts", socket_id=sock, domain_name=dom)
            row(f"socket {sock} {dom} W", None if p is None else p / 1e6, w)
            if dom == "dram":
                host += w
    h = one(s, "scaph_host_power_microwatts")
    row("host power W", None if h is None else h / 1e6, host)
    # the gap between the reference read and Scaphandre's at each end (s): Scaphandre's counter
    # minus the reference's over the power then; it bounds how well the two intervals align
    gaps = []
    for sc, a, tel in ((s0, a0, tel0), (s, a1, tel1)):
        e = one(sc, "scaph_socket_energy_microjoules", socket_id="0")
        w = tel["pkgW"].get("0")
        gaps.append(None if e is None or not w else (e - a[("0", None)][0]) / 1e6 / w)
    # the host record is read after the process scan, so its interval starts and ends later
    host_keys = [k for k in zs if k[1] is None or k[1] == "dram"]
    host_gaps = []
    for sc, a, tel in ((s0, a0, tel0), (s, a1, tel1)):
        e = one(sc, "scaph_host_energy_microjoules")
        w = sum(tel["pkgW"].values()) + (tel["dramW"] if any(k[1] == "dram" for k in zs) else 0)
        host_gaps.append(None if e is None or not w else (e - sum(a[k][0] for k in host_keys)) / 1e6 / w)
    tel_w = sum(tel1["pkgW"].values())
    ref_pkg = sum(w for (sock, dom), w in ref_w.items() if dom is None)
    print(json.dumps({"node": node, "rows": rows, "telemetryPackageW": tel_w, "refPackageW": ref_pkg,
                      "paceRatio": ref_pkg / tel_w if tel_w else None, "nodeW": tel1["nodeW"],
                      "telemetryDramW": tel1["dramW"], "gapS": gaps, "hostGapS": host_gaps,
                      "domains": sorted(f"{l.get('socket_id')}:{l.get('domain_name')}"
                                        for l, _ in s.get("scaph_domain_power_microwatts", []))}))


if __name__ == "__main__":
    main()
