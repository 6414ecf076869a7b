# shellcheck shell=bash
# lib-jvmprocs.sh — a server made of several JVMs on 127.0.0.1, each a
# process of its own with a pid file (scripts/druid.sh, scripts/pinot.sh).
# Sourced after lib-searchserver.sh and ss_init. The caller sets:
#   PRODUCT_NAME  the product, as messages name it ("pinot")
#   SERVICES      the processes in start order; stop goes the other way
#   LOGS          the directory of one log per process
# and defines jvm_opts NAME (prints the JVM options of process NAME, one
# a line) and jvm_classpath NAME.

jp_pidfile() { echo "$SS_STATE/$1.pid"; }

# jp_java17_access prints, one a line, the --add-exports and --add-opens
# that Druid's and Pinot's JVMs need on Java 17 (a caller adds its own).
jp_java17_access() {
	printf '%s\n' \
		--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED \
		--add-exports=java.base/jdk.internal.ref=ALL-UNNAMED \
		--add-opens=java.base/java.nio=ALL-UNNAMED \
		--add-opens=java.base/sun.nio.ch=ALL-UNNAMED \
		--add-opens=java.base/jdk.internal.ref=ALL-UNNAMED \
		--add-opens=java.base/java.io=ALL-UNNAMED \
		--add-opens=java.base/java.lang=ALL-UNNAMED \
		--add-opens=jdk.management/com.sun.management.internal=ALL-UNNAMED
}

# jp_alive NAME: the live pid of process NAME.
jp_alive() {
	local f pid
	f=$(jp_pidfile "$1")
	[[ -s $f ]] || return 1
	pid=$(<"$f")
	[[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null || return 1
	echo "$pid"
}

# jp_launch NAME MAINCLASS ARGS…: one JVM as the run user, its own
# session, its pid in NAME.pid (the shell writes its pid and becomes the
# JVM), with JP_PRELOAD, if set, as its LD_PRELOAD.
jp_launch() {
	local name=$1
	shift
	local opts=()
	mapfile -t opts < <(jvm_opts "$name")
	rm -f "$(jp_pidfile "$name")"
	ss_as_user setsid sh -c 'echo $$ >"$1"; shift; exec "$@"' sh "$(jp_pidfile "$name")" \
		env ${JP_PRELOAD:+LD_PRELOAD="$JP_PRELOAD"} "$SS_RUN_JAVA_HOME/bin/java" "${opts[@]}" -cp "$(jvm_classpath "$name")" "$@" \
		>"$LOGS/$name.log" 2>&1 </dev/null &
	local deadline=$((SECONDS + 10))
	until [[ -s $(jp_pidfile "$name") ]]; do
		((SECONDS < deadline)) || ss_die "$name did not start"
		sleep 0.1
	done
}

# jp_wait_for WHAT CHECK…: until CHECK succeeds, as long as every process
# started so far lives and START_DEADLINE has not passed; else stop all
# and exit 1 with the logs' last lines.
#
# JP_NOT_READY_AT is then the start, in µs since the epoch, of the last
# check that failed within a second, or stays as the caller set it: the
# part answered only after it. A test that times an outage takes this
# bound rather than the time the script took to notice (a check every
# 0.5 s, seconds each on a busy machine). A slower failure may be a check
# that timed out on a part already back, so it bounds nothing.
jp_wait_for() {
	local what=$1 s tried
	shift
	until
		tried=$(jp_now_us)
		"$@"
	do
		if (($(jp_now_us) - tried < 1000000)); then
			JP_NOT_READY_AT=$tried
		fi
		for s in "${SERVICES[@]}"; do
			if [[ -s $(jp_pidfile "$s") ]] && ! jp_alive "$s" >/dev/null; then
				ss_log "$s exited while waiting for $what"
				tail -n 40 "$LOGS/$s.log" >&2 || true
				jp_stop >/dev/null
				exit 1
			fi
		done
		if ((SECONDS >= START_DEADLINE)); then
			ss_log "$what not ready within ${SS_START_TIMEOUT}s"
			for s in "${SERVICES[@]}"; do tail -n 20 "$LOGS/$s.log" >&2 || true; done
			jp_stop >/dev/null
			exit 1
		fi
		sleep 0.5
	done
}

# jp_now_us: the time in µs since the epoch.
jp_now_us() { echo "${EPOCHREALTIME/[.,]/}"; }

# jp_running: every process lives.
jp_running() {
	local s
	for s in "${SERVICES[@]}"; do jp_alive "$s" >/dev/null || return 1; done
}

# jp_stop_one NAME: TERM, then KILL after 30 s (a JVM may ignore TERM).
jp_stop_one() {
	local pid
	if ! pid=$(jp_alive "$1"); then
		rm -f "$(jp_pidfile "$1")"
		return 0
	fi
	kill -TERM "$pid"
	local deadline=$((SECONDS + 30))
	while kill -0 "$pid" 2>/dev/null; do
		if ((SECONDS >= deadline)); then
			ss_log "$1 (pid $pid) still alive after 30s; sending SIGKILL"
			kill -KILL "$pid" 2>/dev/null || true
			sleep 1
			break
		fi
		sleep 0.2
	done
	rm -f "$(jp_pidfile "$1")"
	echo "$PRODUCT_NAME $1 stopped (pid $pid)"
}

# jp_stop stops every process, the last started first.
jp_stop() {
	local i
	for ((i = ${#SERVICES[@]} - 1; i >= 0; i--)); do
		jp_stop_one "${SERVICES[i]}"
	done
}

# jp_kill NAME: SIGKILL process NAME, as in a crash, and wait until it is
# gone.
jp_kill() {
	local pid
	pid=$(jp_alive "$1") || ss_die "the $1 is not running"
	kill -KILL "$pid"
	while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
	rm -f "$(jp_pidfile "$1")"
	echo "$PRODUCT_NAME $1 killed (pid $pid)"
}

# jp_status READY_CHECK: exit 0 when every process runs, 3 when none
# does, 1 when some do.
jp_status() {
	local s up=() down=()
	for s in "${SERVICES[@]}"; do
		if jp_alive "$s" >/dev/null; then up+=("$s"); else down+=("$s"); fi
	done
	if ((${#down[@]} == 0)); then
		if "$@"; then
			echo "$PRODUCT_NAME running at $(url)"
		else
			echo "$PRODUCT_NAME processes alive but not ready"
		fi
		return 0
	fi
	if ((${#up[@]} == 0)); then
		echo "$PRODUCT_NAME not running"
		return 3
	fi
	echo "$PRODUCT_NAME partly running: ${up[*]} up, ${down[*]} down"
	return 1
}

# jp_ports_free PORT…: none is in use by another process.
jp_ports_free() {
	local p
	for p in "$@"; do
		if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			ss_die "port $p on 127.0.0.1 is in use by another process (not ours: no live pid in $SS_STATE)"
		fi
	done
}
