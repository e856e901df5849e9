#!/usr/bin/env python3
"""capping_agent.py: the reference experiment's power-capping agent, one per node.

It runs under hwemu's shim (`hwemu agents -- python3 capping_agent.py ...`, or `hwemu exec --node
N`), so it works on its node exactly as it would on a real one: it reads the package zones of
/sys/class/powercap and writes their constraint_0_power_limit_uw. The one thing a node cannot
show, the cluster's queue, it reads from the engine's HTTP API, as Joulie's operator reads the
pods from Kubernetes: GET /runs, the active run's jobsByClass.performance (waiting +
running: submitted and not ended; ../../docs/runs.md "Run API").

Every agent computes the same number of high-performance nodes, hp, from the same inputs, and its
node is one of them when its index in the fleet (HWEMU_AGENT_INDEX, the spec's order) is below
hp; the others are eco. The policies are the Joulie experiments' baselines B and C
(joulie-k8s/Joulie simulator/cmd/simulator standalone.go):

  static  hp = round(hp_frac * N)
  demand  hp = clamp(max(round(base_frac * N), ceil(performance jobs / perf_per_hp)), hp_min, hp_max)

A performance node has every package limit at its constraint_0_max_power_uw, an eco node at
eco_pct % of it. With --steer the agent also labels its node joulie.io/power-profile eco or
performance (PUT /nodes/<node>/labels), which keeps performance jobs off eco nodes from the next
tick on (docs/runs.md "Placement"), as Joulie's operator does; without it the agent only caps and
a performance job may land on an eco node, where it runs under the cap, slower as far as its
sensitivity says (docs/runs.md "Load and progress").

With --steer, draining as Joulie's operator does it: a node that turns eco while it runs jobs
that came while it took performance jobs keeps full power (it is labelled eco at once, so no new
one comes) until those jobs have ended. The node's files show which jobs run on it (their cgroup directories,
docs/interfaces.md "Job cgroups"), not their class, so every such job counts.

Each change of role is one line on stdout; a failed HTTP request or write is said on stderr with
what to do, and the agent keeps its role and tries again at its next reconcile.
"""
import argparse
import glob
import json
import math
import os
import signal
import sys
import time
import urllib.error
import urllib.request

def say(msg):
    print(msg, flush=True)


def warn(msg):
    print("capping_agent: " + msg, file=sys.stderr, flush=True)


def read_int(path):
    with open(path) as f:
        return int(f.read().strip())


def package_zones():
    """The node's package zones: /sys/class/powercap/<control>:<n> (one colon: a package, not a
    sub-zone) whose name is package-<n>, with their largest limit."""
    zones = []
    for d in sorted(glob.glob("/sys/class/powercap/*:*")):
        if os.path.basename(d).count(":") != 1:
            continue
        try:
            with open(os.path.join(d, "name")) as f:
                if not f.read().startswith("package"):
                    continue
            zones.append((d, read_int(os.path.join(d, "constraint_0_max_power_uw"))))
        except OSError as e:
            warn("%s: %s; the zone is left alone" % (d, e))
    return zones


class Engine:
    def __init__(self, url, timeout):
        self.url = url.rstrip("/")
        self.timeout = timeout

    def request(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"} if data else {})
        with urllib.request.urlopen(req, timeout=self.timeout) as r:
            return json.loads(r.read())

    def get(self, path):
        return self.request("GET", path)

    def set_profile(self, node, profile):
        self.request("PUT", "/nodes/%s/labels" % node, {"joulie.io/power-profile": profile})

    def performance_demand(self):
        """Performance jobs submitted and not ended in the active run: waiting or running (pending
        ones are not submitted yet); 0 without a run."""
        for run in self.get("/runs").get("runs", []):
            if run.get("state") == "running":
                perf = run.get("jobsByClass", {}).get("performance", {})
                return sum(perf.get(s, 0) for s in ("waiting", "running"))
        return 0


def high_performance_nodes(args, demand):
    n = args.nodes
    if args.policy == "static":
        return min(n, max(0, int(round(args.hp_frac * n))))
    hp = max(int(round(args.base_frac * n)), math.ceil(demand / args.perf_per_hp))
    hp_max = n if args.hp_max is None else args.hp_max
    return min(max(hp, args.hp_min), hp_max, n)


def jobs_on_node():
    """The jobs running on the node: their cgroup directories (SLURM's or the kubelet's layout)."""
    return set(glob.glob("/sys/fs/cgroup/system.slice/slurmstepd.scope/job_*") +
               glob.glob("/sys/fs/cgroup/kubepods.slice/*/*-pod*.slice"))


def apply_caps(zones, pct):
    ok = True
    for d, max_uw in zones:
        path = os.path.join(d, "constraint_0_power_limit_uw")
        value = int(max_uw * pct / 100)
        try:
            with open(path, "w") as f:
                f.write(str(value))
        except OSError as e:
            warn("cannot write %d to %s: %s; is the node's engine still running?" % (value, path, e))
            ok = False
    return ok


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--policy", choices=("static", "demand"), required=True)
    p.add_argument("--engine", help="the engine's HTTP address, http://HOST:PORT (demand, --steer)")
    p.add_argument("--steer", action="store_true",
                   help="label the node joulie.io/power-profile eco or performance, as Joulie's operator does")
    p.add_argument("--nodes", type=int, required=True, help="how many nodes the fleet manages (N)")
    p.add_argument("--index", type=int, default=int(os.environ.get("HWEMU_AGENT_INDEX", "-1")),
                   help="this node's place in the fleet (default HWEMU_AGENT_INDEX)")
    p.add_argument("--node", default=os.environ.get("NODE_NAME", os.environ.get("HWEMU_NODE", "")),
                   help="this node's name (default NODE_NAME)")
    p.add_argument("--eco-pct", type=float, default=60, help="an eco node's package limit, %% of its max (60)")
    p.add_argument("--hp-frac", type=float, default=0.25, help="static: the share of performance nodes (0.25)")
    p.add_argument("--base-frac", type=float, default=0.0, help="demand: the least share of performance nodes (0)")
    p.add_argument("--perf-per-hp", type=float, default=2, help="demand: performance jobs one node takes (2)")
    p.add_argument("--hp-min", type=int, default=1, help="demand: the fewest performance nodes (1)")
    p.add_argument("--hp-max", type=int, default=None, help="demand: the most performance nodes (N)")
    p.add_argument("--interval", type=float, default=10, help="wall seconds between reconciles (10)")
    args = p.parse_args()
    if (args.policy == "demand" or args.steer) and not args.engine:
        p.error("the demand policy and --steer talk to the engine: give --engine http://HOST:PORT")
    if args.index < 0 or not args.node or args.nodes < 1:
        p.error("needs --nodes, and --index and --node (or HWEMU_AGENT_INDEX and NODE_NAME: run it "
                "through `hwemu agents`)")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    engine = Engine(args.engine, timeout=max(2.0, args.interval)) if args.engine else None
    zones = package_zones()
    if not zones:
        warn("node %s shows no package zone under /sys/class/powercap: nothing to cap" % args.node)
    role = None        # what the caps say now: performance, eco, or draining (eco-bound)
    draining = set()   # the jobs a draining node waits for
    while True:
        try:
            demand = engine.performance_demand() if args.policy == "demand" else 0
            hp = high_performance_nodes(args, demand)
            want = "performance" if args.index < hp else "eco"
            if want == "eco" and role == "performance":
                draining = jobs_on_node() if args.steer else set()
                if draining:
                    engine.set_profile(args.node, "eco")
                    role = "draining"
                    say("node %s: draining (%s policy: %d of %d nodes performance, %d performance jobs); "
                        "eco once its %d jobs have ended" % (args.node, args.policy, hp, args.nodes, demand,
                                                           len(draining)))
            if role == "draining":
                draining &= jobs_on_node()
                if want == "eco" and draining:
                    time.sleep(args.interval)
                    continue
            if want != role:
                # steering: eco, the label first (no new performance job comes), then the caps;
                # back to performance, the caps first, then the label
                if args.steer and want == "eco":
                    engine.set_profile(args.node, "eco")
                done = apply_caps(zones, args.eco_pct if want == "eco" else 100)
                if args.steer and want == "performance":
                    engine.set_profile(args.node, "performance")
                if done:
                    say("node %s: %s (%s policy: %d of %d nodes performance, %d performance jobs); "
                        "%d packages at %g %% of their max" % (args.node, want, args.policy, hp, args.nodes,
                                                               demand, len(zones),
                                                               args.eco_pct if want == "eco" else 100))
                    role = want
        except (urllib.error.URLError, OSError, ValueError) as e:
            warn("node %s: the engine at %s: %s; trying again in %g s" % (args.node, args.engine, e, args.interval))
        time.sleep(args.interval)


if __name__ == "__main__":
    main()
