#!/usr/bin/env bash
# Builds the Kubernetes control plane the tests run (no containers) from pinned Go modules, once per
# cache: etcd v3.6.5, kube-apiserver, kube-scheduler, kube-controller-manager and kubectl v1.34.2,
# KWOK v0.8.0 and helm v3.22.0, all unmodified.
#   scripts/fetch-kubernetes.sh build   build what is missing, then print the bin dir
#   scripts/fetch-kubernetes.sh path    print the bin dir, or fail saying what is missing
# The binaries go to ${HWEMU_KUBE_CACHE:-$HOME/.cache/hwemu/kubernetes}/TAG/bin, TAG naming the pinned
# versions; a stamp there makes a rerun with everything present take no time. The wrapper modules
# (k8s.io/kubernetes and etcd's server replace their sibling modules with relative paths, so
# `go install ...@version` refuses them) are written and built in TAG/work, never in the clone; Go's
# build and module caches stay at their defaults (GOCACHE, GOMODCACHE), so a second cache root or a
# rebuild after `rm -rf TAG` takes seconds. The build log is TAG/build.log.
# Cost on a 2-core machine (docs/kubernetes.md): about 25 min of CPU with cold caches, 245 MB of module
# downloads from the Go module proxy, 3.7 GB of build cache; binaries are built one at a time with
# `go build -p 2` to keep the peak memory near 2.3 GB.
# Environment: GO (default /usr/local/go/bin/go, else `go` on PATH); HWEMU_KUBE_CACHE.
# Exit status: 0 built or present; 3 no usable Go (missing, or older than 1.26.0, the `go` line of
# helm v3.22.0's and KWOK v0.8.0's go.mod); 2 `path` and something is not built; 1 a build failed
# (downloads included), with the log's tail on stderr; 64 usage.
set -euo pipefail

k8s_version=1.34.2
etcd_version=3.6.5
kwok_version=0.8.0
helm_version=3.22.0
go_min=1.26.0
tag=k8s-$k8s_version-etcd-$etcd_version-kwok-$kwok_version-helm-$helm_version
root=${HWEMU_KUBE_CACHE:-$HOME/.cache/hwemu/kubernetes}
out=$root/$tag
bin=$out/bin
stamp=$out/.built
binaries="etcd kube-apiserver kube-scheduler kube-controller-manager kubectl kwok helm"

usage() {
    echo "usage: scripts/fetch-kubernetes.sh build|path" >&2
    echo "  build  builds etcd $etcd_version, Kubernetes $k8s_version, KWOK $kwok_version, helm $helm_version" \
         "into $bin (once) and prints that directory" >&2
    echo "  path   prints $bin, or fails (status 2) saying what is missing" >&2
    exit 64
}

# The binaries of the pinned set that are not in $bin (empty when all are).
missing_binaries() {
    local b miss=""
    for b in $binaries; do
        [ -x "$bin/$b" ] || miss="$miss $b"
    done
    echo "${miss# }"
}

[ $# -eq 1 ] || usage
case $1 in
path)
    miss=$(missing_binaries)
    if [ -f "$stamp" ] && [ -z "$miss" ]; then
        echo "$bin"
        exit 0
    fi
    echo "fetch-kubernetes: the control plane is not built in $bin (missing: ${miss:-the stamp .built," \
         "an interrupted build}): run scripts/fetch-kubernetes.sh build (about 25 min of CPU the first time;" \
         "needs Go >= $go_min and the Go module proxy)" >&2
    exit 2
    ;;
build) ;;
*) usage ;;
esac

if [ -f "$stamp" ] && [ -z "$(missing_binaries)" ]; then
    echo "$bin"
    exit 0
fi

# Go: the machine's own (Debian 12's golang-go is 1.19, far too old), else the one on PATH.
go=${GO:-}
[ -z "$go" ] && [ -x /usr/local/go/bin/go ] && go=/usr/local/go/bin/go
[ -z "$go" ] && go=$(command -v go || true)
if [ -z "$go" ]; then
    echo "fetch-kubernetes: Go is missing: install Go >= $go_min from https://go.dev/dl/ (unpack it in" \
         "/usr/local, giving /usr/local/go/bin/go) or point GO at one; Debian 12's golang-go is too old" >&2
    exit 3
fi
if [ ! -x "$go" ] && ! command -v "$go" >/dev/null; then
    echo "fetch-kubernetes: GO=$go is not an executable: point GO at a Go >= $go_min (https://go.dev/dl/)" >&2
    exit 3
fi
gv=$("$go" env GOVERSION 2>/dev/null || true)
gv=${gv#go}
if [ -z "$gv" ] || [ "$(printf '%s\n%s\n' "${gv%%[-+ ]*}" "$go_min" | sort -V | head -1)" != "$go_min" ]; then
    echo "fetch-kubernetes: $go is Go ${gv:-of unknown version}, older than $go_min (the minimum of helm" \
         "$helm_version and KWOK $kwok_version): install a newer Go from https://go.dev/dl/ or point GO at one" >&2
    exit 3
fi
mkdir -p "$out"
exec 9>"$out/.lock"
if ! flock -n 9; then
    echo "fetch-kubernetes: another build holds $out/.lock; waiting for it" >&2
    flock 9
fi
if [ -f "$stamp" ] && [ -z "$(missing_binaries)" ]; then
    echo "$bin"
    exit 0
fi
# The pinned toolchain only (no automatic toolchain download); modules through the proxy.
export GOTOOLCHAIN=local GOFLAGS=-mod=mod CGO_ENABLED=0

log=$out/build.log
work=$out/work
mkdir -p "$bin" "$work"
echo "=== fetch-kubernetes build $(date -u +%FT%TZ)" >>"$log"
start=$(date +%s)
cpu_start=$(awk '{print $14 + $15 + $16 + $17}' /proc/$$/stat)
step=0
nsteps=$(set -- $binaries; echo $#)

fail() {
    echo "fetch-kubernetes: $1 failed (log: $log):" >&2
    tail -12 "$log" >&2
    if grep -qiE 'dial tcp|no such host|i/o timeout|connection refused|TLS handshake|proxy.golang.org' "$log"; then
        echo "fetch-kubernetes: the Go module proxy could not be reached: the first build needs it" \
             "(GOMODCACHE serves later ones)" >&2
    fi
    exit 1
}

# Runs one step quietly into the log, with a progress line on stdout's neighbour stderr.
run() {
    echo "+ $*" >>"$log"
    nice -n 10 "$@" >>"$log" 2>&1
}

progress() {
    step=$((step + 1))
    echo "fetch-kubernetes: [$step/$nsteps] $1 ($(( $(date +%s) - start )) s so far; log: $log)" >&2
}

# Builds package $2 of module dir $1 to $bin/$3 through a temporary name, so that a killed build
# leaves no half-written binary behind that `path` would accept.
build_into_bin() {
    local dir=$1 pkg=$2 name=$3 ldflags=${4:-}
    (cd "$dir" && run "$go" build -p 2 -trimpath -ldflags "-s -w $ldflags" -o "$bin/.$name.tmp" "$pkg") ||
        fail "go build $pkg"
    mv -f "$bin/.$name.tmp" "$bin/$name"
}

# --- etcd: a wrapper module requiring the server, its sibling modules pinned to the same release.
if [ ! -x "$bin/etcd" ]; then
    progress "etcd v$etcd_version"
    d=$work/etcd
    mkdir -p "$d"
    cat >"$d/go.mod" <<EOF
module hwemu.local/etcd-build

go 1.24

require go.etcd.io/etcd/server/v3 v$etcd_version

replace (
	go.etcd.io/etcd/api/v3 => go.etcd.io/etcd/api/v3 v$etcd_version
	go.etcd.io/etcd/client/pkg/v3 => go.etcd.io/etcd/client/pkg/v3 v$etcd_version
	go.etcd.io/etcd/client/v3 => go.etcd.io/etcd/client/v3 v$etcd_version
	go.etcd.io/etcd/pkg/v3 => go.etcd.io/etcd/pkg/v3 v$etcd_version
)
EOF
    cat >"$d/tools.go" <<'EOF'
//go:build tools

// Imports the etcd server's main package so that `go mod tidy` keeps its dependencies.
package tools

import _ "go.etcd.io/etcd/server/v3"
EOF
    (cd "$d" && run "$go" mod tidy) || fail "go mod tidy (etcd)"
    build_into_bin "$d" go.etcd.io/etcd/server/v3 etcd
else
    progress "etcd v$etcd_version (already built)"
fi

# --- Kubernetes: a wrapper module requiring k8s.io/kubernetes, with one replace per staging module
# (the list is k8s.io/kubernetes's own `k8s.io/X => ./staging/src/k8s.io/X` lines, each pointed at the
# published module k8s.io/X v0.MINOR.PATCH instead).
kube_bins="kube-apiserver kube-scheduler kube-controller-manager kubectl"
kube_missing=""
for b in $kube_bins; do [ -x "$bin/$b" ] || kube_missing="$kube_missing $b"; done
d=$work/kubernetes
if [ -n "$kube_missing" ]; then
    mkdir -p "$d"
    (cd "$d" && run "$go" mod download -json "k8s.io/kubernetes@v$k8s_version") || fail "go mod download k8s.io/kubernetes"
    kmod=$(cd "$d" && "$go" mod download -json "k8s.io/kubernetes@v$k8s_version" |
           sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",\{0,1\}$/\1/p')
    [ -f "$kmod" ] || fail "finding k8s.io/kubernetes@v$k8s_version's go.mod in the module cache"
    staging_version=v0.${k8s_version#1.}
    replaces=$(sed -n 's|^[[:space:]]*\(k8s\.io/[A-Za-z0-9._-]*\) => \./staging/src/k8s\.io/.*$|\1|p' "$kmod" | sort -u)
    [ -n "$replaces" ] || fail "reading the staging replaces of $kmod"
    {
        echo "module hwemu.local/kubernetes-build"
        echo
        echo "go 1.24.0"
        echo
        echo "godebug default=go1.24"
        echo
        echo "require k8s.io/kubernetes v$k8s_version"
        echo
        echo "replace ("
        for m in $replaces; do printf '\t%s => %s %s\n' "$m" "$m" "$staging_version"; done
        echo ")"
    } >"$d/go.mod"
    echo "fetch-kubernetes: $(echo "$replaces" | wc -l) staging modules replaced by their $staging_version releases" >>"$log"
    cat >"$d/tools.go" <<'EOF'
//go:build tools

// Imports the four commands so that `go mod tidy` keeps their dependencies.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
EOF
    (cd "$d" && run "$go" mod tidy) || fail "go mod tidy (kubernetes)"
fi
# Without these /version says v0.0.0-master, and kubectl warns about the skew.
kube_ldflags="-X k8s.io/component-base/version.gitVersion=v$k8s_version"
kube_ldflags="$kube_ldflags -X k8s.io/component-base/version.gitMajor=${k8s_version%%.*}"
minor=${k8s_version#*.}
kube_ldflags="$kube_ldflags -X k8s.io/component-base/version.gitMinor=${minor%%.*}"
kube_ldflags="$kube_ldflags -X k8s.io/component-base/version.gitTreeState=clean"
kube_ldflags="$kube_ldflags -X k8s.io/client-go/pkg/version.gitVersion=v$k8s_version"
kube_ldflags="$kube_ldflags -X k8s.io/client-go/pkg/version.gitMajor=${k8s_version%%.*}"
kube_ldflags="$kube_ldflags -X k8s.io/client-go/pkg/version.gitMinor=${minor%%.*}"
for b in $kube_bins; do
    if [ -x "$bin/$b" ]; then
        progress "$b v$k8s_version (already built)"
        continue
    fi
    progress "$b v$k8s_version"
    build_into_bin "$d" "k8s.io/kubernetes/cmd/$b" "$b" "$kube_ldflags"
done

# --- KWOK and helm: no relative replaces, so a plain `go install MODULE/cmd@version` into a
# temporary GOBIN, moved into $bin when it succeeds.
install_into_bin() {
    local pkg=$1 name=$2 ldflags=${3:-}
    local gobin=$work/gobin-$name
    rm -rf "$gobin"
    mkdir -p "$gobin"
    (cd "$work" && GOBIN=$gobin run "$go" install -p 2 -trimpath -ldflags "-s -w $ldflags" "$pkg") ||
        fail "go install $pkg"
    mv -f "$gobin/$name" "$bin/$name"
    rm -rf "$gobin"
}
if [ ! -x "$bin/kwok" ]; then
    progress "kwok v$kwok_version"
    # (its version is a constant of the module: no ldflags needed)
    install_into_bin "sigs.k8s.io/kwok/cmd/kwok@v$kwok_version" kwok
else
    progress "kwok v$kwok_version (already built)"
fi
if [ ! -x "$bin/helm" ]; then
    progress "helm v$helm_version"
    # The Kubernetes version helm assumes without a cluster (`helm template`'s .Capabilities, a chart's
    # kubeVersion check, lint's deprecations): helm's Makefile sets it from the client-go it requires
    # (v0.MINOR.x is Kubernetes 1.MINOR); without it helm says v1.20.0.
    hmod=$(cd "$work" && "$go" mod download -json "helm.sh/helm/v3@v$helm_version" |
           sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",\{0,1\}$/\1/p')
    cg=$(sed -n 's|^[[:space:]]*k8s\.io/client-go v0\.\([0-9]*\)\..*|\1|p' "$hmod" 2>/dev/null | head -1)
    [ -n "$cg" ] || fail "reading k8s.io/client-go's version from helm $helm_version's go.mod ($hmod)"
    helm_ldflags="-X helm.sh/helm/v3/internal/version.version=v$helm_version"
    for p in helm.sh/helm/v3/pkg/lint/rules helm.sh/helm/v3/pkg/chartutil; do
        helm_ldflags="$helm_ldflags -X $p.k8sVersionMajor=1 -X $p.k8sVersionMinor=$cg"
    done
    install_into_bin "helm.sh/helm/v3/cmd/helm@v$helm_version" helm "$helm_ldflags"
else
    progress "helm v$helm_version (already built)"
fi

miss=$(missing_binaries)
[ -z "$miss" ] || fail "the build (missing after it: $miss)"
cpu_end=$(awk '{print $14 + $15 + $16 + $17}' /proc/$$/stat)
ticks=$(getconf CLK_TCK)
summary="built $tag in $(( $(date +%s) - start )) s wall, $(( (cpu_end - cpu_start) / ticks )) s CPU (user+system of the builds)"
echo "fetch-kubernetes: $summary" >>"$log"
echo "fetch-kubernetes: $summary" >&2
date -u +%FT%TZ >"$stamp"
echo "$bin"
