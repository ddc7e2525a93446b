#!/bin/sh
# A throwaway PostgreSQL server for the history store's tests: Debian's
# postgresql (scripts/install.sh installs it), a cluster of its own in DIR,
# run by the postgres user, trusting local connections, listening on
# 127.0.0.1 only, on a free port. .ci/run starts one for the suite and stops
# it after; tests/test_history_pg.py starts one per module when CI has not.
#
#   scripts/ci_postgres.sh start DIR   # prints postgresql://postgres@127.0.0.1:PORT
#   scripts/ci_postgres.sh stop DIR    # stops it and removes DIR
#
# Why a cluster of its own rather than Debian's "main" one (pg_ctlcluster):
# the package's cluster may be missing, already running for something else,
# or on port 5432 taken; one in DIR is started and removed whole, leaving the
# machine as it was. Exit status: 0 done, 2 bad arguments, 3 no PostgreSQL
# server installed, 1 anything else (the message says what).
set -eu

usage() {
    echo "usage: $0 start DIR | stop DIR" >&2
    exit 2
}
[ $# -eq 2 ] || usage
action=$1
dir=$2

bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
if [ -z "$bindir" ] || [ ! -x "$bindir/initdb" ]; then
    echo "ci_postgres.sh: no PostgreSQL server installed (/usr/lib/postgresql/*/bin/initdb:" \
         "Debian's postgresql package; scripts/install.sh installs it)" >&2
    exit 3
fi

# The server refuses to run as root: its commands run as the postgres user.
as_postgres() {
    if [ "$(id -u)" -eq 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

case $action in
start)
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    if [ -e "$dir/data" ]; then
        echo "ci_postgres.sh: $dir/data exists: start takes a new directory" >&2
        exit 2
    fi
    [ "$(id -u)" -ne 0 ] || chown postgres:postgres "$dir"
    chmod 755 "$dir"
    if ! as_postgres test -w "$dir"; then
        echo "ci_postgres.sh: $dir: the postgres user cannot write there (a parent" \
             "directory it cannot enter?): take a directory such as \$(mktemp -d)" >&2
        exit 2
    fi
    if ! as_postgres "$bindir/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 \
            >"$dir/initdb.log" 2>&1; then
        echo "ci_postgres.sh: initdb failed:" >&2
        tail -n 5 "$dir/initdb.log" >&2
        exit 1
    fi
    # A port nobody listens on now; another process may take it before the
    # server does, so a failed start tries another, three times.
    tries=0
    while :; do
        port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
        if as_postgres "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
                -o "-p $port -k $dir -c listen_addresses=127.0.0.1" start >/dev/null; then
            break
        fi
        tries=$((tries + 1))
        if [ $tries -ge 3 ]; then
            echo "ci_postgres.sh: the server did not start (port $port):" >&2
            tail -n 5 "$dir/server.log" >&2
            exit 1
        fi
    done
    echo "postgresql://postgres@127.0.0.1:$port" | tee "$dir/url"
    ;;
stop)
    # Stopped only if running: stop also cleans up after a start that failed.
    if [ -d "$dir/data" ] && as_postgres "$bindir/pg_ctl" -D "$dir/data" status >/dev/null 2>&1 &&
            ! as_postgres "$bindir/pg_ctl" -D "$dir/data" -m fast -w -t 60 stop >/dev/null; then
        echo "ci_postgres.sh: the server in $dir did not stop; see $dir/server.log" >&2
        exit 1
    fi
    rm -rf "$dir"
    ;;
*)
    usage
    ;;
esac
