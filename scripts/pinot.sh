#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# pinot.sh install|start|stop|restart|status|url|kill-server|start-server
#
# Runs a local Apache Pinot on 127.0.0.1 for freshbench's benchmarks and
# tests: ZooKeeper, a controller, a broker and a server, four JVMs on the
# system's Java 17 (with the --add-opens Pinot 0.11 needs there) as the
# unprivileged user of the other servers. The server is a JVM of its own
# so that a test can kill it alone. Pinot 0.11.0 is assembled from Maven
# Central with Maven (org.apache.pinot:pinot-tools with its dependencies;
# the protobuf, Kinesis, S3, ORC, Parquet and Thrift plugins and
# io.confluent:* are left out: their dependencies are not all on Maven
# Central, and freshbench needs none of them), with a settings file that
# mirrors every repository a pom names to Maven Central. ZooKeeper's
# server runs from the zookeeper jar Pinot depends on. Pinot takes
# freshbench's writes from Kafka only: the pinot:// target makes a
# REALTIME table that consumes a topic of the broker scripts/kafka.sh runs.
#
#   install      fetch Pinot into the cache (start does too)
#   start        start every process, wait until the broker answers SQL and
#                the server has joined the cluster
#   stop         stop them, the server first; SIGKILL after 30 s (Pinot's
#                controller and server may ignore SIGTERM)
#   status       exit 0 when every process runs, 3 when none does
#   url          the target URL, pinot://127.0.0.1:18391/freshbench?controller=127.0.0.1:18390
#   kill-server, start-server
#                SIGKILL the server (its consuming segments die with it, as
#                in a crash) and start it again, for the tests
#
# Environment (defaults in brackets):
#   FRESHBENCH_PINOT_VERSION           [0.11.0]
#   FRESHBENCH_PINOT_PORT              [18391]  broker (SQL)
#   FRESHBENCH_PINOT_CONTROLLER_PORT   [18390]  controller
#   FRESHBENCH_PINOT_SERVER_PORT       [18392]  server (queries from the broker)
#   FRESHBENCH_PINOT_SERVER_ADMIN_PORT [18393]  server (admin API)
#   FRESHBENCH_PINOT_ZK_PORT           [12182]  ZooKeeper
#   FRESHBENCH_PINOT_HEAP              [256m]   heap of the controller and broker
#   FRESHBENCH_PINOT_SERVER_HEAP       [512m]   the server's heap
# plus FRESHBENCH_CACHE, FRESHBENCH_RUN_USER, FRESHBENCH_START_TIMEOUT and
# FRESHBENCH_KEEP_DATA as in lib-searchserver.sh.
#
# Layout: $FRESHBENCH_CACHE/dist/pinot-VERSION/lib, and the state
# $FRESHBENCH_CACHE/run/pinot-PORT/ (conf/ rewritten at every start; var/ —
# ZooKeeper, the controller's segment store, the server's segments —
# emptied unless FRESHBENCH_KEEP_DATA=1; one log per process in logs/).
set -euo pipefail

SS_PRODUCT=pinot
SS_VERSION=${FRESHBENCH_PINOT_VERSION:-0.11.0}
SS_PORT=${FRESHBENCH_PINOT_PORT:-18391}
CONTROLLER_PORT=${FRESHBENCH_PINOT_CONTROLLER_PORT:-18390}
SERVER_PORT=${FRESHBENCH_PINOT_SERVER_PORT:-18392}
SERVER_ADMIN_PORT=${FRESHBENCH_PINOT_SERVER_ADMIN_PORT:-18393}
ZK_PORT=${FRESHBENCH_PINOT_ZK_PORT:-12182}
HEAP=${FRESHBENCH_PINOT_HEAP:-256m}
SERVER_HEAP=${FRESHBENCH_PINOT_SERVER_HEAP:-512m}
CLUSTER=freshbench

# shellcheck source=lib-searchserver.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib-searchserver.sh"
ss_init
SS_START_TIMEOUT=${FRESHBENCH_START_TIMEOUT:-240}
CONF=$SS_STATE/conf
VAR=$SS_STATE/var
LOGS=$SS_STATE/logs
PRODUCT_NAME=pinot
SERVICES=(zookeeper controller broker server)
# shellcheck source=lib-jvmprocs.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib-jvmprocs.sh"

ADMIN=org.apache.pinot.tools.admin.PinotAdministrator

# fetch assembles $SS_DIST/lib (pinot-tools and its dependencies) once
# per version.
fetch() {
	[[ -s $SS_DIST/.complete ]] && return 0
	command -v mvn >/dev/null || ss_die "mvn not found on PATH (Maven fetches Pinot)"
	mkdir -p "$SS_CACHE/dist"
	local tmp
	tmp=$(mktemp -d "$SS_CACHE/dist/.fetch.XXXXXX")
	# shellcheck disable=SC2064 # expand now: tmp is local
	trap "rm -rf '$tmp'" EXIT
	cat >"$tmp/settings.xml" <<EOF
<settings xmlns="http://maven.apache.org/SETTINGS/1.0.0">
<mirrors><mirror><id>central-only</id><mirrorOf>*</mirrorOf><url>https://repo.maven.apache.org/maven2</url></mirror></mirrors>
</settings>
EOF
	local ex='' a
	for a in io.confluent:'*' org.apache.pinot:pinot-protobuf org.apache.pinot:pinot-kinesis org.apache.pinot:pinot-s3 \
		org.apache.pinot:pinot-orc org.apache.pinot:pinot-parquet org.apache.pinot:pinot-thrift org.apache.pinot:pinot-confluent-avro; do
		ex+="<exclusion><groupId>${a%%:*}</groupId><artifactId>${a#*:}</artifactId></exclusion>"
	done
	cat >"$tmp/pom.xml" <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>
<groupId>freshbench</groupId><artifactId>pinot-tools</artifactId><version>1</version><packaging>pom</packaging>
<dependencies>
<dependency><groupId>org.apache.pinot</groupId><artifactId>pinot-tools</artifactId><version>$SS_VERSION</version>
<exclusions>$ex</exclusions></dependency>
</dependencies></project>
EOF
	ss_log "fetching Pinot $SS_VERSION (pinot-tools) with Maven"
	mvn -B -q -Dstyle.color=never -s "$tmp/settings.xml" -f "$tmp/pom.xml" \
		org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy-dependencies \
		-DincludeScope=runtime "-DoutputDirectory=$tmp/lib" >&2 ||
		ss_die "Maven could not fetch org.apache.pinot:pinot-tools:$SS_VERSION"
	[[ -s $tmp/lib/pinot-tools-$SS_VERSION.jar && -s $tmp/lib/pinot-kafka-2.0-$SS_VERSION.jar ]] ||
		ss_die "Maven fetched Pinot $SS_VERSION without its jars"
	date -u >"$tmp/.complete"
	# Rename into place so that an interrupted fetch never looks complete.
	rm -rf "$SS_DIST"
	mkdir -p "$SS_DIST"
	mv "$tmp/lib" "$SS_DIST/"
	mv "$tmp/.complete" "$SS_DIST/.complete"
	rm -rf "$tmp"
	trap - EXIT
}

write_config() {
	rm -rf "$CONF"
	mkdir -p "$CONF" "$VAR" "$LOGS"
	cat >"$CONF/zoo.cfg" <<EOF
tickTime=2000
dataDir=$VAR/zk
clientPort=$ZK_PORT
clientPortAddress=127.0.0.1
admin.enableServer=false
maxClientCnxns=0
EOF
	cat >"$CONF/log4j2.xml" <<'EOF'
<Configuration status="WARN">
  <Appenders><Console name="Console" target="SYSTEM_OUT"><PatternLayout pattern="%d{ISO8601} %p [%t] %c - %m%n"/></Console></Appenders>
  <Loggers>
    <Root level="info"><AppenderRef ref="Console"/></Root>
    <Logger name="org.apache.helix" level="warn" additivity="false"><AppenderRef ref="Console"/></Logger>
    <Logger name="org.apache.kafka" level="warn" additivity="false"><AppenderRef ref="Console"/></Logger>
    <Logger name="org.apache.zookeeper" level="warn" additivity="false"><AppenderRef ref="Console"/></Logger>
  </Loggers>
</Configuration>
EOF
	# The segment completion protocol's and the realtime segment
	# validation's duties run on the controller; a server restarted after
	# a crash re-creates its consuming segments from the offsets the
	# controller committed, on its own.
	cat >"$CONF/controller.conf" <<EOF
controller.host=127.0.0.1
controller.port=$CONTROLLER_PORT
controller.access.protocols=http
controller.access.protocols.http.host=127.0.0.1
controller.access.protocols.http.port=$CONTROLLER_PORT
controller.zk.str=127.0.0.1:$ZK_PORT
controller.helix.cluster.name=$CLUSTER
controller.data.dir=$VAR/controller
controller.local.temp.dir=$VAR/controller-tmp
pinot.set.instance.id.to.hostname=true
EOF
	cat >"$CONF/broker.conf" <<EOF
pinot.zk.server=127.0.0.1:$ZK_PORT
pinot.cluster.name=$CLUSTER
pinot.broker.hostname=127.0.0.1
pinot.broker.client.queryPort=$SS_PORT
pinot.broker.client.access.protocols=http
pinot.broker.client.access.protocols.http.host=127.0.0.1
pinot.broker.client.access.protocols.http.port=$SS_PORT
pinot.set.instance.id.to.hostname=true
EOF
	cat >"$CONF/server.conf" <<EOF
pinot.zk.server=127.0.0.1:$ZK_PORT
pinot.cluster.name=$CLUSTER
pinot.server.netty.host=127.0.0.1
pinot.server.netty.port=$SERVER_PORT
pinot.server.adminapi.port=$SERVER_ADMIN_PORT
pinot.server.adminapi.access.protocols=http
pinot.server.adminapi.access.protocols.http.host=127.0.0.1
pinot.server.adminapi.access.protocols.http.port=$SERVER_ADMIN_PORT
# The broker queries the server over Netty (the port above, which Pinot
# 0.11 binds on every interface: it has no setting for the address); the
# gRPC query server, another such port, is not needed.
pinot.server.grpc.enable=false
pinot.server.instance.dataDir=$VAR/server/index
pinot.server.instance.segmentTarDir=$VAR/server/segmentTar
pinot.set.instance.id.to.hostname=true
EOF
}

jvm_opts() {
	local heap=$HEAP
	if [[ $1 == zookeeper ]]; then
		printf '%s\n' -Xms64m -Xmx64m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
			"-Dlog4j2.configurationFile=$CONF/log4j2.xml" -Dzookeeper.admin.enableServer=false
		return
	fi
	if [[ $1 == server ]]; then
		heap=$SERVER_HEAP
		# A server started again after a crash waits, under the same
		# instance name, until ZooKeeper expires the dead one's session:
		# Helix's 30 s by default, 6 s here.
		echo -Dzk.session.timeout=6000
	fi
	printf '%s\n' -server "-Xms$heap" "-Xmx$heap" -XX:MaxDirectMemorySize=256m -XX:+UseSerialGC \
		-XX:TieredStopAtLevel=1 -XX:+ExitOnOutOfMemoryError \
		-Duser.timezone=UTC -Dfile.encoding=UTF-8 "-Djava.io.tmpdir=$VAR/tmp" \
		"-Dlog4j2.configurationFile=$CONF/log4j2.xml" \
		--add-opens=java.base/java.util=ALL-UNNAMED \
		--add-opens=java.base/java.lang.reflect=ALL-UNNAMED
	jp_java17_access
}

jvm_classpath() { echo "$SS_DIST/lib/*"; }

zk_ready() { (exec 3<>"/dev/tcp/127.0.0.1/$ZK_PORT") 2>/dev/null; }
controller_ready() { curl -sf -o /dev/null --max-time 5 "http://127.0.0.1:$CONTROLLER_PORT/health"; }
# sql_ready: the broker answers SQL and the server is a live instance of
# the cluster (a table made before would have no server to consume).
sql_ready() {
	curl -sf -o /dev/null --max-time 5 -H 'Content-Type: application/json' \
		-d '{"sql":"SELECT 1"}' "http://127.0.0.1:$SS_PORT/query/sql" && server_ready
}
server_ready() {
	curl -sf -o /dev/null --max-time 5 "http://127.0.0.1:$SERVER_ADMIN_PORT/health/readiness" &&
		curl -sf --max-time 5 "http://127.0.0.1:$CONTROLLER_PORT/instances" | grep -q "Server_127.0.0.1_$SERVER_PORT"
}

# loopback_only builds scripts/loopback/bind.c, which binds a socket
# asked for the wildcard address to 127.0.0.1 instead, and has every
# Pinot JVM load it: 0.11's server binds its Netty query port on every
# interface, with no setting for the address.
loopback_only() {
	command -v cc >/dev/null || ss_die "a C compiler (cc) is needed to keep Pinot's server on 127.0.0.1: apt-get install gcc"
	cc -shared -fPIC -O2 -o "$VAR/loopback-bind.so" "$(dirname "${BASH_SOURCE[0]}")/loopback/bind.c" -ldl ||
		ss_die "could not build scripts/loopback/bind.c"
	chmod 0755 "$VAR/loopback-bind.so"
	JP_PRELOAD=$VAR/loopback-bind.so
}

launch_role() {
	local role=$1 cmd
	case $role in
	controller) cmd=StartController ;;
	broker) cmd=StartBroker ;;
	server) cmd=StartServer ;;
	esac
	jp_launch "$role" "$ADMIN" "$cmd" -configFileName "$CONF/$role.conf"
}

start() {
	if jp_running; then
		echo "pinot already running at $(url)"
		return 0
	fi
	jp_stop >/dev/null # what is left of a partial start
	ss_ensure_user
	ss_as_user mkdir -p "$SS_CACHE" 2>/dev/null || mkdir -p "$SS_CACHE"
	fetch
	ss_java
	jp_ports_free "$ZK_PORT" "$CONTROLLER_PORT" "$SS_PORT" "$SERVER_PORT" "$SERVER_ADMIN_PORT"
	mkdir -p "$SS_STATE"
	[[ $SS_KEEP_DATA == 1 ]] || rm -rf "$VAR"
	rm -rf "$LOGS"
	write_config
	mkdir -p "$VAR/tmp"
	loopback_only
	if [[ $(id -u) -eq 0 ]]; then
		ss_own_paths
		runuser -u "$SS_RUN_USER" -- test -r "$SS_DIST/lib/pinot-tools-$SS_VERSION.jar" ||
			ss_die "user $SS_RUN_USER cannot read $SS_DIST; set FRESHBENCH_CACHE to a directory it can reach"
	fi
	ss_log "starting pinot $SS_VERSION on 127.0.0.1 (broker $SS_PORT, controller $CONTROLLER_PORT, server $SERVER_PORT/$SERVER_ADMIN_PORT, zookeeper $ZK_PORT; state $SS_STATE)"
	local t0=$SECONDS
	START_DEADLINE=$((SECONDS + SS_START_TIMEOUT))
	jp_launch zookeeper org.apache.zookeeper.server.ZooKeeperServerMain "$CONF/zoo.cfg"
	jp_wait_for zookeeper zk_ready
	# The controller sets the cluster up in ZooKeeper: the others join it.
	launch_role controller
	jp_wait_for controller controller_ready
	launch_role broker
	launch_role server
	jp_wait_for "the broker's SQL and the server" sql_ready
	echo "pinot $SS_VERSION running (ready in $((SECONDS - t0))s) at $(url)"
}

url() {
	echo "pinot://127.0.0.1:$SS_PORT/freshbench?controller=127.0.0.1:$CONTROLLER_PORT"
}

start_server() {
	jp_alive server >/dev/null && ss_die "the server is running already"
	jp_alive controller >/dev/null || ss_die "pinot is not running: start it"
	ss_java
	mv "$LOGS/server.log" "$LOGS/server.log.1" 2>/dev/null || true
	loopback_only
	local t0=$SECONDS
	JP_NOT_READY_AT=$(jp_now_us) # the killed server is not back before its launch
	START_DEADLINE=$((SECONDS + SS_START_TIMEOUT))
	launch_role server
	jp_wait_for "the server" server_ready
	echo "pinot server running (ready in $((SECONDS - t0))s; not ready at $JP_NOT_READY_AT µs)"
}

case ${1:-} in
install)
	ss_ensure_user
	fetch
	;;
start) start ;;
stop) jp_stop ;;
restart) jp_stop && start ;;
status) jp_status sql_ready ;;
url) url ;;
kill-server) jp_kill server ;;
start-server) start_server ;;
*)
	echo "usage: $0 install|start|stop|restart|status|url|kill-server|start-server" >&2
	exit 2
	;;
esac
