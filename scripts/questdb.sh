#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# questdb.sh start|stop|restart|status|url
#
# Runs a local QuestDB (the org.questdb:questdb jar, fetched with Maven) on
# 127.0.0.1 for freshbench's benchmarks and tests, on the system's Java 17.
# `url` prints the freshbench target URL, e.g.
# questdb://127.0.0.1:18812/qdb?http_port=19900&tcp_port=19909 (without
# credentials the target uses QuestDB's default user and password).
#
# Environment (defaults in brackets):
#   FRESHBENCH_QDB_VERSION   [9.3.4]  org.questdb:questdb version
#   FRESHBENCH_QDB_PG_PORT   [18812]  PostgreSQL wire (queries, the audit)
#   FRESHBENCH_QDB_HTTP_PORT [19900]  HTTP: ILP over HTTP, REST, readiness
#   FRESHBENCH_QDB_TCP_PORT  [19909]  ILP over TCP
#   FRESHBENCH_QDB_MIN_PORT  [19903]  minimal HTTP server (health)
#   FRESHBENCH_QDB_HEAP      [256m]   JVM heap (-Xms and -Xmx); QuestDB keeps
#                                     its data off the heap
#   FRESHBENCH_QDB_DEV_MODE  [1]      dev.mode.enabled: lets ALTER TABLE …
#                                     SUSPEND WAL pause a table's WAL apply,
#                                     which the apply-lag test does
# plus the common knobs described in lib-searchserver.sh (FRESHBENCH_CACHE,
# FRESHBENCH_RUN_USER, FRESHBENCH_START_TIMEOUT, FRESHBENCH_KEEP_DATA).
#
# Layout: $FRESHBENCH_CACHE/dist/questdb-VERSION/questdb-VERSION.jar, and the
# server's root directory $FRESHBENCH_CACHE/run/questdb-PORT/root (conf/ is
# rewritten at every start, db/ emptied unless FRESHBENCH_KEEP_DATA=1, log in
# questdb.log beside it).
set -euo pipefail

SS_PRODUCT=questdb
SS_SCHEME=questdb
SS_GROUP=org.questdb
SS_VERSION=${FRESHBENCH_QDB_VERSION:-9.3.4}
SS_PORT=${FRESHBENCH_QDB_HTTP_PORT:-19900}
QDB_PG_PORT=${FRESHBENCH_QDB_PG_PORT:-18812}
QDB_TCP_PORT=${FRESHBENCH_QDB_TCP_PORT:-19909}
QDB_MIN_PORT=${FRESHBENCH_QDB_MIN_PORT:-19903}
QDB_HEAP=${FRESHBENCH_QDB_HEAP:-256m}
QDB_DEV_MODE=${FRESHBENCH_QDB_DEV_MODE:-1}

# shellcheck source=lib-searchserver.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib-searchserver.sh"

# qdb_init adds QuestDB's paths to those of ss_init.
qdb_init() {
	ss_init
	QDB_JAR=$SS_DIST/questdb-$SS_VERSION.jar
	QDB_ROOT=$SS_STATE/root
	QDB_LOG=$SS_STATE/questdb.log
}

# qdb_fetch downloads the jar with Maven (its local repository is the
# download cache) once into $SS_DIST.
qdb_fetch() {
	[[ -s $QDB_JAR ]] && return 0
	command -v mvn >/dev/null || ss_die "mvn not found on PATH (Maven fetches QuestDB)"
	mkdir -p "$SS_DIST"
	local tmp
	tmp=$(mktemp -d "$SS_CACHE/dist/.fetch.XXXXXX")
	# shellcheck disable=SC2064 # expand now: tmp is local
	trap "rm -rf '$tmp'" EXIT
	ss_log "fetching $SS_GROUP:questdb:$SS_VERSION with Maven"
	mvn -B -q -Dstyle.color=never org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy \
		"-Dartifact=$SS_GROUP:questdb:$SS_VERSION:jar" "-DoutputDirectory=$tmp" >&2 ||
		ss_die "Maven could not fetch $SS_GROUP:questdb:$SS_VERSION"
	# Rename into place so that an interrupted copy never looks complete.
	mv "$tmp/questdb-$SS_VERSION.jar" "$QDB_JAR"
	rm -rf "$tmp"
	trap - EXIT
}

# qdb_own gives the cache to the run user, as ss_own does for the search
# servers, and checks that it can read the jar and run the JDK.
qdb_own() {
	[[ $(id -u) -eq 0 ]] || return 0
	ss_own_paths
	runuser -u "$SS_RUN_USER" -- test -r "$QDB_JAR" ||
		ss_die "user $SS_RUN_USER cannot read $QDB_JAR; set FRESHBENCH_CACHE to a directory it can reach"
	runuser -u "$SS_RUN_USER" -- test -x "$SS_RUN_JAVA_HOME/bin/java" ||
		ss_die "user $SS_RUN_USER cannot run $SS_RUN_JAVA_HOME/bin/java"
}

qdb_write_config() {
	mkdir -p "$QDB_ROOT/conf"
	# Everything on loopback; UDP ILP and telemetry off.
	cat >"$QDB_ROOT/conf/server.conf" <<EOF
http.net.bind.to=127.0.0.1:$SS_PORT
http.min.net.bind.to=127.0.0.1:$QDB_MIN_PORT
pg.net.bind.to=127.0.0.1:$QDB_PG_PORT
line.tcp.net.bind.to=127.0.0.1:$QDB_TCP_PORT
line.udp.enabled=false
telemetry.enabled=false
dev.mode.enabled=$([[ $QDB_DEV_MODE == 1 ]] && echo true || echo false)
EOF
}

# qdb_ready tells whether the server answers SQL over HTTP.
qdb_ready() {
	curl -sf -o /dev/null --max-time 5 "http://$SS_HOST:$SS_PORT/exec?query=select%201"
}

qdb_port_free() {
	local p
	for p in "$SS_PORT" "$QDB_PG_PORT" "$QDB_TCP_PORT" "$QDB_MIN_PORT"; do
		if (exec 3<>"/dev/tcp/$SS_HOST/$p") 2>/dev/null; then
			ss_die "port $p on $SS_HOST is in use by another process (not ours: no live pid in $SS_PIDFILE)"
		fi
	done
}

qdb_start() {
	local pid
	if pid=$(ss_pid); then
		echo "questdb already running (pid $pid) at $(qdb_url)"
		return 0
	fi
	ss_need_tools
	ss_ensure_user
	ss_as_user mkdir -p "$SS_CACHE" 2>/dev/null || mkdir -p "$SS_CACHE"
	qdb_fetch
	ss_java
	qdb_port_free
	mkdir -p "$SS_STATE"
	if [[ $SS_KEEP_DATA != 1 ]]; then
		rm -rf "$QDB_ROOT"
	fi
	rm -f "$SS_PIDFILE" "$QDB_LOG"
	qdb_write_config
	qdb_own
	local run_as
	run_as=$(id -un)
	[[ $(id -u) -eq 0 ]] && run_as=$SS_RUN_USER
	ss_log "starting questdb $SS_VERSION on 127.0.0.1 (pg $QDB_PG_PORT, http $SS_PORT, ilp tcp $QDB_TCP_PORT; user $run_as, heap $QDB_HEAP, root $QDB_ROOT)"
	local t0=$SECONDS
	# setsid: the server outlives this script; the shell writes its own pid
	# and then becomes the JVM, so the pid file names the server.
	ss_as_user setsid sh -c 'echo $$ >"$1"; shift; exec "$@"' sh "$SS_PIDFILE" \
		"$SS_RUN_JAVA_HOME/bin/java" "-Xms$QDB_HEAP" "-Xmx$QDB_HEAP" \
		-p "$QDB_JAR" -m io.questdb/io.questdb.ServerMain -d "$QDB_ROOT" \
		>"$QDB_LOG" 2>&1 </dev/null &
	local deadline=$((SECONDS + SS_START_TIMEOUT))
	until qdb_ready; do
		if ((SECONDS >= deadline)); then
			ss_log "questdb did not answer within ${SS_START_TIMEOUT}s"
			tail -n 60 "$QDB_LOG" >&2 || true
			ss_stop >/dev/null || true
			exit 1
		fi
		if [[ -s $SS_PIDFILE ]] && ! ss_pid >/dev/null; then
			ss_log "questdb exited during startup"
			tail -n 60 "$QDB_LOG" >&2 || true
			exit 1
		fi
		sleep 0.25
	done
	echo "questdb $SS_VERSION running (pid $(ss_pid || echo '?'), ready in $((SECONDS - t0))s) at $(qdb_url)"
}

qdb_status() {
	local pid
	if pid=$(ss_pid); then
		if qdb_ready; then
			echo "questdb running (pid $pid) at $(qdb_url)"
		else
			echo "questdb process $pid alive but http://$SS_HOST:$SS_PORT not answering"
		fi
		return 0
	fi
	echo "questdb not running"
	# LSB: 3 = program is not running.
	return 3
}

qdb_url() {
	echo "questdb://$SS_HOST:$QDB_PG_PORT/qdb?http_port=$SS_PORT&tcp_port=$QDB_TCP_PORT"
}

qdb_init
case ${1:-} in
start) qdb_start ;;
stop) ss_stop ;;
restart) ss_stop && qdb_start ;;
status) qdb_status ;;
url) qdb_url ;;
*)
	echo "usage: $0 start|stop|restart|status|url" >&2
	exit 2
	;;
esac
