#!/usr/bin/env bash
# rally.sh race|driver|track DIR
#
# freshbench and Rally (esrally) side by side, in one sitting, against the
# same local Elasticsearch (scripts/elasticsearch.sh), with the same
# documents, batch size, mapping, shards and refresh interval; or against
# freshbench's no-op server, to weigh each tool's own CPU. docs/rally.md
# tells what the figures mean and what differs between the two tools.
#
#   race       install esrally into a virtualenv (pip), build a Rally track
#              from freshbench's own generated documents, race Rally
#              (unthrottled bulk, offline), run freshbench at a target rate,
#              and print one table with the commands that made it
#   driver     start `freshbench noop` on FRESHBENCH_RALLY_NOOP_PORT, race
#              Rally against it (client ids, looped corpus) for each of
#              FRESHBENCH_RALLY_DRIVER_RUNS, counting the CPU of all of
#              Rally's processes; then `freshbench calibrate` (ceiling and
#              CPU at it) and `freshbench run` at the rate Rally achieved;
#              print one table of CPU per 100k events
#   track DIR  write the track alone into DIR (documents.json, index.json,
#              track.json) for the first of FRESHBENCH_RALLY_IDS: no
#              esrally, no server, no network
#
# Environment (defaults in brackets):
#   FRESHBENCH_RALLY_PORT      [19200]        port of the Elasticsearch on 127.0.0.1
#   FRESHBENCH_RALLY_DURATION  [60]           measured seconds of every run
#   FRESHBENCH_RALLY_WARMUP    [10]           warm-up seconds before them
#   FRESHBENCH_RALLY_BATCH     [500]          documents per bulk request
#   FRESHBENCH_RALLY_CLIENTS   [2]            Rally's clients (bulk requests at once)
#   FRESHBENCH_RALLY_DOC_SIZE  [1KB]          size of a generated document
#   FRESHBENCH_RALLY_DOCS      [15000 per second of warm-up and duration]
#                                             documents in Rally's corpus; Rally
#                                             stops early when they run out
#   FRESHBENCH_RALLY_MAPPING   [dynamic]      dynamic (no mappings, as the index of a
#                                             track without one) or freshbench
#   FRESHBENCH_RALLY_IDS       [auto client]  Rally's runs: auto (the server makes
#                                             the ids) and/or client (ids in the
#                                             documents file, create actions, as
#                                             freshbench sends)
#   FRESHBENCH_RALLY_RUNS      [12000/2 12000/16]
#                                             freshbench's runs, RATE/INFLIGHT each:
#                                             target events/s and --max-inflight
#   FRESHBENCH_RALLY_SHARDS    [1]            number_of_shards
#   FRESHBENCH_RALLY_REPLICAS  [0]            number_of_replicas
#   FRESHBENCH_RALLY_REFRESH   [1s]           refresh_interval
#   FRESHBENCH_RALLY_VERSION   [2.13.0]       esrally version
#   FRESHBENCH_RALLY_NOOP_PORT [19777]        driver: port of the no-op server it starts
#   FRESHBENCH_RALLY_DRIVER_RUNS [50/1 500/2] driver: Rally's races, BATCH/CLIENTS each;
#                                             freshbench calibrates the same batch sizes
#   FRESHBENCH_CACHE           [$HOME/.cache/freshbench] holds rally/venv (esrally),
#                                             rally/home (Rally's ~/.rally) and
#                                             rally/work (tracks, reports, results)
#   FRESHBENCH_BIN             freshbench binary [built from this checkout]
#
# Both tools talk to 127.0.0.1 only, over plain HTTP, without credentials
# (the local test server has security off). Rally runs with --offline and
# its home under the cache, so it neither fetches tracks nor touches
# ~/.rally, and through a wrapper that keeps its actors on 127.0.0.1 (see
# esrally_wrapper).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
HOST=127.0.0.1
RALLY_INDEX=freshbench-rally
FB_INDEX=freshbench-rally-fb

die() {
	echo "${0##*/}: $*" >&2
	exit 1
}

# bad says what is wrong with the input and exits 2.
bad() {
	echo "${0##*/}: $*" >&2
	exit 2
}

log() {
	echo "${0##*/}: $*" >&2
}

whole() { # whole NAME VALUE MIN
	if ! [[ $2 =~ ^(0|[1-9][0-9]{0,8})$ ]] || (($2 < $3)); then
		bad "$1=$2: want a whole number ≥ $3"
	fi
}

# pairs NAME FIRST SECOND EXAMPLE ITEM... checks that each ITEM of the
# variable NAME is two whole numbers, FIRST/SECOND, each at least 1.
pairs() {
	local name=$1 first=$2 second=$3 example=$4 w
	shift 4
	for w in "$@"; do
		[[ $w =~ ^[0-9]+/[0-9]+$ ]] || bad "$name: $w: want ${first^^}/${second^^}, e.g. $example"
		whole "$name $first" "${w%/*}" 1
		whole "$name $second" "${w#*/}" 1
	done
}

config() {
	PORT=${FRESHBENCH_RALLY_PORT:-19200}
	DURATION=${FRESHBENCH_RALLY_DURATION:-60}
	WARMUP=${FRESHBENCH_RALLY_WARMUP:-10}
	BATCH=${FRESHBENCH_RALLY_BATCH:-500}
	CLIENTS=${FRESHBENCH_RALLY_CLIENTS:-2}
	DOC_SIZE=${FRESHBENCH_RALLY_DOC_SIZE:-1KB}
	MAPPING=${FRESHBENCH_RALLY_MAPPING:-dynamic}
	IDS=${FRESHBENCH_RALLY_IDS:-auto client}
	RUNS=${FRESHBENCH_RALLY_RUNS:-12000/2 12000/16}
	SHARDS=${FRESHBENCH_RALLY_SHARDS:-1}
	REPLICAS=${FRESHBENCH_RALLY_REPLICAS:-0}
	REFRESH=${FRESHBENCH_RALLY_REFRESH:-1s}
	VERSION=${FRESHBENCH_RALLY_VERSION:-2.13.0}

	whole FRESHBENCH_RALLY_PORT "$PORT" 1
	((PORT <= 65535)) || bad "FRESHBENCH_RALLY_PORT=$PORT: want a port, 1 to 65535"
	whole FRESHBENCH_RALLY_DURATION "$DURATION" 1
	whole FRESHBENCH_RALLY_WARMUP "$WARMUP" 0
	whole FRESHBENCH_RALLY_BATCH "$BATCH" 1
	whole FRESHBENCH_RALLY_CLIENTS "$CLIENTS" 1
	whole FRESHBENCH_RALLY_SHARDS "$SHARDS" 1
	whole FRESHBENCH_RALLY_REPLICAS "$REPLICAS" 0
	DOCS=${FRESHBENCH_RALLY_DOCS:-$((15000 * (WARMUP + DURATION)))}
	whole FRESHBENCH_RALLY_DOCS "$DOCS" 1
	[[ $MAPPING == dynamic || $MAPPING == freshbench ]] ||
		bad "FRESHBENCH_RALLY_MAPPING=$MAPPING: want dynamic or freshbench"
	[[ $REFRESH =~ ^(-1|[0-9]+(ms|s|m))$ ]] || bad "FRESHBENCH_RALLY_REFRESH=$REFRESH: want a duration such as 1s, or -1"
	[[ $DOC_SIZE =~ ^[0-9]+(B|KB|KiB)?$ ]] || bad "FRESHBENCH_RALLY_DOC_SIZE=$DOC_SIZE: want a size such as 1KB"
	local w
	read -ra IDS_LIST <<<"$IDS"
	((${#IDS_LIST[@]})) || bad "FRESHBENCH_RALLY_IDS is empty: want auto, client or both"
	for w in "${IDS_LIST[@]}"; do
		[[ $w == auto || $w == client ]] || bad "FRESHBENCH_RALLY_IDS: $w: want auto, client or both"
	done
	read -ra RUNS_LIST <<<"$RUNS"
	pairs FRESHBENCH_RALLY_RUNS rate in-flight 12000/2 "${RUNS_LIST[@]}"

	NOOP_PORT=${FRESHBENCH_RALLY_NOOP_PORT:-19777}
	whole FRESHBENCH_RALLY_NOOP_PORT "$NOOP_PORT" 1
	((NOOP_PORT <= 65535)) || bad "FRESHBENCH_RALLY_NOOP_PORT=$NOOP_PORT: want a port, 1 to 65535"
	read -ra DRIVER_LIST <<<"${FRESHBENCH_RALLY_DRIVER_RUNS:-50/1 500/2}"
	pairs FRESHBENCH_RALLY_DRIVER_RUNS batch clients 50/1 "${DRIVER_LIST[@]}"

	CACHE=${FRESHBENCH_CACHE:-${HOME:-/tmp}/.cache/freshbench}/rally
	WORK=$CACHE/work
}

# freshbench_bin sets FB to the freshbench binary, built from this checkout
# unless FRESHBENCH_BIN names one.
freshbench_bin() {
	if [[ -n ${FRESHBENCH_BIN:-} ]]; then
		FB=$FRESHBENCH_BIN
		[[ -x $FB ]] || bad "FRESHBENCH_BIN=$FB: not an executable"
		return
	fi
	command -v go >/dev/null || die "go not found on PATH (it builds freshbench; or set FRESHBENCH_BIN)"
	mkdir -p "$CACHE/bin"
	FB=$CACHE/bin/freshbench
	(cd "$ROOT" && go build -o "$FB" ./cmd/freshbench) || die "could not build freshbench"
}

# index_body prints the body of the create-index request: freshbench's
# settings, and with MAPPING=freshbench the mapping freshbench creates
# (target/elastic's indexDefinition; a test checks that the two agree).
index_body() {
	local settings
	settings=$(printf '"settings":{"index":{"number_of_shards":%d,"number_of_replicas":%d,"refresh_interval":"%s"}}' \
		"$SHARDS" "$REPLICAS" "$REFRESH")
	if [[ $MAPPING == dynamic ]]; then
		printf '{%s}\n' "$settings"
		return
	fi
	printf '{%s,"mappings":{"dynamic":true,"properties":{%s}}}\n' "$settings" \
		'"generator_identifier":{"type":"keyword"},"_event_time":{"type":"long"},"_seq":{"type":"long"},"_revision":{"type":"long"},"_update_time":{"type":"long"},"processBy":{"type":"keyword"},"emails":{"type":"keyword"},"tags":{"type":"keyword"},"company":{"type":"keyword"},"age":{"type":"integer"}'
}

# write_track DIR IDS writes a Rally track into DIR: DOCS documents that
# freshbench generates, without their _id member (a metadata field the
# server refuses in a source); with IDS=client each comes after a create
# action with that _id, as freshbench's bulk requests have it.
write_track() {
	local dir=$1 ids=$2 meta=false lines=$DOCS
	mkdir -p "$dir"
	rm -f "$dir"/documents.json*
	# Generated documents start with {"_id":"<id>", (a UUID).
	if [[ $ids == client ]]; then
		meta=true
		lines=$((2 * DOCS))
		"$FB" sample --compact --count "$DOCS" --doc-size "$DOC_SIZE" |
			sed 's/^{"_id":"\([^"]*\)",/{"create":{"_index":"'"$RALLY_INDEX"'","_id":"\1"}}\n{/' >"$dir/documents.json"
	else
		"$FB" sample --compact --count "$DOCS" --doc-size "$DOC_SIZE" |
			sed 's/^{"_id":"[^"]*",/{/' >"$dir/documents.json"
	fi
	local got
	got=$(wc -l <"$dir/documents.json")
	((got == lines)) || die "documents.json has $got lines, want $lines"
	! grep -q '^{"_id"' "$dir/documents.json" || die "documents.json: a document kept its _id member"
	index_body >"$dir/index.json"
	# Against the no-op server (NOOP=true) Rally's corpus loops, since at
	# its pace any corpus of a sensible size would run out, and the script
	# creates the index: Rally's index tasks read cluster settings, which
	# the no-op server does not keep.
	local looped=false setup='
    {"operation": {"operation-type": "delete-index"}},
    {"operation": {"operation-type": "create-index"}},
    {"operation": {"operation-type": "cluster-health", "index": "'"$RALLY_INDEX"'",
      "request-params": {"wait_for_status": "green"}, "retry-until-success": true}},'
	if [[ ${NOOP:-false} == true ]]; then
		looped=true setup=
	fi
	cat >"$dir/track.json" <<EOF
{
  "version": 2,
  "description": "freshbench's generated documents ($DOCS of $DOC_SIZE, ids: $ids, mapping: $MAPPING), written by scripts/rally.sh",
  "indices": [{"name": "$RALLY_INDEX", "body": "index.json"}],
  "corpora": [{
    "name": "freshbench",
    "documents": [{
      "source-file": "documents.json",
      "document-count": $DOCS,
      "uncompressed-bytes": $(stat -c %s "$dir/documents.json"),
      "includes-action-and-meta-data": $meta
    }]
  }],
  "schedule": [$setup
    {"operation": {"name": "bulk", "operation-type": "bulk", "bulk-size": $BATCH, "looped": $looped},
      "clients": $CLIENTS, "warmup-time-period": $WARMUP, "time-period": $DURATION}
  ]
}
EOF
}

# esrally_venv installs esrally VERSION into a virtualenv under the cache
# (once) and sets PY, its Python.
esrally_venv() {
	local venv=$CACHE/venv have
	PY=$venv/bin/python
	have=$("$PY" -c 'import importlib.metadata as m; print(m.version("esrally"))' 2>/dev/null || true)
	[[ $have == "$VERSION" ]] && return
	command -v python3 >/dev/null || die "python3 not found on PATH (pip installs esrally)"
	log "installing esrally $VERSION into $venv with pip"
	# --clear: a virtualenv left by another Python may no longer run.
	python3 -m venv --clear "$venv" >&2 || die "python3 -m venv $venv failed (on Debian: apt-get install python3-venv)"
	"$PY" -m pip install -q --disable-pip-version-check "esrally==$VERSION" >&2 || die "pip could not install esrally==$VERSION"
}

# server_version prints the version of the Elasticsearch on PORT (nodes
# info: the integ-test distribution has no root endpoint), or dies.
server_version() {
	local out
	out=$(curl -sf --max-time 10 "http://$HOST:$PORT/_nodes/_local?filter_path=nodes.*.version") ||
		die "no Elasticsearch at http://$HOST:$PORT: start one with scripts/elasticsearch.sh start"
	[[ $out =~ \"version\":\"([^\"]+)\" ]] || die "http://$HOST:$PORT did not report its version"
	echo "${BASH_REMATCH[1]}"
}

delete_index() {
	curl -s -o /dev/null --max-time 60 -X DELETE "http://$HOST:$PORT/$1" || true
}

# esrally_wrapper writes the Python script that Rally starts through and
# sets ESRALLY_CMD. It changes two things, neither on the path of the bulk
# requests:
#  - Rally's actors (Thespian, over TCP) use 127.0.0.1 and listen there
#    only, instead of an address found by routing towards a public one
#    and sockets that listen on every interface;
#  - its synchronous client skips the product check, a GET / before its
#    first request that Elasticsearch's integ-test distribution
#    (scripts/elasticsearch.sh) does not serve. The asynchronous client,
#    which sends the bulk requests, skips it already.
esrally_wrapper() {
	local wrapper=$CACHE/esrally-local.py
	cat >"$wrapper" <<'EOF'
# Written by freshbench's scripts/rally.sh: esrally with its actors on
# 127.0.0.1 alone and without the synchronous client's product check
# (GET /), which a local integ-test Elasticsearch does not serve.
import os
import sys

os.environ["THESPIAN_BASE_IPADDR"] = "127.0.0.1"

from esrally.client import synchronous  # noqa: E402
from thespian.system.transport import IPBase  # noqa: E402

_addr_init = IPBase.IPActorAddress.__init__


def _addr_init_loopback(self, *args, **kwargs):
    _addr_init(self, *args, **kwargs)
    if self.bindname[0] == "":
        self.bindname = ("127.0.0.1", self.bindname[1])


IPBase.IPActorAddress.__init__ = _addr_init_loopback

_sync_init = synchronous.RallySyncElasticsearch.__init__


def _sync_init_verified(self, *args, **kwargs):
    _sync_init(self, *args, **kwargs)
    self._verified_elasticsearch = True


synchronous.RallySyncElasticsearch.__init__ = _sync_init_verified

from esrally import rally  # noqa: E402

sys.argv[0] = "esrally"
rally.main()
EOF
	ESRALLY_CMD=("$PY" "$wrapper")
}

# rally_cpu PID prints the CPU seconds that Rally's processes used while
# the race PID ran: those whose command line names the wrapper. Rally's
# actors detach from the process that starts them, so neither the shell's
# times nor the children's resource usage count them; the script reads
# each process's utime and stime in /proc, five times a second, and keeps
# the last value seen. It stops once PID and every actor have ended.
rally_cpu() {
	# The wrapper's path goes through the environment: a process whose
	# arguments name esrally would make Rally refuse to start.
	RALLY_WRAPPER=$CACHE/esrally-local.py "$PY" -c '
import os, sys, time
race, wrapper = int(sys.argv[1]), os.environ["RALLY_WRAPPER"].encode()
tick = os.sysconf("SC_CLK_TCK")
used = {}
while True:
    seen = False
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open(f"/proc/{p}/cmdline", "rb") as f:
                if wrapper not in f.read():
                    continue
            with open(f"/proc/{p}/stat") as f:
                st = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        seen = True
        used[p] = (int(st[11]) + int(st[12])) / tick
    try:
        with open(f"/proc/{race}/stat") as f:
            running = f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        running = False
    if not seen and not running:
        break
    time.sleep(0.2)
print(f"{sum(used.values()):.2f}")' "$1"
}

# rally_race IDS [NAME] races Rally on the track of IDS and writes its CSV
# report to rally-NAME.csv (NAME defaults to IDS) and the CPU seconds of
# all of Rally's processes, start-up included, to rally-NAME.cpu.
rally_race() {
	local ids=$1 name=${2:-$1} dir=$WORK/track-$1
	log "building the track for Rally ($ids ids) in $dir"
	write_track "$dir" "$ids"
	RALLY_CMD=("${ESRALLY_CMD[@]}" race --pipeline=benchmark-only --target-hosts="$HOST:$PORT" --track-path="$dir"
		--distribution-version="$ES_VERSION" --offline --on-error=abort
		--report-format=csv --report-file="$WORK/rally-$name.csv")
	log "racing Rally ($ids ids, batch $BATCH, $CLIENTS clients): $((WARMUP + DURATION)) s at most; log in $WORK/rally-$name.log"
	rm -f "$WORK/rally-$name.csv" "$WORK/rally-$name.cpu"
	# RALLY_HOME keeps Rally's configuration, logs and races (~/.rally)
	# in the cache. --distribution-version: the version Rally would ask
	# GET / for, which this server's distribution does not serve.
	RALLY_HOME=$CACHE/home "${RALLY_CMD[@]}" >"$WORK/rally-$name.log" 2>&1 </dev/null &
	local pid=$! rc=0
	rally_cpu "$pid" >"$WORK/rally-$name.cpu"
	wait "$pid" || rc=$?
	if ((rc != 0)); then
		tail -n 30 "$WORK/rally-$name.log" >&2
		die "Rally failed ($ids ids); its own log is in $CACHE/home/.rally/logs"
	fi
	COMMANDS+=("RALLY_HOME=$CACHE/home ${RALLY_CMD[*]}")
	rm -f "$dir"/documents.json*
	# A looped corpus never runs out; otherwise Rally stops when its
	# corpus does, before the time it was given.
	if [[ ${NOOP:-false} != true ]]; then
		local stored
		curl -s -o /dev/null --max-time 60 -X POST "http://$HOST:$PORT/$RALLY_INDEX/_refresh" || true
		stored=$(curl -s --max-time 60 "http://$HOST:$PORT/$RALLY_INDEX/_count?filter_path=count" | tr -dc 0-9)
		if [[ $stored == "$DOCS" ]]; then
			NOTES+=("Rally ($ids ids) indexed all $DOCS documents of its corpus: it stopped before $((WARMUP + DURATION)) s; set FRESHBENCH_RALLY_DOCS higher")
		fi
	fi
	delete_index "$RALLY_INDEX"
}

# freshbench_run RATE INFLIGHT runs freshbench at that target rate and
# in-flight bound; its results go to freshbench-RATE-INFLIGHT.json.
freshbench_run() {
	local rate=$1 inflight=$2 name=freshbench-$1-$2
	local cmd=("$FB" run --target "elasticsearch://$HOST:$PORT/$FB_INDEX" --recreate
		--set "mapping=$MAPPING" --set "shards=$SHARDS" --set "replicas=$REPLICAS" --set "refresh_interval=$REFRESH"
		--rate "$rate" --batch-size "$BATCH" --doc-size "$DOC_SIZE" --max-inflight "$inflight"
		--duration "$((WARMUP + DURATION))s" --warmup "${WARMUP}s"
		--metrics-addr= --quiet --out "$WORK/$name.json")
	log "running freshbench at $rate events/s, $inflight in flight: $((WARMUP + DURATION)) s and the audit"
	rm -f "$WORK/$name.json"
	"${cmd[@]}" >"$WORK/$name.log" 2>&1 </dev/null || {
		tail -n 30 "$WORK/$name.log" >&2
		die "freshbench failed ($rate events/s, $inflight in flight)"
	}
	delete_index "$FB_INDEX"
	COMMANDS+=("${cmd[*]}")
}

# table prints the Markdown table of the reports and results in WORK.
table() {
	"$PY" "$ROOT/scripts/rally-report.py" race "$WORK" "$CLIENTS" "$VERSION" "${IDS_LIST[*]}" "${RUNS_LIST[*]}"
}

race() {
	command -v curl >/dev/null || die "curl not found on PATH"
	ES_VERSION=$(server_version)
	esrally_venv
	freshbench_bin
	mkdir -p "$WORK" "$CACHE/home"
	esrally_wrapper
	COMMANDS=()
	NOTES=()
	local load_before started
	load_before=$(cut -d' ' -f1-3 /proc/loadavg)
	started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
	local i
	for i in "${IDS_LIST[@]}"; do
		rally_race "$i"
	done
	for i in "${RUNS_LIST[@]}"; do
		freshbench_run "${i%/*}" "${i#*/}"
	done

	echo "One sitting from $started to $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname) ($(nproc) cores):"
	echo "Elasticsearch $ES_VERSION on $HOST:$PORT; $SHARDS shard(s), $REPLICAS replica(s), refresh $REFRESH, mapping $MAPPING;"
	echo "batch $BATCH, documents of $DOC_SIZE (Rally's corpus: $DOCS); $WARMUP s warm-up, then $DURATION s measured per run."
	echo "Load average (1, 5, 15 min): $load_before before, $(cut -d' ' -f1-3 /proc/loadavg) after."
	echo
	table
	for i in "${NOTES[@]}"; do
		echo "Note: $i"
	done
	echo
	echo "Commands, in order (reports and results in $WORK):"
	for i in "${COMMANDS[@]}"; do
		echo "  $i"
	done
}

# start_noop starts freshbench's no-op server on NOOP_PORT, points PORT at
# it, and stops it when the script exits.
start_noop() {
	"$FB" noop --http-listen "$HOST:$NOOP_PORT" --postgres-listen= >"$WORK/noop.log" 2>&1 </dev/null &
	NOOP_PID=$!
	trap 'kill "$NOOP_PID" 2>/dev/null || true' EXIT
	PORT=$NOOP_PORT
	local i
	for ((i = 0; i < 100; i++)); do
		curl -sf --max-time 1 -o /dev/null "http://$HOST:$PORT/" && return
		kill -0 "$NOOP_PID" 2>/dev/null || break
		sleep 0.1
	done
	tail -n 5 "$WORK/noop.log" >&2
	die "freshbench noop did not serve on $HOST:$PORT (is the port taken? set FRESHBENCH_RALLY_NOOP_PORT)"
}

# rally_rate NAME prints Rally's mean bulk throughput in rally-NAME.csv.
rally_rate() {
	"$PY" "$ROOT/scripts/rally-report.py" rate "$WORK/rally-$1.csv"
}

# driver measures what each tool costs itself: Rally and freshbench drive
# freshbench's no-op server, which acknowledges every request at once, so
# the server is not the limit and each tool's own CPU is what is left.
driver() {
	command -v curl >/dev/null || die "curl not found on PATH"
	esrally_venv
	freshbench_bin
	mkdir -p "$WORK" "$CACHE/home"
	esrally_wrapper
	start_noop
	# The no-op server answers as Elasticsearch 8 does; Rally needs only
	# a version to choose the API it speaks.
	ES_VERSION=8.19.0
	COMMANDS=()
	NOTES=()
	NOOP=true
	curl -sf --max-time 10 -o /dev/null -X PUT "http://$HOST:$PORT/$RALLY_INDEX" || die "could not create the index $RALLY_INDEX on freshbench noop"
	local load_before started r rate batches=()
	load_before=$(cut -d' ' -f1-3 /proc/loadavg)
	started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
	for r in "${DRIVER_LIST[@]}"; do
		BATCH=${r%/*} CLIENTS=${r#*/}
		batches+=("$BATCH")
		rally_race client "noop-$BATCH-$CLIENTS"
	done
	# freshbench's ceiling, and its CPU there, per batch size.
	local cal=("$FB" calibrate --target "elasticsearch://$HOST:$PORT/freshbench-calibrate"
		--batch-sizes "$(IFS=,; echo "${batches[*]}")" --doc-size "$DOC_SIZE"
		--calibration "$WORK/calibration.json" --metrics-addr= --quiet --out "$WORK/calibrate.json")
	log "calibrating freshbench (batch sizes ${batches[*]}): a few minutes"
	"${cal[@]}" >"$WORK/calibrate.log" 2>&1 </dev/null || {
		tail -n 30 "$WORK/calibrate.log" >&2
		die "freshbench calibrate failed"
	}
	COMMANDS+=("${cal[*]}")
	# freshbench at the rate Rally achieved, batch for batch: the same work
	# a second, so CPU per event compares like with like.
	for r in "${DRIVER_LIST[@]}"; do
		BATCH=${r%/*} CLIENTS=${r#*/}
		rate=$(rally_rate "noop-$BATCH-$CLIENTS")
		[[ -n $rate ]] || die "Rally's report rally-noop-$BATCH-$CLIENTS.csv has no bulk throughput"
		local cmd=("$FB" run --target "elasticsearch://$HOST:$PORT/freshbench-driver-$BATCH" --recreate
			--rate "$rate" --batch-size "$BATCH" --doc-size "$DOC_SIZE"
			--duration "$((WARMUP + DURATION))s" --warmup "${WARMUP}s"
			--metrics-addr= --quiet --out "$WORK/freshbench-noop-$BATCH.json")
		log "running freshbench at Rally's $rate events/s, batch $BATCH: $((WARMUP + DURATION)) s and the audit"
		"${cmd[@]}" >"$WORK/freshbench-noop-$BATCH.log" 2>&1 </dev/null || {
			tail -n 30 "$WORK/freshbench-noop-$BATCH.log" >&2
			die "freshbench failed (batch $BATCH at $rate events/s)"
		}
		COMMANDS+=("${cmd[*]}")
	done

	echo "One sitting from $started to $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname) ($(nproc) cores), against freshbench noop on $HOST:$PORT;"
	echo "documents of $DOC_SIZE; Rally: client ids, its corpus looped, $WARMUP s warm-up, then $DURATION s."
	echo "Load average (1, 5, 15 min): $load_before before, $(cut -d' ' -f1-3 /proc/loadavg) after."
	echo
	driver_table
	echo
	echo "Commands, in order (reports and results in $WORK):"
	for r in "${COMMANDS[@]}"; do
		echo "  $r"
	done
}

# driver_table prints the Markdown table of the driver sitting in WORK.
driver_table() {
	"$PY" "$ROOT/scripts/rally-report.py" driver "$WORK" "$VERSION" "$WARMUP" "$DURATION" "${DRIVER_LIST[*]}"
}

config
case ${1:-} in
race) race ;;
driver) driver ;;
track)
	[[ $# -eq 2 && -n $2 ]] || bad "usage: $0 track DIR"
	freshbench_bin
	write_track "$2" "${IDS_LIST[0]}"
	;;
*) bad "usage: $0 race|driver|track DIR" ;;
esac
