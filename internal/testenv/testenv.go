// Package testenv is what tests against real servers share: the URL of a
// server from its FRESHBENCH_TEST_* variable, or a skip when none is
// configured — a failure instead when FRESHBENCH_REQUIRE_SERVERS=1
// (scripts/test.sh sets it), so that a run meant to cover every server
// cannot pass by skipping one.
package testenv

import (
	"flag"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
)

// RequireEnv is the variable that makes a missing server a failure.
const RequireEnv = "FRESHBENCH_REQUIRE_SERVERS"

// Required says whether a missing server fails the test rather than
// skipping it.
func Required() bool { return os.Getenv(RequireEnv) == "1" }

// Unavailable ends the test for want of what msg names: it fails when
// Required, else it skips.
func Unavailable(tb testing.TB, msg string) {
	tb.Helper()
	if Required() {
		tb.Fatal(msg + " (" + RequireEnv + "=1)")
		return
	}
	tb.Skip(msg)
}

// URL returns the value of env, the URL of a test server that script
// (scripts/NAME.sh) runs, or ends the test as Unavailable does with a
// message that says how to start it. urlArgs are what the script's url
// command takes besides, e.g. "primary".
func URL(tb testing.TB, env, script string, urlArgs ...string) string {
	tb.Helper()
	raw := os.Getenv(env)
	if raw == "" {
		how := strings.Join(append([]string{script, "url"}, urlArgs...), " ")
		Unavailable(tb, env+" is not set: start the server with `"+script+" start` and set "+env+"=$("+how+")")
	}
	return raw
}

// LowerRate runs try at rate events/s and, while try says why the run
// could not meet its test's premise (a starved server keeps no schedule;
// that is the machine's state, not a defect), logs why and runs it again
// at half the rate, down to lowest. try returns "" when the premise held.
// LowerRate returns the rate of the last run and why its premise did not
// hold, "" when it did; it stops early once the test has failed.
func LowerRate(tb testing.TB, rate, lowest float64, try func(rate float64) (unmet string)) (float64, string) {
	tb.Helper()
	for {
		unmet := try(rate)
		if unmet == "" || rate/2 < lowest || tb.Failed() {
			return rate, unmet
		}
		tb.Logf("at %.0f events/s, %s: not the premise of this test; trying again at %.0f events/s", rate, unmet, rate/2)
		rate /= 2
	}
}

// Mute returns host:port of a listener on 127.0.0.1 that takes every
// connection and never answers, closed when the test ends: a server that
// hangs, so that a client's own bound is what ends a request (a real
// server given a tiny bound may answer first).
func Mute(tb testing.TB) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				for _, c := range conns {
					c.Close()
				}
				return
			}
			conns = append(conns, c)
		}
	}()
	tb.Cleanup(func() {
		l.Close()
		<-done
	})
	return l.Addr().String()
}

// WaitingTests lets up to n parallel tests run at once, as -parallel=n
// does, unless the command line gives -parallel: for a package whose
// parallel tests mostly wait on a server or a schedule, which the default
// (one per CPU) leaves waiting one after another. Call it in TestMain,
// before m.Run parses the flags.
func WaitingTests(n int) {
	if err := flag.Set("test.parallel", strconv.Itoa(n)); err != nil {
		panic("testenv.WaitingTests: " + err.Error())
	}
}
