#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# kafka.sh start|stop|restart|status|url|connect-url|pause-broker|resume-broker
#
# Runs, on 127.0.0.1, the Kafka-fronted pipeline that freshbench's --via
# measures: a single Apache Kafka 4 broker in KRaft combined mode (broker
# and controller in one process) and a Kafka Connect worker (standalone
# mode, REST API on its own port) with the Debezium JDBC sink connector,
# which writes a topic's records into PostgreSQL, or into QuestDB over its
# PostgreSQL wire (README: "Through Kafka"). Both are assembled from
# Maven Central with Maven (a small pom and dependency:copy-dependencies
# into the cache) and run on the system's Java 17, as the unprivileged
# user of the other servers. Connectors are created by whoever uses the
# worker (freshbench's tests do, through its REST API); the worker starts
# with none.
#
#   start        start the broker, then the worker; wait until both serve
#   stop         stop the worker, then the broker
#   status       exit 0 when both run, 3 when not
#   url          the --via URL of the broker, kafka://127.0.0.1:19092
#   connect-url  the worker's REST API, http://127.0.0.1:18083
#   pause-broker, resume-broker
#                freeze the broker (SIGSTOP) and thaw it (SIGCONT): an
#                outage that keeps its connections open, for the tests
#
# Environment (defaults in brackets):
#   FRESHBENCH_KAFKA_VERSION        [4.3.1]        Kafka (broker and Connect)
#   FRESHBENCH_KAFKA_PORT           [19092]        broker port
#   FRESHBENCH_KAFKA_CONTROLLER_PORT [19093]       KRaft controller port
#   FRESHBENCH_CONNECT_PORT         [18083]        Connect REST port
#   FRESHBENCH_DEBEZIUM_VERSION     [3.6.0.Final]  Debezium JDBC sink
#   FRESHBENCH_KAFKA_HEAP           [256m]         broker heap
#   FRESHBENCH_CONNECT_HEAP         [320m]         worker heap
# plus FRESHBENCH_CACHE, FRESHBENCH_RUN_USER, FRESHBENCH_START_TIMEOUT and
# FRESHBENCH_KEEP_DATA as in lib-searchserver.sh. Every start begins with
# an empty log directory unless FRESHBENCH_KEEP_DATA=1.
set -euo pipefail

SS_PRODUCT=kafka
SS_VERSION=${FRESHBENCH_KAFKA_VERSION:-4.3.1}
SS_PORT=${FRESHBENCH_KAFKA_PORT:-19092}
CONTROLLER_PORT=${FRESHBENCH_KAFKA_CONTROLLER_PORT:-19093}
CONNECT_PORT=${FRESHBENCH_CONNECT_PORT:-18083}
DEBEZIUM_VERSION=${FRESHBENCH_DEBEZIUM_VERSION:-3.6.0.Final}
HIBERNATE_AGROAL_VERSION=7.2.19.Final
KAFKA_HEAP=${FRESHBENCH_KAFKA_HEAP:-256m}
CONNECT_HEAP=${FRESHBENCH_CONNECT_HEAP:-320m}

# The helpers (run user, cache, logging, pid files) are the search
# servers'; the start itself is Kafka's own.
# shellcheck source=lib-searchserver.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib-searchserver.sh"
ss_init
# The broker's pid file is SS_PIDFILE (ss_pid reads it); the worker's is
# beside it.
CONNECT_PIDFILE=$SS_STATE/connect.pid
SS_START_TIMEOUT=${FRESHBENCH_START_TIMEOUT:-120}
PLUGINS=$SS_DIST/plugins
CONNECT_BASE=http://127.0.0.1:$CONNECT_PORT

# fetch assembles the broker and worker classpath ($SS_DIST/lib) and the
# connector's plugin directory once per version.
fetch() {
	[[ -s $SS_DIST/.complete && -s $PLUGINS/debezium-jdbc/.complete ]] && return 0
	command -v mvn >/dev/null || ss_die "mvn not found on PATH (Maven fetches Kafka)"
	mkdir -p "$SS_CACHE/dist"
	local tmp
	tmp=$(mktemp -d "$SS_CACHE/dist/.fetch.XXXXXX")
	# shellcheck disable=SC2064 # expand now: tmp is local
	trap "rm -rf '$tmp'" EXIT
	cat >"$tmp/kafka.xml" <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>
<groupId>freshbench</groupId><artifactId>kafka</artifactId><version>1</version><packaging>pom</packaging>
<dependencies>
<dependency><groupId>org.apache.kafka</groupId><artifactId>kafka_2.13</artifactId><version>$SS_VERSION</version></dependency>
<dependency><groupId>org.apache.kafka</groupId><artifactId>connect-runtime</artifactId><version>$SS_VERSION</version></dependency>
<dependency><groupId>org.apache.kafka</groupId><artifactId>connect-json</artifactId><version>$SS_VERSION</version></dependency>
<dependency><groupId>org.apache.kafka</groupId><artifactId>connect-transforms</artifactId><version>$SS_VERSION</version></dependency>
<dependency><groupId>org.apache.logging.log4j</groupId><artifactId>log4j-slf4j-impl</artifactId><version>2.25.4</version></dependency>
</dependencies></project>
EOF
	# Debezium's pom names org.hibernate:hibernate-agroal, a relocation
	# whose 7.2.6.Final is not served; the connector needs the class, so
	# the relocated artifact is named directly, at a later 7.2 patch.
	cat >"$tmp/debezium.xml" <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>
<groupId>freshbench</groupId><artifactId>debezium-jdbc</artifactId><version>1</version><packaging>pom</packaging>
<dependencies>
<dependency><groupId>io.debezium</groupId><artifactId>debezium-connector-jdbc</artifactId><version>$DEBEZIUM_VERSION</version>
<exclusions>
<exclusion><groupId>org.hibernate</groupId><artifactId>hibernate-agroal</artifactId></exclusion>
<exclusion><groupId>com.mysql</groupId><artifactId>mysql-connector-j</artifactId></exclusion>
<exclusion><groupId>org.mariadb.jdbc</groupId><artifactId>mariadb-java-client</artifactId></exclusion>
<exclusion><groupId>com.microsoft.sqlserver</groupId><artifactId>mssql-jdbc</artifactId></exclusion>
<exclusion><groupId>com.oracle.database.jdbc</groupId><artifactId>ojdbc11</artifactId></exclusion>
</exclusions></dependency>
<dependency><groupId>org.hibernate.orm</groupId><artifactId>hibernate-agroal</artifactId><version>$HIBERNATE_AGROAL_VERSION</version></dependency>
</dependencies></project>
EOF
	ss_log "fetching Kafka $SS_VERSION and the Debezium JDBC sink $DEBEZIUM_VERSION with Maven"
	mvn -B -q -Dstyle.color=never -f "$tmp/kafka.xml" org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy-dependencies \
		-DincludeScope=runtime "-DoutputDirectory=$tmp/lib" >&2 ||
		ss_die "Maven could not fetch org.apache.kafka:kafka_2.13:$SS_VERSION"
	# The worker provides Kafka's own classes to every plugin, and Jackson:
	# Hibernate loads Jackson modules with a ServiceLoader, which finds the
	# worker's too, and they must be of the same Jackson classes.
	mvn -B -q -Dstyle.color=never -f "$tmp/debezium.xml" org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy-dependencies \
		-DincludeScope=runtime -DexcludeGroupIds=org.apache.kafka -DexcludeArtifactIds=jackson-core,jackson-databind,jackson-annotations \
		"-DoutputDirectory=$tmp/plugins/debezium-jdbc" >&2 ||
		ss_die "Maven could not fetch io.debezium:debezium-connector-jdbc:$DEBEZIUM_VERSION"
	date -u >"$tmp/lib/.complete"
	date -u >"$tmp/plugins/debezium-jdbc/.complete"
	# Rename into place so that an interrupted fetch never looks complete.
	rm -rf "$SS_DIST"
	mkdir -p "$SS_DIST"
	mv "$tmp/lib" "$SS_DIST/lib"
	mv "$tmp/plugins" "$PLUGINS"
	cp "$SS_DIST/lib/.complete" "$SS_DIST/.complete"
	rm -rf "$tmp"
	trap - EXIT
}

write_config() {
	local conf=$SS_STATE/config
	mkdir -p "$conf"
	cat >"$conf/server.properties" <<EOF
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$CONTROLLER_PORT
listeners=PLAINTEXT://127.0.0.1:$SS_PORT,CONTROLLER://127.0.0.1:$CONTROLLER_PORT
advertised.listeners=PLAINTEXT://127.0.0.1:$SS_PORT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$SS_STATE/data
num.partitions=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=4
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=true
EOF
	# Sink offsets are the consumer group's, committed every second so that
	# the group's lag (freshbench's server account) is at most a second old.
	cat >"$conf/connect.properties" <<EOF
bootstrap.servers=127.0.0.1:$SS_PORT
listeners=http://127.0.0.1:$CONNECT_PORT
key.converter=org.apache.kafka.connect.storage.StringConverter
value.converter=org.apache.kafka.connect.json.JsonConverter
value.converter.schemas.enable=true
offset.storage.file.filename=$SS_STATE/connect.offsets
offset.flush.interval.ms=1000
plugin.path=$PLUGINS
EOF
	cat >"$conf/log4j2.properties" <<EOF
rootLogger.level=INFO
rootLogger.appenderRef.out.ref=out
appender.out.type=Console
appender.out.name=out
appender.out.layout.type=PatternLayout
appender.out.layout.pattern=[%d] %p %m (%c)%n
EOF
}

# java_cmd HEAP LOG sets JAVA, the java command line of one process
# (an array: the classpath's * is Java's, not the shell's).
java_cmd() {
	JAVA=(java "-Xms$1" "-Xmx$1" -XX:+UseSerialGC -XX:TieredStopAtLevel=1
		"-Dlog4j2.configurationFile=$SS_STATE/config/log4j2.properties" "-Dfreshbench.log=$2"
		-cp "$SS_DIST/lib/*")
}

# launch PIDFILE LOG CMD…: start CMD in the background as the run user,
# its pid in PIDFILE.
launch() {
	local pidfile=$1 log=$2
	shift 2
	local cmd=(setsid "$@")
	if [[ $(id -u) -eq 0 ]]; then
		cmd=(runuser -u "$SS_RUN_USER" -- "${cmd[@]}")
	fi
	"${cmd[@]}" >>"$log" 2>&1 </dev/null &
	# runuser forks: the java process is the newest child of that chain.
	local pid=$! deadline=$((SECONDS + 10)) java=""
	while [[ -z $java ]] && ((SECONDS < deadline)); do
		java=$(pgrep -n -f -- "^java .*-Dfreshbench.log=$log" || true)
		[[ -n $java ]] || sleep 0.2
	done
	[[ -n $java ]] || ss_die "the process for $log did not start (launcher pid $pid)"
	echo "$java" >"$pidfile"
}

# alive PIDFILE: the live pid in PIDFILE.
alive() {
	[[ -s $1 ]] || return 1
	local pid
	pid=$(<"$1")
	[[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null || return 1
	echo "$pid"
}

# wait_for WHAT PIDFILE LOG CHECK…: wait until CHECK succeeds, failing
# when the process exits or the deadline passes.
wait_for() {
	local what=$1 pidfile=$2 log=$3
	shift 3
	while ((SECONDS < DEADLINE)); do
		if "$@" >/dev/null 2>&1; then
			return 0
		fi
		if ! alive "$pidfile" >/dev/null; then
			ss_log "$what exited during startup; last lines of $log:"
			tail -n 40 "$log" >&2 || true
			stop
			exit 1
		fi
		sleep 0.5
	done
	ss_log "$what did not start within ${SS_START_TIMEOUT}s; last lines of $log:"
	tail -n 40 "$log" >&2 || true
	stop
	exit 1
}

broker_ready() {
	grep -q 'Kafka Server started' "$SS_STATE/logs/server.log"
}

connect_ready() {
	curl -sf --max-time 5 "$CONNECT_BASE/connector-plugins" | grep -q JdbcSinkConnector
}

start() {
	if alive "$SS_PIDFILE" >/dev/null && alive "$CONNECT_PIDFILE" >/dev/null; then
		echo "kafka already running at $(url), connect at $CONNECT_BASE"
		return 0
	fi
	stop >/dev/null
	command -v java >/dev/null || ss_die "java not found on PATH (Java 17+ is needed)"
	command -v curl >/dev/null || ss_die "curl not found on PATH"
	if (echo >"/dev/tcp/127.0.0.1/$SS_PORT") 2>/dev/null; then
		ss_die "port $SS_PORT is in use by another process (not ours: no live pid in $SS_PIDFILE)"
	fi
	ss_ensure_user
	ss_as_user mkdir -p "$SS_CACHE" 2>/dev/null || mkdir -p "$SS_CACHE"
	fetch
	mkdir -p "$SS_STATE"
	if [[ ${FRESHBENCH_KEEP_DATA:-0} != 1 ]]; then
		rm -rf "$SS_STATE/data" "$SS_STATE/connect.offsets"
	fi
	rm -rf "$SS_STATE/logs"
	mkdir -p "$SS_STATE/data" "$SS_STATE/logs"
	write_config
	ss_own_paths
	DEADLINE=$((SECONDS + SS_START_TIMEOUT))
	local t0=$SECONDS
	if [[ ! -s $SS_STATE/data/meta.properties ]]; then
		local id
		java_cmd 128m "$SS_STATE/logs/storage.log"
		id=$(ss_as_user "${JAVA[@]}" kafka.tools.StorageTool random-uuid) &&
			ss_as_user "${JAVA[@]}" kafka.tools.StorageTool format -t "$id" -c "$SS_STATE/config/server.properties" \
				>>"$SS_STATE/logs/storage.log" 2>&1 ||
			{ tail -n 20 "$SS_STATE/logs/storage.log" >&2; ss_die "formatting the KRaft log directory failed"; }
	fi
	ss_log "starting kafka $SS_VERSION on 127.0.0.1:$SS_PORT (controller $CONTROLLER_PORT, heap $KAFKA_HEAP, state $SS_STATE)"
	java_cmd "$KAFKA_HEAP" "$SS_STATE/logs/server.log"
	launch "$SS_PIDFILE" "$SS_STATE/logs/server.log" "${JAVA[@]}" kafka.Kafka "$SS_STATE/config/server.properties"
	wait_for kafka "$SS_PIDFILE" "$SS_STATE/logs/server.log" broker_ready
	ss_log "kafka ready after $((SECONDS - t0))s; starting connect on $CONNECT_BASE (heap $CONNECT_HEAP)"
	java_cmd "$CONNECT_HEAP" "$SS_STATE/logs/connect.log"
	launch "$CONNECT_PIDFILE" "$SS_STATE/logs/connect.log" "${JAVA[@]}" org.apache.kafka.connect.cli.ConnectStandalone "$SS_STATE/config/connect.properties"
	wait_for connect "$CONNECT_PIDFILE" "$SS_STATE/logs/connect.log" connect_ready
	echo "kafka $SS_VERSION running (pid $(alive "$SS_PIDFILE")) at $(url), connect (pid $(alive "$CONNECT_PIDFILE")) at $CONNECT_BASE, ready after $((SECONDS - t0))s"
}

# stop_one NAME PIDFILE [LOG DONE]: TERM, then KILL after 30 s, or 3 s
# after the process has logged DONE in LOG (its shutdown is complete).
# A broker that was frozen and thawed (pause-broker) logs the end of its
# shutdown and then does not exit; its state is throwaway.
stop_one() {
	local pid
	if ! pid=$(alive "$2"); then
		rm -f "$2"
		echo "$1 not running"
		return 0
	fi
	kill -TERM "$pid"
	local deadline=$((SECONDS + 30)) done_at=""
	while kill -0 "$pid" 2>/dev/null; do
		if [[ -z $done_at && -n ${4:-} ]] && grep -q -- "$4" "$3" 2>/dev/null; then
			done_at=$SECONDS
			deadline=$((SECONDS + 3))
		fi
		if ((SECONDS >= deadline)); then
			local when="after 30s"
			[[ -z $done_at ]] || when="3s after its shutdown completed"
			ss_log "$1 (pid $pid) still alive $when; sending SIGKILL"
			kill -KILL "$pid" 2>/dev/null || true
			break
		fi
		sleep 0.3
	done
	rm -f "$2"
	echo "$1 stopped (pid $pid)"
}

stop() {
	stop_one connect "$CONNECT_PIDFILE"
	stop_one kafka "$SS_PIDFILE" "$SS_STATE/logs/server.log" 'App info kafka.server for 1 unregistered'
}

status() {
	local b c
	if b=$(alive "$SS_PIDFILE") && c=$(alive "$CONNECT_PIDFILE"); then
		echo "kafka running (pid $b) at $(url), connect (pid $c) at $CONNECT_BASE"
		return 0
	fi
	echo "kafka not running (broker: ${b:-down}, connect: ${c:-down})"
	# LSB: 3 = program is not running.
	return 3
}

url() {
	echo "kafka://127.0.0.1:$SS_PORT"
}

case ${1:-} in
start) start ;;
stop) stop ;;
restart) stop && start ;;
status) status ;;
url) url ;;
connect-url) echo "$CONNECT_BASE" ;;
pause-broker | resume-broker)
	pid=$(alive "$SS_PIDFILE") || ss_die "the broker is not running"
	sig=STOP
	[[ $1 == resume-broker ]] && sig=CONT
	kill "-$sig" "$pid"
	# runuser, the broker's parent, stops itself when its child stops (as
	# su does); thawed with it, it goes on to reap the broker at its exit
	# instead of leaving it a zombie.
	if [[ $sig == CONT ]]; then
		ppid=$(ps -o ppid= -p "$pid" | tr -d ' ')
		[[ -n $ppid && $ppid != 1 ]] && kill -CONT "$ppid" 2>/dev/null || true
	fi
	;;
*)
	echo "usage: $0 start|stop|restart|status|url|connect-url|pause-broker|resume-broker" >&2
	exit 2
	;;
esac
