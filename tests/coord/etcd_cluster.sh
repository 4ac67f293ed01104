#!/usr/bin/env bash
# A throwaway etcd cluster on 127.0.0.1 for the coordination tests (and later the server's
# fault tests). Every member's files are under DIR.
#   etcd_cluster.sh start DIR [N]     start N members (default 3) on free ports; wait until healthy
#   etcd_cluster.sh endpoints DIR     host:port,host:port,... of the members' client URLs
#   etcd_cluster.sh signal DIR I SIG  send SIG (KILL, STOP, CONT, TERM) to member I (1-based)
#   etcd_cluster.sh restart DIR I     start member I again on its data dir (after a KILL)
#   etcd_cluster.sh leader DIR        the index of the current leader
#   etcd_cluster.sh wait-healthy DIR  wait (bounded) until every running member is healthy
#   etcd_cluster.sh start-tls DIR     one more member, alone, serving clients over TLS with client
#                                     certificates (DIR/tls: ca.crt, client.crt, client.key,
#                                     endpoint); prints its endpoint
#   etcd_cluster.sh stop DIR          kill every member (SIGCONT first, then SIGKILL)
set -euo pipefail
cmd=${1:?usage: etcd_cluster.sh start|endpoints|signal|restart|leader|wait-healthy|stop DIR ...}
dir=${2:?a directory}

# Running: alive and not a zombie (a killed member may wait a while to be reaped by init).
member_running() {
    local pid state
    pid=$(cat "$dir/m$1.pid" 2>/dev/null) || return 1
    state=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) || return 1
    [ -n "$state" ] && [ "$state" != Z ] && [ "$state" != X ]
}

start_member() {
    local i=$1
    # setsid: a member is not in the test's process group (ctest's timeout kills that).
    setsid bash "$dir/m$i.sh" >>"$dir/m$i.log" 2>&1 </dev/null &
    echo $! >"$dir/m$i.pid"
}

wait_healthy() {
    local eps deadline
    eps=$(cat "$dir/endpoints")
    deadline=$((SECONDS + 30))
    while :; do
        local all=1
        IFS=, read -ra list <<<"$eps"
        for i in "${!list[@]}"; do
            member_running $((i + 1)) || continue
            etcdctl --endpoints="${list[$i]}" --command-timeout=1s endpoint health >/dev/null 2>&1 || all=0
        done
        [ "$all" -eq 1 ] && return 0
        if [ "$SECONDS" -ge "$deadline" ]; then
            echo "etcd_cluster: members not healthy after 30 s; logs in $dir" >&2
            return 1
        fi
        sleep 0.2
    done
}

case "$cmd" in
start)
    n=${3:-3}
    mkdir -p "$dir"
    # 2n free ports, held together while they are chosen so that none repeats.
    ports=$(python3 -c '
import socket, sys
socks = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in socks: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))
for s in socks: s.close()' $((2 * n)))
    read -ra p <<<"$ports"
    cluster="" eps=""
    for ((i = 1; i <= n; i++)); do
        cluster+="${cluster:+,}m$i=http://127.0.0.1:${p[$((2 * i - 1))]}"
        eps+="${eps:+,}127.0.0.1:${p[$((2 * i - 2))]}"
    done
    echo "$eps" >"$dir/endpoints"
    for ((i = 1; i <= n; i++)); do
        client=${p[$((2 * i - 2))]} peer=${p[$((2 * i - 1))]}
        # Short heartbeats and elections: a lost leader is replaced in about a second.
        cat >"$dir/m$i.sh" <<EOS
exec etcd --name m$i --data-dir "$dir/m$i.data" \\
  --listen-client-urls http://127.0.0.1:$client --advertise-client-urls http://127.0.0.1:$client \\
  --listen-peer-urls http://127.0.0.1:$peer --initial-advertise-peer-urls http://127.0.0.1:$peer \\
  --initial-cluster $cluster --initial-cluster-token ri-coord-test --initial-cluster-state new \\
  --heartbeat-interval 50 --election-timeout 500 --log-level warn
EOS
        start_member "$i"
    done
    wait_healthy
    ;;
start-tls)
    t="$dir/tls"
    mkdir -p "$t"
    read -r client peer < <(python3 -c '
import socket
a, b = socket.socket(), socket.socket()
a.bind(("127.0.0.1", 0)); b.bind(("127.0.0.1", 0))
print(a.getsockname()[1], b.getsockname()[1])')
    ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
    {
        openssl req -x509 "${ec[@]}" -keyout "$t/ca.key" -out "$t/ca.crt" -days 1 -subj /CN=ri-coord-test-ca
        for who in server client; do
            openssl req "${ec[@]}" -keyout "$t/$who.key" -out "$t/$who.csr" -subj "/CN=ri-coord-$who"
            printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n' >"$t/$who.ext"
            openssl x509 -req -in "$t/$who.csr" -CA "$t/ca.crt" -CAkey "$t/ca.key" -CAcreateserial \
                -out "$t/$who.crt" -days 1 -extfile "$t/$who.ext"
        done
    } >"$t/openssl.log" 2>&1
    echo "127.0.0.1:$client" >"$t/endpoint"
    cat >"$dir/mtls.sh" <<EOS
exec etcd --name mtls --data-dir "$t/data" \\
  --listen-client-urls https://127.0.0.1:$client --advertise-client-urls https://127.0.0.1:$client \\
  --cert-file "$t/server.crt" --key-file "$t/server.key" --trusted-ca-file "$t/ca.crt" --client-cert-auth \\
  --listen-peer-urls http://127.0.0.1:$peer --initial-advertise-peer-urls http://127.0.0.1:$peer \\
  --initial-cluster mtls=http://127.0.0.1:$peer --log-level warn
EOS
    start_member tls
    deadline=$((SECONDS + 30))
    until etcdctl --endpoints="https://127.0.0.1:$client" --cacert "$t/ca.crt" --cert "$t/client.crt" \
        --key "$t/client.key" --command-timeout=1s endpoint health >/dev/null 2>&1; do
        if [ "$SECONDS" -ge "$deadline" ]; then
            echo "etcd_cluster: the TLS member is not healthy after 30 s; log in $dir/mtls.log" >&2
            exit 1
        fi
        sleep 0.2
    done
    echo "127.0.0.1:$client"
    ;;
endpoints) cat "$dir/endpoints" ;;
signal)
    i=${3:?member} sig=${4:?signal}
    kill -s "$sig" "$(cat "$dir/m$i.pid")"
    if [ "$sig" = KILL ]; then
        # Wait until it is gone (its ports free) before a restart can reuse them.
        while member_running "$i"; do sleep 0.05; done
    fi
    ;;
restart) start_member "${3:?member}" ;;
wait-healthy) wait_healthy ;;
leader)
    IFS=, read -ra list <<<"$(cat "$dir/endpoints")"
    for i in "${!list[@]}"; do
        member_running $((i + 1)) || continue
        st=$(etcdctl --endpoints="${list[$i]}" --command-timeout=1s endpoint status -w json 2>/dev/null) || continue
        if python3 -c 'import json,sys; s=json.loads(sys.argv[1])[0]["Status"]; sys.exit(0 if s["leader"]==s["header"]["member_id"] else 1)' "$st"; then
            echo $((i + 1))
            exit 0
        fi
    done
    echo "etcd_cluster: no leader found" >&2
    exit 1
    ;;
stop)
    for f in "$dir"/m*.pid; do
        [ -e "$f" ] || continue
        pid=$(cat "$f")
        kill -CONT "$pid" 2>/dev/null || true
        kill -KILL "$pid" 2>/dev/null || true
    done
    ;;
*) echo "etcd_cluster: unknown command $cmd" >&2; exit 2 ;;
esac
