# A real Kubernetes control plane for the tests, sourced (not run): etcd, kube-apiserver,
# kube-scheduler, kube-controller-manager and KWOK on 127.0.0.1, on free ports below the kernel's
# ephemeral range (kube_port), with test-only auth (a throw-away CA and serving certificate made by
# openssl, one static admin token, AlwaysAllow), its state and logs in one directory. The
# binaries are scripts/fetch-kubernetes.sh's (built once per cache, before the tests: ./test.sh
# does it); KWOK plays every Node annotated
# kwok.x-k8s.io/node: fake with the chart's Stages (charts/hwemu/files/kwok-stages.yaml).
#
#   . tests/kube/control_plane.sh
#   kube_need TMP          sets $kube_bin, or prints why the binaries are missing and exits 77
#                          (ctest's SKIP_RETURN_CODE: reported skipped)
#   kube_start DIR         starts it all; returns 1 (with the failing component's log tail) when a
#                          component exits or never gets ready. Exports KUBECONFIG=DIR/kubeconfig
#                          (server, CA, token) and kube_bin, kube_server, kube_token, kube_ca, and
#                          sets kubectl ("$kubectl" get nodes). Call it from the test's own shell,
#                          not from $( ): each component dies with the shell that started it.
#   kube_stop              stops every component (TERM, then KILL after 10 s), waits for them
#
# kube_start chains kube_stop in front of the shell's EXIT trap and turns INT, TERM and HUP into an
# exit, so nothing is left behind when a test fails, is interrupted or is killed by ctest's timeout;
# each component also runs under `setpriv --pdeathsig KILL`, so even a SIGKILLed test shell takes
# them with it. Ready means: /readyz of the apiserver answers ok, the scheduler's and the
# controller-manager's /healthz answer ok, KWOK runs, and the controller-manager has created the
# `default` ServiceAccount (pods are refused without it).

kube_pids=""
kube_dir=""

# kube_need TMP: the bin dir in $kube_bin ($HWEMU_KUBE_BIN when set, else the fetch script's).
kube_need() {
    local here
    here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
    if [ -n "${HWEMU_KUBE_BIN:-}" ]; then
        kube_bin=$HWEMU_KUBE_BIN
    elif ! kube_bin=$("$here/scripts/fetch-kubernetes.sh" path 2>"$1/kube-path.err"); then
        cat "$1/kube-path.err"
        echo "SKIP: the Kubernetes control plane is not built (scripts/fetch-kubernetes.sh build)"
        exit 77
    fi
    local b
    for b in etcd kube-apiserver kube-scheduler kube-controller-manager kubectl kwok; do
        if [ ! -x "$kube_bin/$b" ]; then
            echo "$kube_bin/$b is missing: run scripts/fetch-kubernetes.sh build (or unset HWEMU_KUBE_BIN)"
            echo "SKIP: the Kubernetes control plane is not built"
            exit 77
        fi
    done
    export kube_bin
    kubectl=$kube_bin/kubectl
}

# kube_port: a TCP port on 127.0.0.1 that nothing listens on now, picked at random from the 12,000
# below the kernel's ephemeral range (ip_local_port_range). A port the kernel hands out
# (free_port) can be taken before the component binds it, seconds later: by another test's
# free_port or by any outgoing connection (the apiserver's to etcd, a client's), and the
# component then exits with "address already in use". Ports below the range are only ever
# taken by a listener that chose them.
kube_port() {
    /usr/bin/python3 -c '
import random, socket
low = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
for _ in range(1000):
    port = random.randrange(max(1024, low - 12000), low)
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", port))
    except OSError:
        continue
    finally:
        s.close()
    print(port)
    break
else:
    raise SystemExit("no free port below %d" % low)'
}
# kube_launch NAME ARGS...: one component in the background, its output in $kube_dir/NAME.log.
kube_launch() {
    local name=$1
    shift
    setpriv --pdeathsig KILL "$@" >"$kube_dir/$name.log" 2>&1 &
    kube_pids="$kube_pids $name:$!"
}

# kube_alive: 0 while every component launched so far runs; else prints which died, with its log.
kube_alive() {
    local e
    for e in $kube_pids; do
        if ! kill -0 "${e#*:}" 2>/dev/null; then
            echo "control plane: ${e%%:*} exited; the end of $kube_dir/${e%%:*}.log:" >&2
            tail -15 "$kube_dir/${e%%:*}.log" >&2
            return 1
        fi
    done
}

# kube_wait WHAT SECONDS CMD...: runs CMD every 0.2 s until it succeeds; 1 (saying what) when a
# component dies or SECONDS pass.
kube_wait() {
    local what=$1 secs=$2 i
    shift 2
    for i in $(seq $((secs * 5))); do
        "$@" >/dev/null 2>&1 && return 0
        kube_alive || return 1
        sleep 0.2
    done
    echo "control plane: $what not ready after $secs s (logs in $kube_dir)" >&2
    return 1
}

kube_https_ok() {
    [ "$(curl -s --cacert "$kube_ca" -H "Authorization: Bearer $kube_token" "$1")" = ok ]
}
kube_https_ok_insecure() {
    # the scheduler's and controller-manager's serving certificates are self-signed by them
    [ "$(curl -sk "$1")" = ok ]
}

kube_start() {
    kube_dir=$(mkdir -p "$1" && cd "$1" && pwd)
    [ -n "${kube_bin:-}" ] || kube_need "$kube_dir"
    local d=$kube_dir
    local stages
    stages=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/charts/hwemu/files/kwok-stages.yaml

    # Stop everything on any exit of the test shell, before whatever the test's trap does.
    local prev=()
    eval "prev=( $(trap -p EXIT) )"
    trap "kube_stop; ${prev[2]:-}" EXIT
    local s
    for s in INT TERM HUP; do
        [ -n "$(trap -p $s)" ] || trap "exit 143" $s
    done

    # Test-only PKI: a CA, the apiserver's serving certificate for every name a client uses, the
    # service-account signing key pair, one admin token (system:masters; AlwaysAllow anyway).
    (
        cd "$d" &&
        openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 2 \
            -subj "/CN=hwemu-test-ca" &&
        openssl req -newkey rsa:2048 -nodes -keyout apiserver.key -out apiserver.csr \
            -subj "/CN=kube-apiserver" &&
        printf '%s\n' "subjectAltName=IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local" \
            "extendedKeyUsage=serverAuth" "keyUsage=digitalSignature,keyEncipherment" >apiserver.ext &&
        openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 \
            -extfile apiserver.ext -out apiserver.crt &&
        openssl genrsa -out sa.key 2048 &&
        openssl rsa -in sa.key -pubout -out sa.pub
    ) >"$d/openssl.log" 2>&1 || { echo "control plane: openssl failed:" >&2; tail -5 "$d/openssl.log" >&2; return 1; }
    kube_ca=$d/ca.crt
    kube_token=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
    echo "$kube_token,admin,admin,system:masters" >"$d/tokens.csv"

    local etcd_port etcd_peer api_port sched_port cm_port kwok_port
    etcd_port=$(kube_port) etcd_peer=$(kube_port) api_port=$(kube_port)
    sched_port=$(kube_port) cm_port=$(kube_port) kwok_port=$(kube_port)
    kube_server=https://127.0.0.1:$api_port
    cat >"$d/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: hwemu-test
  cluster:
    server: $kube_server
    certificate-authority-data: $(base64 -w0 "$d/ca.crt")
users:
- name: admin
  user:
    token: $kube_token
contexts:
- name: hwemu-test
  context: {cluster: hwemu-test, user: admin, namespace: default}
current-context: hwemu-test
EOF
    export KUBECONFIG=$d/kubeconfig kube_server kube_token kube_ca
    kubectl=$kube_bin/kubectl

    kube_launch etcd "$kube_bin/etcd" --name hwemu-test --data-dir "$d/etcd" \
        --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
        --listen-peer-urls "http://127.0.0.1:$etcd_peer" --initial-advertise-peer-urls "http://127.0.0.1:$etcd_peer" \
        --initial-cluster "hwemu-test=http://127.0.0.1:$etcd_peer" --unsafe-no-fsync --log-level warn
    kube_wait "etcd (127.0.0.1:$etcd_port)" 30 curl -sf "http://127.0.0.1:$etcd_port/health" || return 1

    kube_launch kube-apiserver "$kube_bin/kube-apiserver" --etcd-servers "http://127.0.0.1:$etcd_port" \
        --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$api_port" \
        --tls-cert-file "$d/apiserver.crt" --tls-private-key-file "$d/apiserver.key" --client-ca-file "$d/ca.crt" \
        --token-auth-file "$d/tokens.csv" --authorization-mode AlwaysAllow \
        --service-account-issuer https://kubernetes.default.svc.cluster.local \
        --service-account-key-file "$d/sa.pub" --service-account-signing-key-file "$d/sa.key" \
        --service-cluster-ip-range 10.0.0.0/24 --endpoint-reconciler-type none
    kube_wait "kube-apiserver ($kube_server/readyz)" 90 kube_https_ok "$kube_server/readyz" || return 1

    kube_launch kube-scheduler "$kube_bin/kube-scheduler" --kubeconfig "$d/kubeconfig" --leader-elect=false \
        --bind-address 127.0.0.1 --secure-port "$sched_port" \
        --authentication-kubeconfig "$d/kubeconfig" --authorization-kubeconfig "$d/kubeconfig"
    kube_launch kube-controller-manager "$kube_bin/kube-controller-manager" --kubeconfig "$d/kubeconfig" \
        --leader-elect=false --bind-address 127.0.0.1 --secure-port "$cm_port" \
        --authentication-kubeconfig "$d/kubeconfig" --authorization-kubeconfig "$d/kubeconfig" \
        --service-account-private-key-file "$d/sa.key" --root-ca-file "$d/ca.crt" \
        --use-service-account-credentials=false
    kube_launch kwok "$kube_bin/kwok" --kubeconfig "$d/kubeconfig" --config "$stages" \
        --manage-all-nodes=false --manage-nodes-with-annotation-selector kwok.x-k8s.io/node=fake \
        --node-lease-duration-seconds 40 --cidr 10.244.0.0/16 --node-ip 127.0.0.1 \
        --server-address "127.0.0.1:$kwok_port"
    kube_wait "kube-scheduler (https://127.0.0.1:$sched_port/healthz)" 60 \
        kube_https_ok_insecure "https://127.0.0.1:$sched_port/healthz" || return 1
    kube_wait "kube-controller-manager (https://127.0.0.1:$cm_port/healthz)" 60 \
        kube_https_ok_insecure "https://127.0.0.1:$cm_port/healthz" || return 1
    kube_wait "kwok (http://127.0.0.1:$kwok_port/healthz)" 60 curl -sf "http://127.0.0.1:$kwok_port/healthz" || return 1
    kube_wait "the default ServiceAccount" 60 "$kubectl" get serviceaccount default -n default || return 1
}

kube_stop() {
    [ -n "$kube_pids" ] || return 0
    local e i left
    for e in $kube_pids; do kill -TERM "${e#*:}" 2>/dev/null; done
    for i in $(seq 50); do
        left=""
        for e in $kube_pids; do kill -0 "${e#*:}" 2>/dev/null && left="$left $e"; done
        [ -z "$left" ] && break
        sleep 0.2
    done
    for e in $left; do
        echo "control plane: ${e%%:*} ignored SIGTERM for 10 s; killed" >&2
        kill -KILL "${e#*:}" 2>/dev/null
    done
    for e in $kube_pids; do wait "${e#*:}" 2>/dev/null; done
    kube_pids=""
}
