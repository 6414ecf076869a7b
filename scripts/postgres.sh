#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# postgres.sh — a throwaway local PostgreSQL cluster for freshbench.
#
# Usage: scripts/postgres.sh start|stop|restart|status|url
#
#   start    install Debian's postgresql package if no server binaries are
#            found, initdb once, start the cluster (idempotent) and print
#            its URL
#   stop     stop it (fast shutdown: open transactions are rolled back)
#   restart  fast restart (used by the restart test of target/postgres)
#   status   exit 0 and describe it when running, exit 3 when not
#   url      print the freshbench target URL of the cluster
#
# Environment:
#   FRESHBENCH_PG_DIR            cluster directory (default $FRESHBENCH_CACHE/postgres)
#   FRESHBENCH_PG_PORT           TCP port on 127.0.0.1 (default 15432)
# plus the common knobs described in lib-postgres.sh (FRESHBENCH_CACHE,
# FRESHBENCH_PG_PASSWORD, FRESHBENCH_PG_OS_USER, FRESHBENCH_PG_START_TIMEOUT,
# FRESHBENCH_PG_BIN).
#
# Layout: $DIR/data is the data directory (its unix socket lives there too),
# $DIR/postgres.log the server log. Settings the script owns are rewritten
# into $DIR/data/freshbench.conf at every start; put your own overrides in
# $DIR/data/freshbench.local.conf, which is read after it and never touched.
set -euo pipefail

# shellcheck source=lib-postgres.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib-postgres.sh"

PORT=${FRESHBENCH_PG_PORT:-15432}
check_port FRESHBENCH_PG_PORT "$PORT"

# locate sets DIR, DATA and LOG; $1 is create or lookup.
locate() {
	resolve_dir "$1" FRESHBENCH_PG_DIR "${FRESHBENCH_PG_DIR:-}" postgres
	DATA=$DIR/data
	LOG=$DIR/postgres.log
}

print_url() {
	local port=$PORT
	if is_running; then
		port=$(running_port)
	fi
	url_of "$port"
}

start() {
	ensure_bin
	ensure_user
	locate create
	if is_running; then
		local rp
		rp=$(running_port)
		[[ $rp == "$PORT" ]] || die "the cluster in $DATA already runs on port $rp, not $PORT: stop it first"
		ensure_db
		note "already running ($BIN, $DATA)"
		print_url
		return
	fi
	if port_in_use; then
		die "port $PORT on 127.0.0.1 is already in use by another process $(port_owner); set FRESHBENCH_PG_PORT to a free port"
	fi
	init_cluster
	write_config "" ""
	pg_ctl_start PostgreSQL
	ensure_db
	note "started $("$BIN/postgres" --version) on 127.0.0.1:$PORT, data in $DATA, log in $LOG"
	print_url
}

stop() {
	locate lookup
	pg_ctl_stop PostgreSQL
}

restart() {
	locate lookup
	if ! is_running; then
		start
		return
	fi
	local logsize
	logsize=$(stat -c %s "$LOG" 2>/dev/null || echo 0)
	if ! run_as "$BIN/pg_ctl" restart -D "$DATA" -l "$LOG" -m fast -w -t "$START_TIMEOUT" >/dev/null; then
		log_tail "$LOG" "$logsize"
		die "PostgreSQL failed to restart (or did not within ${START_TIMEOUT}s); full log in $LOG"
	fi
	note "restarted ($DATA)"
}

status() {
	locate lookup
	if is_running; then
		echo "running: pid $(sed -n 1p "$DATA/postmaster.pid") on 127.0.0.1:$(running_port), data in $DATA"
		print_url
		return 0
	fi
	echo "stopped (data dir $DATA)"
	return 3
}

cmd=${1:-}
case $cmd in
start) start ;;
stop | restart | status | url)
	if [[ -z $BIN ]]; then
		[[ $cmd == url ]] && { url_of "$PORT"; exit 0; }
		[[ $cmd == status ]] && { echo "stopped (no PostgreSQL installed)"; exit 3; }
		[[ $cmd == stop ]] && exit 0
		die "no PostgreSQL server installed; run '$0 start'"
	fi
	if [[ $cmd == url ]]; then
		locate lookup
		print_url
	else
		"$cmd"
	fi
	;;
*)
	echo "usage: $0 start|stop|restart|status|url" >&2
	exit 2
	;;
esac
