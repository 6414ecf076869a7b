# shellcheck shell=bash
# lib-postgres.sh: shared logic of the local PostgreSQL clusters that
# freshbench tests against. Sourced by scripts/postgres.sh (one cluster) and
# scripts/postgres-replica.sh (a primary and its streaming standby).
#
# Common environment (read here):
#   FRESHBENCH_CACHE             cache root (default $HOME/.cache/freshbench)
#   FRESHBENCH_PG_PASSWORD       password of the database user freshbench (default freshbench)
#   FRESHBENCH_PG_OS_USER        OS user that owns and runs the clusters when
#                                run as root (default freshbench, created
#                                with useradd when missing)
#   FRESHBENCH_PG_START_TIMEOUT  seconds to wait for start/stop (default 60)
#   FRESHBENCH_PG_BIN            directory of pg_ctl/initdb (default: newest
#                                /usr/lib/postgresql/*/bin)
#
# A cluster is addressed by the globals DATA (its data directory), PORT and
# LOG (its server log), which the caller sets before calling pg_start and
# friends. Settings the scripts own are rewritten into $DATA/freshbench.conf
# at every start; $DATA/freshbench.local.conf is read after it and never
# touched.
set -euo pipefail

# Our own psql/pg_ctl calls must not be steered by the caller's libpq
# environment (a PGHOST pointing elsewhere, a PGOPTIONS, …).
unset PGHOST PGHOSTADDR PGPORT PGUSER PGDATABASE PGPASSWORD PGPASSFILE \
	PGSERVICE PGSERVICEFILE PGOPTIONS PGSSLMODE PGDATA

readonly DB_USER=freshbench
readonly DB_NAME=freshbench
readonly TABLE=events
PASSWORD=${FRESHBENCH_PG_PASSWORD:-freshbench}
START_TIMEOUT=${FRESHBENCH_PG_START_TIMEOUT:-60}
CACHE=${FRESHBENCH_CACHE:-${HOME:-/tmp}/.cache/freshbench}

die() {
	echo "${0##*/}: $*" >&2
	exit 1
}
note() { echo "${0##*/}: $*" >&2; }

# check_port dies unless $2 is a TCP port; $1 names its variable.
check_port() {
	if ! [[ $2 =~ ^[0-9]{1,5}$ ]] || ((10#$2 < 1 || 10#$2 > 65535)); then
		die "$1=$2 is not a TCP port"
	fi
}

[[ $START_TIMEOUT =~ ^[0-9]+$ ]] || die "FRESHBENCH_PG_START_TIMEOUT=$START_TIMEOUT is not a number of seconds"
[[ -n $PASSWORD ]] || die "FRESHBENCH_PG_PASSWORD must not be empty"

# The service user's tools must not inherit a working directory they cannot
# read (root's home is 0700).
cd /

IS_ROOT=0
[[ $(id -u) == 0 ]] && IS_ROOT=1
if ((IS_ROOT)); then
	SVC_USER=${FRESHBENCH_PG_OS_USER:-freshbench}
else
	SVC_USER=$(id -un)
fi

# run_as runs a command as the service user: PostgreSQL refuses to run as root.
run_as() {
	if ((IS_ROOT)); then
		runuser -u "$SVC_USER" -- "$@"
	else
		"$@"
	fi
}

find_bin() {
	if [[ -n ${FRESHBENCH_PG_BIN:-} ]]; then
		[[ -x $FRESHBENCH_PG_BIN/pg_ctl ]] || die "FRESHBENCH_PG_BIN=$FRESHBENCH_PG_BIN has no pg_ctl"
		echo "$FRESHBENCH_PG_BIN"
		return
	fi
	local d best="" bestv=0 v
	for d in /usr/lib/postgresql/*/bin; do
		[[ -x $d/pg_ctl && -x $d/initdb && -x $d/postgres ]] || continue
		v=$(basename "$(dirname "$d")")
		[[ $v =~ ^[0-9]+$ ]] || continue
		if ((v > bestv)); then
			best=$d
			bestv=$v
		fi
	done
	echo "$best"
}

install_server() {
	((IS_ROOT)) || die "no PostgreSQL server under /usr/lib/postgresql/*/bin; run as root to apt-get install postgresql, or set FRESHBENCH_PG_BIN"
	note "no PostgreSQL server found: installing Debian's postgresql package"
	apt-get update -q >&2 || die "apt-get update failed"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql >&2 || die "apt-get install postgresql failed"
}

# ensure_bin sets BIN, installing the server when none is found.
ensure_bin() {
	[[ -n $BIN ]] && return 0
	install_server
	BIN=$(find_bin)
	[[ -n $BIN ]] || die "postgresql installed but no server binaries under /usr/lib/postgresql/*/bin"
}

ensure_user() {
	((IS_ROOT)) || return 0
	id -u "$SVC_USER" >/dev/null 2>&1 && return 0
	note "creating system user $SVC_USER to own the cluster"
	# Created exactly as scripts/lib-searchserver.sh does (with a home), so
	# that whichever script runs first, the search servers find the same user.
	useradd --system --create-home --shell /usr/sbin/nologin "$SVC_USER" ||
		die "useradd $SVC_USER failed"
}

# can_reach tells whether the service user can traverse the nearest existing
# ancestor of a path (the rest is created by us, traversable).
can_reach() {
	local p=$1
	while [[ ! -e $p ]]; do p=$(dirname "$p"); done
	((IS_ROOT)) || { [[ -x $p ]]; return; }
	id -u "$SVC_USER" >/dev/null 2>&1 || return 1
	runuser -u "$SVC_USER" -- test -x "$p" 2>/dev/null
}

# resolve_dir sets DIR: $3 when given (from the environment variable named
# $2), else $CACHE/$4. Root's home is 0700, so as root the default cache
# directory is usually out of the service user's reach: fall back to
# /var/tmp/freshbench/$4 then (deterministically, so stop/url/status find
# the same one). $1 is create or lookup.
resolve_dir() {
	local mode=$1 var=$2 given=$3 name=$4
	if [[ -n $given ]]; then
		DIR=$given
		if [[ $mode == create ]] && ! can_reach "$DIR"; then
			die "$var=$DIR is not reachable by OS user $SVC_USER"
		fi
		return
	fi
	DIR=$CACHE/$name
	if ((IS_ROOT)) && ! can_reach "$DIR"; then
		local fallback=/var/tmp/freshbench/$name
		[[ $mode == create ]] && note "$DIR is not reachable by OS user $SVC_USER; using $fallback"
		DIR=$fallback
	fi
}

# make_dir creates a directory owned by the service user, mode 0700.
make_dir() {
	mkdir -p "$1"
	if ((IS_ROOT)); then chown "$SVC_USER:" "$1"; fi
	chmod 0700 "$1"
}

port_in_use() {
	if command -v ss >/dev/null 2>&1; then
		[[ -n $(ss -Hltn "sport = :$PORT" 2>/dev/null) ]]
	else
		(exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null
	fi
}

port_owner() {
	command -v ss >/dev/null 2>&1 || return 0
	ss -Hltnp "sport = :$PORT" 2>/dev/null | grep -o 'users:(([^)]*))' | head -n 1 || true
}

is_running() {
	[[ -f $DATA/PG_VERSION ]] || return 1
	run_as "$BIN/pg_ctl" status -D "$DATA" >/dev/null 2>&1
}

# running_port reads the port of the running postmaster from line 4 of
# postmaster.pid, which may differ from the configured port.
running_port() {
	sed -n 4p "$DATA/postmaster.pid" 2>/dev/null || true
}

# url_of prints the freshbench target URL of a cluster on port $1.
url_of() {
	printf 'postgres://%s:%s@127.0.0.1:%s/%s?table=%s\n' \
		"$DB_USER" "$(urlencode "$PASSWORD")" "$1" "$DB_NAME" "$TABLE"
}

urlencode() {
	local LC_ALL=C s=$1 out="" c i
	for ((i = 0; i < ${#s}; i++)); do
		c=${s:i:1}
		case $c in
		[A-Za-z0-9._~-]) out+=$c ;;
		*) out+=$(printf '%%%02X' "'$c") ;;
		esac
	done
	printf '%s' "$out"
}

# check_version dies when $DATA was made by another major version than BIN.
check_version() {
	local have want
	have=$(cat "$DATA/PG_VERSION")
	want=$(basename "$(dirname "$BIN")")
	[[ $have == "$want" ]] || die "$DATA was initialized by PostgreSQL $have but the server binaries are $want ($BIN); remove $DIR or set FRESHBENCH_PG_BIN"
}

# include_conf makes postgresql.conf read freshbench.conf, then
# freshbench.local.conf.
include_conf() {
	echo "include_if_exists = 'freshbench.conf'" | run_as tee -a "$DATA/postgresql.conf" >/dev/null
	echo "include_if_exists = 'freshbench.local.conf'" | run_as tee -a "$DATA/postgresql.conf" >/dev/null
}

init_cluster() {
	make_dir "$DIR"
	if [[ -f $DATA/PG_VERSION ]]; then
		check_version
		return
	fi
	[[ -e $DATA ]] && [[ -n $(ls -A "$DATA" 2>/dev/null) ]] && die "$DATA exists, is not empty and is not a PostgreSQL data directory"
	note "initializing a new cluster in $DATA"
	local pwfile=$DIR/.initdb-pw
	(umask 077 && printf '%s\n' "$PASSWORD" >"$pwfile")
	if ((IS_ROOT)); then chown "$SVC_USER:" "$pwfile"; fi
	# The database superuser is named freshbench whatever the OS user is, so
	# the URL is the same on every machine. Local (socket) connections are
	# trusted: the socket sits in the 0700 data directory, so only the
	# service user (and root) can reach it; TCP requires the password.
	if ! run_as "$BIN/initdb" -D "$DATA" -U "$DB_USER" --pwfile="$pwfile" \
		-E UTF8 --locale=C --auth-local=trust --auth-host=scram-sha-256 >"$DIR/initdb.log" 2>&1; then
		rm -f "$pwfile"
		tail -n 30 "$DIR/initdb.log" >&2
		die "initdb failed (full output in $DIR/initdb.log)"
	fi
	rm -f "$pwfile"
	include_conf
}

# write_config rewrites the settings the scripts own, at every start, so a
# changed port or a newer version of a script takes effect. $1 is extra
# configuration (replication), $2 extra pg_hba.conf lines.
write_config() {
	local extra=${1:-} extra_hba=${2:-}
	run_as tee "$DATA/freshbench.conf" >/dev/null <<EOF
# Written by scripts/${0##*/} at every start; edit freshbench.local.conf instead.
listen_addresses = '127.0.0.1'
port = $PORT
unix_socket_directories = '$DATA'
unix_socket_permissions = 0700
password_encryption = 'scram-sha-256'
max_connections = 100

# Modest memory for a small benchmark machine.
shared_buffers = 256MB
effective_cache_size = 1GB
work_mem = 16MB
maintenance_work_mem = 128MB
wal_buffers = 16MB
huge_pages = off

# Ingest-heavy: fewer, spread-out checkpoints. Durability stays on
# (fsync, synchronous_commit) so an acknowledgement means what it says.
max_wal_size = 2GB
min_wal_size = 256MB
checkpoint_timeout = 15min
checkpoint_completion_target = 0.9
wal_compression = on

# Query latency on small queries: no JIT compile stalls; SSD-like costs.
jit = off
random_page_cost = 1.1

log_checkpoints = on
log_line_prefix = '%m [%p] %q%u@%d '
$extra
EOF
	if [[ ! -e $DATA/freshbench.local.conf ]]; then
		echo "# Your own settings; scripts/${0##*/} never overwrites this file." |
			run_as tee "$DATA/freshbench.local.conf" >/dev/null
	fi
	run_as tee "$DATA/pg_hba.conf" >/dev/null <<EOF
# Written by scripts/${0##*/} at every start.
# TYPE  DATABASE  USER  ADDRESS        METHOD
local   all       all                  trust
host    all       all   127.0.0.1/32   scram-sha-256
$extra_hba
EOF
}

psql_local() {
	run_as "$BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$DATA" -p "$(running_port)" -U "$DB_USER" -d postgres "$@"
}

# ensure_db (re)sets the password, so FRESHBENCH_PG_PASSWORD takes effect on
# an existing cluster too, and creates the database when missing.
ensure_db() {
	local lit=${PASSWORD//\'/\'\'}
	printf "ALTER ROLE %s WITH LOGIN PASSWORD '%s';\n" "$DB_USER" "$lit" | psql_local >/dev/null ||
		die "could not set the password of $DB_USER"
	local have
	have=$(psql_local -At -c "SELECT 1 FROM pg_database WHERE datname = '$DB_NAME'") ||
		die "could not list databases"
	if [[ $have != 1 ]]; then
		psql_local -c "CREATE DATABASE $DB_NAME OWNER $DB_USER" >/dev/null ||
			die "could not create database $DB_NAME"
	fi
}

# log_tail shows what the server logged since offset, not older runs.
log_tail() {
	echo "---- server log since this attempt ($1) ----" >&2
	tail -c +"$(($2 + 1))" "$1" 2>/dev/null | tail -n 30 >&2 || true
	echo "----" >&2
}

# pg_ctl_start starts the cluster in $DATA (logging to $LOG) and waits for
# it; $1 names it in messages.
pg_ctl_start() {
	if ((IS_ROOT)); then
		touch "$LOG"
		chown "$SVC_USER:" "$LOG"
	fi
	local logsize
	logsize=$(stat -c %s "$LOG" 2>/dev/null || echo 0)
	if ! run_as "$BIN/pg_ctl" start -D "$DATA" -l "$LOG" -w -t "$START_TIMEOUT" >/dev/null; then
		log_tail "$LOG" "$logsize"
		die "$1 failed to start (or did not within ${START_TIMEOUT}s); full log in $LOG"
	fi
}

# pg_ctl_stop stops the cluster in $DATA (fast shutdown: open transactions
# are rolled back), if it runs; $1 names it in messages.
pg_ctl_stop() {
	if ! is_running; then
		note "$1 not running ($DATA)"
		return
	fi
	run_as "$BIN/pg_ctl" stop -D "$DATA" -m fast -w -t "$START_TIMEOUT" >/dev/null ||
		die "pg_ctl stop of $1 failed; see $LOG"
	note "stopped $1 ($DATA)"
}

BIN=$(find_bin)
