#!/usr/bin/env bash
# prometheus.sh — a local Prometheus for freshbench's live metrics.
#
# Usage: scripts/prometheus.sh install|start [CONFIG]|stop|status|url
#
#   install  make sure a prometheus binary is on PATH: install Debian's
#            prometheus package when it is missing (as root). CI calls this
#            before `go test ./metrics`, whose end-to-end test starts its own
#            throwaway Prometheus and skips when there is no binary.
#   start    install if needed and start a Prometheus in the background on
#            127.0.0.1, scraping freshbench's metrics endpoints every second
#            with deploy/prometheus/rules.yml loaded, and print its URL.
#            With CONFIG, use that prometheus.yml instead of the generated
#            one (deploy/prometheus/prometheus.yml is an example).
#   stop     stop it
#   status   exit 0 and describe it when running, exit 3 when not
#   url      print its URL
#
# Environment:
#   FRESHBENCH_CACHE          cache root (default $HOME/.cache/freshbench)
#   FRESHBENCH_PROM_DIR       state directory (default $FRESHBENCH_CACHE/prometheus)
#   FRESHBENCH_PROM_PORT      HTTP port on 127.0.0.1 (default 19090, clear of
#                             a system Prometheus on 9090)
#   FRESHBENCH_PROM_SCRAPE    freshbench endpoints to scrape, host:port,
#                             comma-separated (default 127.0.0.1:9464, the
#                             command line's default metrics address)
#   FRESHBENCH_PROM_RETENTION how long to keep samples (default 7d)
#   FRESHBENCH_PROM_NATIVE    1 (default): scrape native histograms, whose
#                             quantiles are within 9 % rather than 26 %; a
#                             Prometheus before 2.45 then keeps no classic
#                             _bucket series. 0: classic buckets only.
#   FRESHBENCH_START_TIMEOUT  seconds to wait for start/stop (default 60)
set -euo pipefail

PORT=${FRESHBENCH_PROM_PORT:-19090}
SCRAPE=${FRESHBENCH_PROM_SCRAPE:-127.0.0.1:9464}
RETENTION=${FRESHBENCH_PROM_RETENTION:-7d}
NATIVE=${FRESHBENCH_PROM_NATIVE:-1}
RULES=$(realpath "$(dirname "${BASH_SOURCE[0]}")/../deploy/prometheus/rules.yml")
START_TIMEOUT=${FRESHBENCH_START_TIMEOUT:-60}
DIR=${FRESHBENCH_PROM_DIR:-${FRESHBENCH_CACHE:-${HOME:-/tmp}/.cache/freshbench}/prometheus}
PIDFILE=$DIR/prometheus.pid
LOG=$DIR/prometheus.log
URL=http://127.0.0.1:$PORT

die() {
	echo "prometheus.sh: $*" >&2
	exit 1
}
note() { echo "prometheus.sh: $*" >&2; }

if ! [[ $PORT =~ ^[0-9]{1,5}$ ]] || ((10#$PORT < 1 || 10#$PORT > 65535)); then
	die "FRESHBENCH_PROM_PORT=$PORT is not a TCP port"
fi
[[ $START_TIMEOUT =~ ^[0-9]+$ ]] || die "FRESHBENCH_START_TIMEOUT=$START_TIMEOUT is not a number of seconds"
[[ $NATIVE == 0 || $NATIVE == 1 ]] || die "FRESHBENCH_PROM_NATIVE=$NATIVE: want 1 (native histograms) or 0 (classic buckets only)"

install() {
	if command -v prometheus >/dev/null 2>&1; then
		note "$(prometheus --version 2>&1 | head -n 1) at $(command -v prometheus)"
		return
	fi
	[[ $(id -u) == 0 ]] || die "no prometheus on PATH; run as root to apt-get install prometheus"
	command -v apt-get >/dev/null 2>&1 || die "no prometheus on PATH and no apt-get to install it with"
	note "no prometheus on PATH: installing Debian's prometheus package"
	apt-get update -q >&2 || die "apt-get update failed"
	# Without recommends: node-exporter and friends are not needed. The
	# package's service is not started where there is no init system,
	# which is fine: freshbench runs its own instances.
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends prometheus >&2 ||
		die "apt-get install prometheus failed"
	command -v prometheus >/dev/null 2>&1 || die "prometheus installed but not on PATH"
	note "installed $(prometheus --version 2>&1 | head -n 1)"
}

# running_pid prints the pid of our Prometheus when it runs: the pid file
# alone could name a recycled pid, so the process must also be prometheus
# started with our state directory.
running_pid() {
	[[ -f $PIDFILE ]] || return 1
	local pid
	pid=$(cat "$PIDFILE")
	[[ $pid =~ ^[0-9]+$ ]] || return 1
	[[ -r /proc/$pid/cmdline ]] || return 1
	tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "--storage.tsdb.path=$DIR/data" || return 1
	echo "$pid"
}

ready() { curl -fsS -o /dev/null --max-time 2 "$URL/-/ready" 2>/dev/null; }

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; }

write_config() {
	local targets="" t
	IFS=, read -r -a list <<<"$SCRAPE"
	for t in "${list[@]}"; do
		[[ $t =~ ^[^[:space:],\"]+:[0-9]{1,5}$ ]] || die "FRESHBENCH_PROM_SCRAPE: '$t' is not host:port"
		targets+="\"$t\", "
	done
	cat >"$DIR/prometheus.yml" <<EOF
# Written by scripts/prometheus.sh at every start.
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files: ["$RULES"]
scrape_configs:
  - job_name: freshbench
    metrics_path: /metrics
    static_configs:
      - targets: [${targets%, }]
EOF
}

start() {
	local config=${1:-}
	install
	command -v curl >/dev/null 2>&1 || die "curl is needed to wait for Prometheus to be ready"
	mkdir -p "$DIR"
	if pid=$(running_pid); then
		note "already running (pid $pid, $DIR)"
		echo "$URL"
		return
	fi
	port_in_use && die "port $PORT on 127.0.0.1 is already in use; set FRESHBENCH_PROM_PORT to a free port"
	if [[ -n $config ]]; then
		[[ -r $config ]] || die "cannot read config $config"
		config=$(realpath "$config")
	else
		write_config
		config=$DIR/prometheus.yml
	fi
	local offset features=()
	offset=$(stat -c %s "$LOG" 2>/dev/null || echo 0)
	((NATIVE)) && features=(--enable-feature=native-histograms)
	nohup prometheus --config.file="$config" --storage.tsdb.path="$DIR/data" \
		--storage.tsdb.retention.time="$RETENTION" "${features[@]}" \
		--web.listen-address="127.0.0.1:$PORT" >>"$LOG" 2>&1 </dev/null &
	echo $! >"$PIDFILE"
	local i
	for ((i = 0; i < START_TIMEOUT * 5; i++)); do
		if ready; then
			note "started on $URL, scraping ${config}'s targets, data in $DIR/data, log in $LOG"
			echo "$URL"
			return
		fi
		running_pid >/dev/null || break
		sleep 0.2
	done
	echo "---- log since this start ----" >&2
	tail -c +"$((offset + 1))" "$LOG" | tail -n 30 >&2 || true
	stop >/dev/null 2>&1 || true
	die "Prometheus did not become ready within ${START_TIMEOUT}s; full log in $LOG"
}

stop() {
	local pid i
	if ! pid=$(running_pid); then
		note "not running ($DIR)"
		rm -f "$PIDFILE"
		return
	fi
	kill -TERM "$pid"
	for ((i = 0; i < START_TIMEOUT * 5; i++)); do
		[[ -d /proc/$pid ]] || break
		sleep 0.2
	done
	if [[ -d /proc/$pid ]]; then
		note "pid $pid did not stop within ${START_TIMEOUT}s; killing it"
		kill -KILL "$pid" 2>/dev/null || true
	fi
	rm -f "$PIDFILE"
	note "stopped ($DIR)"
}

status() {
	local pid
	if pid=$(running_pid); then
		echo "running: pid $pid on $URL, data in $DIR/data"
		return 0
	fi
	echo "stopped ($DIR)"
	return 3
}

cmd=${1:-}
case $cmd in
install) install ;;
start) start "${2:-}" ;;
stop) stop ;;
status) status ;;
url) echo "$URL" ;;
*)
	echo "usage: $0 install|start [CONFIG]|stop|status|url" >&2
	exit 2
	;;
esac
