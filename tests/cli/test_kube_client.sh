#!/usr/bin/env bash
# engine/kube against a real control plane (tests/kube/control_plane.sh): tests/kube_live/kube_live.c
# lists and watches Nodes with a label selector, creates one (and again: 409 with the API's
# message), patches it three ways (merge, strategic merge, JSON patch) and replaces it, sees each
# change on the watch, gets a 404's message, creates a batch/v1 Job and sees its pod through a pods
# watch with a field selector (spec.nodeName), deletes, relists after a watch from a version etcd
# compacted (410), stops a watch in flight by aborting the client, and says what
# went wrong for a bad token (401), a server certificate of another CA and an address nothing
# listens on. Exit 77 (skipped) without the control plane.
# Usage: test_kube_client.sh HWEMU_BINARY   (run from the source tree; kube_live is beside it in tests/)
set -u
. "$(dirname "$0")/lib.sh"
if [ ! -f "$(dirname "$0")/../kube/control_plane.sh" ]; then
    echo "SKIP: tests/kube/control_plane.sh (the test control plane, branch kube-plane) is not in this tree"
    exit 77
fi
. "$(dirname "$0")/../kube/control_plane.sh"
live=$(dirname "$1")/tests/kube_live
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[ -x "$live" ] || { bad "$live is not built"; finish; }
kube_need "$tmp"
kube_start "$tmp/kube" || { bad "the control plane did not start (above)"; finish; }
# Compact etcd at its current revision (its HTTP gateway, /v3/kv/compaction), so that a watch
# from resourceVersion 1 is answered 410 Expired.
etcd_pid=$(for e in $kube_pids; do [ "${e%%:*}" = etcd ] && echo "${e#*:}"; done)
etcd_url=$(tr '\0' '\n' </proc/$etcd_pid/cmdline | grep -A1 -x -- --listen-client-urls | tail -1)
rev=$(curl -s -X POST "$etcd_url/v3/kv/range" -d '{"key":"AA=="}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["header"]["revision"])')
curl -sf -X POST "$etcd_url/v3/kv/compaction" -d "{\"revision\":\"$rev\",\"physical\":true}" >/dev/null \
    && ok || bad "compacting etcd ($etcd_url) at revision $rev failed"
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$tmp/other.key" -out "$tmp/other-ca.crt" -days 1 \
    -subj "/CN=another-ca" >/dev/null 2>&1
KUBE_LIVE_OTHER_CA=$tmp/other-ca.crt "$live" >"$tmp/live.out" 2>&1
rc=$?
cat "$tmp/live.out"
n=$(grep -c '^ok ' "$tmp/live.out")
[ $rc = 0 ] && [ "$n" -ge 20 ] && ok || bad "kube_live: exit $rc, $n checks passed"
finish
