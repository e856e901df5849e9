#!/usr/bin/env bash
# engine/kube against a real control plane (tests/kube/control_plane.sh): tests/kube_live/kube_live.c
# lists and watches Nodes with a label selector, creates one (and again: 409 with the API's
# message), patches it three ways (merge, strategic merge, JSON patch) and replaces it, sees each
# change on the watch, gets a 404's message, creates a batch/v1 Job and sees its pod through a pods
# watch with a field selector (spec.nodeName), deletes, relists after a watch from a version the
# apiserver no longer has (410), stops a watch in flight by aborting the client, and says what
# went wrong for a bad token (401), a server certificate of another CA and an address nothing
# listens on. Exit 77 (skipped) without the control plane.
# Usage: test_kube_client.sh HWEMU_BINARY   (run from the source tree; kube_live is beside it in tests/)
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../kube/control_plane.sh"
live=$(dirname "$1")/tests/kube_live
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[ -x "$live" ] || { bad "$live is not built"; finish; }
kube_need "$tmp"
kube_start "$tmp/kube" || { bad "the control plane did not start (above)"; finish; }
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$tmp/other.key" -out "$tmp/other-ca.crt" -days 1 \
    -subj "/CN=another-ca" >/dev/null 2>&1
KUBE_LIVE_OTHER_CA=$tmp/other-ca.crt "$live" >"$tmp/live.out" 2>&1
rc=$?
cat "$tmp/live.out"
n=$(grep -c '^ok ' "$tmp/live.out")
[ $rc = 0 ] && [ "$n" -ge 20 ] && ok || bad "kube_live: exit $rc, $n checks passed"
finish
