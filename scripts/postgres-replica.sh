#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# postgres-replica.sh — a PostgreSQL primary and its streaming hot standby on
# 127.0.0.1, for freshbench's read-endpoint measurements. It is a pair of its
# own, apart from the cluster of scripts/postgres.sh.
#
# Usage: scripts/postgres-replica.sh COMMAND
#
#   start          initdb the primary once, start it, make the standby once
#                  with pg_basebackup, start it, wait until it streams, and
#                  print both URLs (primary first); idempotent
#   stop           stop the standby, then the primary (fast shutdown)
#   status         describe both and the replication; exit 0 when both run,
#                  3 when not
#   url primary    print the freshbench target URL of the primary
#   url standby    print the one of the standby (read-only: a read endpoint)
#   stop-standby   stop only the standby (for outage tests)
#   start-standby  start it again and wait until it streams
#
# Synchronous or asynchronous, per session. The primary names the standby
# in synchronous_standby_names ('freshbench_standby', the application_name
# the standby connects with) but its default synchronous_commit is local.
# So a session that sets nothing (or off or local) commits without waiting
# for the standby: asynchronous replication, and writes go on while the
# standby is down. A session that sets synchronous_commit = remote_apply
# (freshbench's postgres setting synchronous_commit=remote_apply) waits
# until the standby has applied its commit, so the standby sees a row as
# soon as the primary acknowledged it; such commits wait while the standby
# is down. on and remote_write wait for the standby's flush or write.
#
# The standby streams from a physical replication slot, so the primary keeps
# the WAL the standby misses while it is stopped (at most
# max_slot_wal_keep_size) and it catches up when started again. It runs with
# hot_standby_feedback, so that replaying the primary's cleanup does not
# cancel its queries, and reports its positions every second
# (wal_receiver_status_interval), which is what pg_stat_replication's lags
# are computed from.
#
# Environment:
#   FRESHBENCH_PG_REPLICA_DIR    directory of the pair (default $FRESHBENCH_CACHE/postgres-replica)
#   FRESHBENCH_PG_PRIMARY_PORT   TCP port of the primary on 127.0.0.1 (default 15433)
#   FRESHBENCH_PG_STANDBY_PORT   TCP port of the standby on 127.0.0.1 (default 15434)
# plus the common knobs described in lib-postgres.sh (FRESHBENCH_CACHE,
# FRESHBENCH_PG_PASSWORD, FRESHBENCH_PG_OS_USER, FRESHBENCH_PG_START_TIMEOUT,
# FRESHBENCH_PG_BIN).
#
# Layout: $DIR/primary and $DIR/standby are the data directories,
# $DIR/primary.log and $DIR/standby.log the server logs, $DIR/pgpass the
# password file the standby connects to the primary with (mode 0600).
set -euo pipefail

# shellcheck source=lib-postgres.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib-postgres.sh"

PRIMARY_PORT=${FRESHBENCH_PG_PRIMARY_PORT:-15433}
STANDBY_PORT=${FRESHBENCH_PG_STANDBY_PORT:-15434}
check_port FRESHBENCH_PG_PRIMARY_PORT "$PRIMARY_PORT"
check_port FRESHBENCH_PG_STANDBY_PORT "$STANDBY_PORT"
[[ $PRIMARY_PORT != "$STANDBY_PORT" ]] || die "FRESHBENCH_PG_PRIMARY_PORT and FRESHBENCH_PG_STANDBY_PORT are both $PRIMARY_PORT; give them different ports"

# The standby's application_name, named by synchronous_standby_names, and
# the name of its replication slot.
readonly STANDBY_NAME=freshbench_standby

# locate sets DIR; $1 is create or lookup.
locate() {
	resolve_dir "$1" FRESHBENCH_PG_REPLICA_DIR "${FRESHBENCH_PG_REPLICA_DIR:-}" postgres-replica
}

# as_primary / as_standby point DATA, PORT and LOG at one of the pair.
as_primary() {
	DATA=$DIR/primary
	PORT=$PRIMARY_PORT
	LOG=$DIR/primary.log
}
as_standby() {
	DATA=$DIR/standby
	PORT=$STANDBY_PORT
	LOG=$DIR/standby.log
}

primary_config() {
	cat <<EOF

# Replication (scripts/postgres-replica.sh): the standby is synchronous when
# a session asks for it (synchronous_commit = remote_apply, on or
# remote_write); by default commits do not wait for it.
synchronous_standby_names = '$STANDBY_NAME'
synchronous_commit = local
max_slot_wal_keep_size = 2GB
EOF
}

standby_config() {
	cat <<EOF

# Replication (scripts/postgres-replica.sh): stream from the primary's slot.
primary_conninfo = 'host=127.0.0.1 port=$PRIMARY_PORT user=$DB_USER application_name=$STANDBY_NAME passfile=$DIR/pgpass'
primary_slot_name = '$STANDBY_NAME'
hot_standby = on
hot_standby_feedback = on
wal_receiver_status_interval = 1s
EOF
}

readonly REPLICATION_HBA='host    replication  all   127.0.0.1/32   scram-sha-256'

# write_pgpass writes the password file of the standby's connection.
write_pgpass() {
	local pw=${PASSWORD//\\/\\\\}
	pw=${pw//:/\\:}
	(umask 077 && printf '127.0.0.1:%s:*:%s:%s\n' "$PRIMARY_PORT" "$DB_USER" "$pw" >"$DIR/pgpass")
	if ((IS_ROOT)); then chown "$SVC_USER:" "$DIR/pgpass"; fi
}

# system_id prints the system identifier of the cluster in $DATA.
system_id() {
	run_as "$BIN/pg_controldata" -D "$DATA" 2>/dev/null | sed -n 's/^Database system identifier: *//p'
}

# port_free dies when the port of the current cluster is taken by another
# process.
port_free() {
	if port_in_use; then
		die "port $PORT on 127.0.0.1 is already in use by another process $(port_owner); set FRESHBENCH_PG_${1}_PORT to a free port"
	fi
}

start_primary() {
	as_primary
	if is_running; then
		[[ $(running_port) == "$PORT" ]] || die "the primary in $DATA already runs on port $(running_port), not $PORT: stop the pair first"
	else
		port_free PRIMARY
		init_cluster
		write_config "$(primary_config)" "$REPLICATION_HBA"
		pg_ctl_start "the primary"
		note "started the primary on 127.0.0.1:$PORT, data in $DATA, log in $LOG"
	fi
	ensure_db
	psql_local -c "SELECT pg_create_physical_replication_slot('$STANDBY_NAME')
		WHERE NOT EXISTS (SELECT 1 FROM pg_replication_slots WHERE slot_name = '$STANDBY_NAME')" >/dev/null ||
		die "could not create the replication slot $STANDBY_NAME on the primary"
}

# make_standby copies the running primary with pg_basebackup, unless the
# standby already is a copy of it. A standby of an older primary (its
# directory was removed and initialized again) is made anew.
make_standby() {
	as_primary
	local want
	want=$(system_id)
	as_standby
	if [[ -f $DATA/PG_VERSION ]]; then
		[[ $(system_id) == "$want" ]] && return 0
		note "the standby in $DATA is not a copy of the current primary: making it anew"
		pg_ctl_stop "the old standby"
		rm -rf "$DATA"
	fi
	[[ -e $DATA ]] && [[ -n $(ls -A "$DATA" 2>/dev/null) ]] && die "$DATA exists, is not empty and is not a PostgreSQL data directory"
	note "making the standby in $DATA with pg_basebackup"
	if ! run_as env PGPASSFILE="$DIR/pgpass" "$BIN/pg_basebackup" -h 127.0.0.1 -p "$PRIMARY_PORT" -U "$DB_USER" \
		--no-password -D "$DATA" -X stream -S "$STANDBY_NAME" -c fast >"$DIR/basebackup.log" 2>&1; then
		tail -n 30 "$DIR/basebackup.log" >&2
		rm -rf "$DATA"
		die "pg_basebackup failed (full output in $DIR/basebackup.log)"
	fi
	run_as touch "$DATA/standby.signal"
}

# wait_streaming waits until the primary reports the standby streaming and
# synchronous: a moment after it starts streaming, the primary still
# counts it as asynchronous, and a remote_apply commit would not wait.
wait_streaming() {
	as_primary
	is_running || die "the primary is not running: run '$0 start'"
	local deadline=$((SECONDS + START_TIMEOUT)) state
	while ((SECONDS < deadline)); do
		state=$(psql_local -At -F ' ' -c "SELECT state, sync_state FROM pg_stat_replication WHERE application_name = '$STANDBY_NAME'" 2>/dev/null || true)
		[[ $state == 'streaming sync' ]] && return 0
		sleep 0.2
	done
	as_standby
	log_tail "$LOG" 0
	die "the standby did not stream from the primary as a synchronous standby within ${START_TIMEOUT}s; see $LOG"
}

start_standby() {
	as_standby
	[[ -f $DATA/standby.signal ]] || die "no standby in $DATA: run '$0 start' first"
	if ! is_running; then
		port_free STANDBY
		check_version
		write_config "$(standby_config)"
		pg_ctl_start "the standby"
		note "started the standby on 127.0.0.1:$PORT, data in $DATA, log in $LOG"
	fi
	wait_streaming
}

start() {
	ensure_bin
	ensure_user
	locate create
	make_dir "$DIR"
	write_pgpass
	start_primary
	make_standby
	start_standby
	note "$("$BIN/postgres" --version): primary and standby streaming"
	url_of "$PRIMARY_PORT"
	url_of "$STANDBY_PORT"
}

stop() {
	locate lookup
	as_standby
	pg_ctl_stop "the standby"
	as_primary
	pg_ctl_stop "the primary"
}

status() {
	locate lookup
	local up=0
	as_primary
	if is_running; then
		up=$((up + 1))
		echo "primary running: pid $(sed -n 1p "$DATA/postmaster.pid") on 127.0.0.1:$(running_port), data in $DATA"
		psql_local -At -F ' ' -c "SELECT 'replication: ' || application_name, state, sync_state,
			'replay lag ' || coalesce(replay_lag::text, '-') FROM pg_stat_replication" 2>/dev/null || true
	else
		echo "primary stopped (data dir $DATA)"
	fi
	as_standby
	if is_running; then
		up=$((up + 1))
		echo "standby running: pid $(sed -n 1p "$DATA/postmaster.pid") on 127.0.0.1:$(running_port), data in $DATA"
	else
		echo "standby stopped (data dir $DATA)"
	fi
	((up == 2)) || return 3
}

# url prints the URL of $1 (primary or standby).
url() {
	case ${1:-} in
	primary) url_of "$PRIMARY_PORT" ;;
	standby) url_of "$STANDBY_PORT" ;;
	*) usage ;;
	esac
}

usage() {
	echo "usage: $0 start|stop|status|url primary|url standby|stop-standby|start-standby" >&2
	exit 2
}

cmd=${1:-}
case $cmd in
start) start ;;
url) url "${2:-}" ;;
stop | status | stop-standby | start-standby)
	if [[ -z $BIN ]]; then
		[[ $cmd == status ]] && { echo "stopped (no PostgreSQL installed)"; exit 3; }
		[[ $cmd == stop* ]] && exit 0
		die "no PostgreSQL server installed; run '$0 start'"
	fi
	case $cmd in
	stop-standby)
		locate lookup
		as_standby
		pg_ctl_stop "the standby"
		;;
	start-standby)
		locate lookup
		start_standby
		;;
	*) "$cmd" ;;
	esac
	;;
*) usage ;;
esac
