#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# druid.sh install|start|stop|restart|status|url
#
# Runs a local Apache Druid on 127.0.0.1 for freshbench's benchmarks and
# tests: ZooKeeper, a coordinator that is also the overlord (with Derby,
# the metadata store, inside it), a broker, a historical and an indexer
# (tasks run as threads inside it: no peon JVMs), five JVMs on the
# system's Java 17 as the unprivileged user of the other servers. Deep
# storage is a local directory. Druid 33.0.0 is assembled from Maven
# Central with Maven (org.apache.druid:druid-services and the extension
# org.apache.druid.extensions:druid-kafka-indexing-service with their
# dependencies; org.hyperic:*, sigar's native metrics, is left out), with
# a settings file that mirrors every repository a pom names to Maven
# Central. ZooKeeper's server runs from the zookeeper jar Druid depends
# on. Druid takes its writes from Kafka only: freshbench's druid:// target
# makes a Kafka supervisor, and scripts/kafka.sh runs the broker it reads.
#
#   install  fetch Druid into the cache (start does too)
#   start    start every process, wait until the broker answers SQL and the
#            indexer has joined the overlord
#   stop     stop them, the indexer first; SIGKILL after 30 s
#   status   exit 0 when every process runs, 3 when none does
#   url      the target URL, druid://127.0.0.1:18282/freshbench?overlord=127.0.0.1:18281
#   kill-indexer, start-indexer
#            SIGKILL the indexer (its tasks die with it, as in a crash) and
#            start it again, for the tests
#
# Environment (defaults in brackets):
#   FRESHBENCH_DRUID_VERSION      [33.0.0]
#   FRESHBENCH_DRUID_PORT         [18282]  broker (SQL)
#   FRESHBENCH_DRUID_COORD_PORT   [18281]  coordinator and overlord
#   FRESHBENCH_DRUID_HIST_PORT    [18283]  historical
#   FRESHBENCH_DRUID_INDEXER_PORT [18291]  indexer
#   FRESHBENCH_DRUID_ZK_PORT      [12181]  ZooKeeper
#   FRESHBENCH_DRUID_DERBY_PORT   [11527]  Derby (metadata)
#   FRESHBENCH_DRUID_HEAP         [256m]   heap of each process but the indexer
#   FRESHBENCH_DRUID_INDEXER_HEAP [512m]   the indexer's heap (its tasks' too)
# plus FRESHBENCH_CACHE, FRESHBENCH_RUN_USER, FRESHBENCH_START_TIMEOUT and
# FRESHBENCH_KEEP_DATA as in lib-searchserver.sh.
#
# Layout: $FRESHBENCH_CACHE/dist/druid-VERSION/{lib,extensions}, and the
# state $FRESHBENCH_CACHE/run/druid-PORT/ (conf/ rewritten at every start;
# var/ — ZooKeeper, Derby, deep storage, segment cache, task directories —
# emptied unless FRESHBENCH_KEEP_DATA=1; one log per process in logs/).
set -euo pipefail

SS_PRODUCT=druid
SS_VERSION=${FRESHBENCH_DRUID_VERSION:-33.0.0}
SS_PORT=${FRESHBENCH_DRUID_PORT:-18282}
COORD_PORT=${FRESHBENCH_DRUID_COORD_PORT:-18281}
HIST_PORT=${FRESHBENCH_DRUID_HIST_PORT:-18283}
INDEXER_PORT=${FRESHBENCH_DRUID_INDEXER_PORT:-18291}
ZK_PORT=${FRESHBENCH_DRUID_ZK_PORT:-12181}
DERBY_PORT=${FRESHBENCH_DRUID_DERBY_PORT:-11527}
HEAP=${FRESHBENCH_DRUID_HEAP:-256m}
INDEXER_HEAP=${FRESHBENCH_DRUID_INDEXER_HEAP:-512m}

# shellcheck source=lib-searchserver.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib-searchserver.sh"
ss_init
SS_START_TIMEOUT=${FRESHBENCH_START_TIMEOUT:-240}
CONF=$SS_STATE/conf
VAR=$SS_STATE/var
LOGS=$SS_STATE/logs
PRODUCT_NAME=druid
# The processes in start order; stop goes the other way.
SERVICES=(zookeeper coordinator broker historical indexer)
# shellcheck source=lib-jvmprocs.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib-jvmprocs.sh"

# fetch assembles $SS_DIST/lib (druid-services and its dependencies) and
# $SS_DIST/extensions/druid-kafka-indexing-service once per version.
fetch() {
	[[ -s $SS_DIST/.complete ]] && return 0
	command -v mvn >/dev/null || ss_die "mvn not found on PATH (Maven fetches Druid)"
	mkdir -p "$SS_CACHE/dist"
	local tmp
	tmp=$(mktemp -d "$SS_CACHE/dist/.fetch.XXXXXX")
	# shellcheck disable=SC2064 # expand now: tmp is local
	trap "rm -rf '$tmp'" EXIT
	# Druid's poms name other repositories; every one is Maven Central here.
	cat >"$tmp/settings.xml" <<EOF
<settings xmlns="http://maven.apache.org/SETTINGS/1.0.0">
<mirrors><mirror><id>central-only</id><mirrorOf>*</mirrorOf><url>https://repo.maven.apache.org/maven2</url></mirror></mirrors>
</settings>
EOF
	local a
	for a in org.apache.druid:druid-services org.apache.druid.extensions:druid-kafka-indexing-service; do
		cat >"$tmp/${a#*:}.xml" <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>
<groupId>freshbench</groupId><artifactId>${a#*:}</artifactId><version>1</version><packaging>pom</packaging>
<dependencies>
<dependency><groupId>${a%%:*}</groupId><artifactId>${a#*:}</artifactId><version>$SS_VERSION</version>
<exclusions><exclusion><groupId>org.hyperic</groupId><artifactId>*</artifactId></exclusion></exclusions></dependency>
</dependencies></project>
EOF
	done
	ss_log "fetching Druid $SS_VERSION (druid-services, druid-kafka-indexing-service) with Maven"
	mvn -B -q -Dstyle.color=never -s "$tmp/settings.xml" -f "$tmp/druid-services.xml" \
		org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy-dependencies \
		-DincludeScope=runtime "-DoutputDirectory=$tmp/lib" >&2 ||
		ss_die "Maven could not fetch org.apache.druid:druid-services:$SS_VERSION"
	# The extension's Druid dependencies are provided by lib/: the runtime
	# scope leaves the extension jar and the Kafka client.
	mvn -B -q -Dstyle.color=never -s "$tmp/settings.xml" -f "$tmp/druid-kafka-indexing-service.xml" \
		org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy-dependencies \
		-DincludeScope=runtime "-DoutputDirectory=$tmp/extensions/druid-kafka-indexing-service" >&2 ||
		ss_die "Maven could not fetch org.apache.druid.extensions:druid-kafka-indexing-service:$SS_VERSION"
	[[ -s $tmp/lib/druid-services-$SS_VERSION.jar && -s $tmp/extensions/druid-kafka-indexing-service/druid-kafka-indexing-service-$SS_VERSION.jar ]] ||
		ss_die "Maven fetched Druid $SS_VERSION without its jars"
	date -u >"$tmp/.complete"
	# Rename into place so that an interrupted fetch never looks complete.
	rm -rf "$SS_DIST"
	mkdir -p "$SS_DIST"
	mv "$tmp/lib" "$tmp/extensions" "$SS_DIST/"
	mv "$tmp/.complete" "$SS_DIST/.complete"
	rm -rf "$tmp"
	trap - EXIT
}

write_config() {
	rm -rf "$CONF"
	mkdir -p "$CONF"/{_common,coordinator,broker,historical,indexer} "$VAR" "$LOGS"
	cat >"$CONF/zoo.cfg" <<EOF
tickTime=2000
dataDir=$VAR/zk
clientPort=$ZK_PORT
clientPortAddress=127.0.0.1
admin.enableServer=false
maxClientCnxns=0
EOF
	cat >"$CONF/_common/common.runtime.properties" <<EOF
druid.extensions.directory=$SS_DIST/extensions
druid.extensions.loadList=["druid-kafka-indexing-service"]
druid.extensions.hadoopDependenciesDir=$SS_DIST/hadoop-dependencies
druid.host=127.0.0.1
druid.bindOnHost=true
druid.startup.logging.logProperties=false
druid.zk.service.host=127.0.0.1:$ZK_PORT
druid.zk.paths.base=/druid
druid.metadata.storage.type=derby
druid.metadata.storage.connector.connectURI=jdbc:derby://127.0.0.1:$DERBY_PORT/$VAR/metadata.db;create=true
druid.metadata.storage.connector.host=127.0.0.1
druid.metadata.storage.connector.port=$DERBY_PORT
druid.storage.type=local
druid.storage.storageDirectory=$VAR/segments
druid.indexer.logs.type=file
druid.indexer.logs.directory=$VAR/indexing-logs
druid.selectors.indexing.serviceName=druid/overlord
druid.selectors.coordinator.serviceName=druid/coordinator
druid.monitoring.monitors=[]
druid.emitter=noop
druid.sql.enable=true
druid.lookup.enableLookupSyncOnStartup=false
druid.server.http.numThreads=12
druid.processing.numThreads=1
druid.processing.numMergeBuffers=1
druid.processing.buffer.sizeBytes=32MiB
druid.indexer.task.baseTaskDir=$VAR/task
EOF
	# Handoff and segment loading are the coordinator's duties; a short
	# period makes a handed-off segment queryable on the historical soon.
	cat >"$CONF/coordinator/runtime.properties" <<EOF
druid.service=druid/coordinator
druid.plaintextPort=$COORD_PORT
druid.coordinator.startDelay=PT5S
druid.coordinator.period=PT5S
druid.manager.segments.pollDuration=PT5S
druid.coordinator.asOverlord.enabled=true
druid.coordinator.asOverlord.overlordService=druid/overlord
druid.indexer.runner.type=remote
druid.indexer.storage.type=metadata
druid.indexer.queue.startDelay=PT1S
EOF
	cat >"$CONF/broker/runtime.properties" <<EOF
druid.service=druid/broker
druid.plaintextPort=$SS_PORT
druid.broker.http.numConnections=10
druid.sql.planner.useNativeQueryExplain=true
EOF
	cat >"$CONF/historical/runtime.properties" <<EOF
druid.service=druid/historical
druid.plaintextPort=$HIST_PORT
druid.segmentCache.locations=[{"path":"$VAR/segment-cache","maxSize":"4g"}]
druid.server.maxSize=4g
EOF
	cat >"$CONF/indexer/runtime.properties" <<EOF
druid.service=druid/indexer
druid.plaintextPort=$INDEXER_PORT
druid.worker.capacity=4
druid.worker.globalIngestionHeapLimitBytes=134217728
# A task that published its segments holds its interval's lock until a
# historical serves them (handoff), and a task that replaces it (after a
# suspend, a restart or its taskDuration) waits for that lock: the task
# asks the coordinator every minute by default.
druid.segment.handoff.pollDuration=PT1S
EOF
	cat >"$CONF/_common/log4j2.xml" <<'EOF'
<Configuration status="WARN">
  <Appenders><Console name="Console" target="SYSTEM_OUT"><PatternLayout pattern="%d{ISO8601} %p [%t] %c - %m%n"/></Console></Appenders>
  <Loggers>
    <Root level="info"><AppenderRef ref="Console"/></Root>
    <Logger name="org.apache.druid.server.coordinator" level="warn" additivity="false"><AppenderRef ref="Console"/></Logger>
    <Logger name="org.apache.kafka" level="warn" additivity="false"><AppenderRef ref="Console"/></Logger>
    <Logger name="org.apache.zookeeper" level="warn" additivity="false"><AppenderRef ref="Console"/></Logger>
  </Loggers>
</Configuration>
EOF
}

# jvm_opts NAME: the JVM options of process NAME (lib-jvmprocs.sh).
jvm_opts() {
	if [[ $1 == zookeeper ]]; then
		printf '%s\n' -Xms64m -Xmx64m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
			"-Dlog4j.configurationFile=$CONF/_common/log4j2.xml" -Dzookeeper.admin.enableServer=false
		return
	fi
	local heap=$HEAP
	[[ $1 == indexer ]] && heap=$INDEXER_HEAP
	printf '%s\n' -server "-Xms$heap" "-Xmx$heap" -XX:MaxDirectMemorySize=192m -XX:+UseSerialGC \
		-XX:TieredStopAtLevel=1 -XX:+ExitOnOutOfMemoryError \
		-Duser.timezone=UTC -Dfile.encoding=UTF-8 "-Djava.io.tmpdir=$VAR/tmp" \
		"-Dlog4j.configurationFile=$CONF/_common/log4j2.xml" \
		-Djava.util.logging.manager=org.apache.logging.log4j.jul.LogManager \
		-Dzookeeper.admin.enableServer=false
	jp_java17_access
}

# jvm_classpath NAME: the common configuration, the process's own (but
# ZooKeeper's), and Druid's jars.
jvm_classpath() {
	if [[ $1 == zookeeper ]]; then
		echo "$CONF/_common:$SS_DIST/lib/*"
	else
		echo "$CONF/_common:$CONF/$1:$SS_DIST/lib/*"
	fi
}

zk_ready() { (exec 3<>"/dev/tcp/127.0.0.1/$ZK_PORT") 2>/dev/null; }
http_ready() { curl -sf -o /dev/null --max-time 5 "http://127.0.0.1:$1/status/health"; }
# sql_ready: the broker answers SQL and sees the indexer as a worker of
# the overlord (a supervisor made before would wait for one).
sql_ready() {
	curl -sf -o /dev/null --max-time 5 -H 'Content-Type: application/json' \
		-d '{"query":"SELECT 1"}' "http://127.0.0.1:$SS_PORT/druid/v2/sql" &&
		curl -sf --max-time 5 "http://127.0.0.1:$COORD_PORT/druid/indexer/v1/workers" | grep -q "127.0.0.1:$INDEXER_PORT"
}

indexer_ready() { http_ready "$INDEXER_PORT" && sql_ready; }

start() {
	if jp_running; then
		echo "druid already running at $(url)"
		return 0
	fi
	jp_stop >/dev/null # what is left of a partial start
	ss_ensure_user
	ss_as_user mkdir -p "$SS_CACHE" 2>/dev/null || mkdir -p "$SS_CACHE"
	fetch
	ss_java
	jp_ports_free "$ZK_PORT" "$COORD_PORT" "$SS_PORT" "$HIST_PORT" "$INDEXER_PORT" "$DERBY_PORT"
	mkdir -p "$SS_STATE"
	[[ $SS_KEEP_DATA == 1 ]] || rm -rf "$VAR"
	rm -rf "$LOGS"
	write_config
	mkdir -p "$VAR/tmp"
	if [[ $(id -u) -eq 0 ]]; then
		ss_own_paths
		runuser -u "$SS_RUN_USER" -- test -r "$SS_DIST/lib/druid-services-$SS_VERSION.jar" ||
			ss_die "user $SS_RUN_USER cannot read $SS_DIST; set FRESHBENCH_CACHE to a directory it can reach"
	fi
	ss_log "starting druid $SS_VERSION on 127.0.0.1 (broker $SS_PORT, coordinator-overlord $COORD_PORT, historical $HIST_PORT, indexer $INDEXER_PORT, zookeeper $ZK_PORT; state $SS_STATE)"
	local t0=$SECONDS
	START_DEADLINE=$((SECONDS + SS_START_TIMEOUT))
	jp_launch zookeeper org.apache.zookeeper.server.ZooKeeperServerMain "$CONF/zoo.cfg"
	jp_wait_for zookeeper zk_ready
	# The coordinator runs Derby: the others wait for it.
	jp_launch coordinator org.apache.druid.cli.Main server coordinator
	jp_wait_for coordinator http_ready "$COORD_PORT"
	jp_launch broker org.apache.druid.cli.Main server broker
	jp_launch historical org.apache.druid.cli.Main server historical
	jp_launch indexer org.apache.druid.cli.Main server indexer
	jp_wait_for "the broker's SQL and the indexer" sql_ready
	echo "druid $SS_VERSION running (ready in $((SECONDS - t0))s) at $(url)"
}

status() {
	jp_status sql_ready
}

url() {
	echo "druid://127.0.0.1:$SS_PORT/freshbench?overlord=127.0.0.1:$COORD_PORT"
}

start_indexer() {
	jp_alive indexer >/dev/null && ss_die "the indexer is running already"
	jp_alive coordinator >/dev/null || ss_die "druid is not running: start it"
	ss_java
	mv "$LOGS/indexer.log" "$LOGS/indexer.log.1" 2>/dev/null || true
	local t0=$SECONDS
	JP_NOT_READY_AT=$(jp_now_us) # the killed indexer is not back before its launch
	START_DEADLINE=$((SECONDS + SS_START_TIMEOUT))
	jp_launch indexer org.apache.druid.cli.Main server indexer
	jp_wait_for "the indexer" indexer_ready
	echo "druid indexer running (ready in $((SECONDS - t0))s; not ready at $JP_NOT_READY_AT µs)"
}

case ${1:-} in
install)
	ss_ensure_user
	fetch
	;;
start) start ;;
stop) jp_stop ;;
restart) jp_stop && start ;;
status) status ;;
url) url ;;
kill-indexer) jp_kill indexer ;;
start-indexer) start_indexer ;;
*)
	echo "usage: $0 install|start|stop|restart|status|url|kill-indexer|start-indexer" >&2
	exit 2
	;;
esac
