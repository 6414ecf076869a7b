package e2e

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// missedStart tells an instance that refused its common start because the
// instant had passed (a machine too slow for the lead: the experiment is
// run again further ahead) from any other bad input, which fails the
// test as before. Both are the real command's exits with status 2; the
// old experiment tests failed on the first at once ("exit status 2").
func TestExperimentMissedStart(t *testing.T) {
	bin := freshbenchBinary(t)
	exit := func(args ...string) (string, error) {
		var stderr bytes.Buffer
		cmd := exec.Command(bin, append([]string{"run", "--quiet", "--metrics-addr=", "--target", "sim://", "--experiment", "x", "--instances", "2", "--instance", "0"}, args...)...)
		cmd.Stderr = &stderr
		err := cmd.Run()
		t.Logf("%v: %s", err, strings.TrimSpace(stderr.String()))
		return stderr.String(), err
	}
	past := time.Now().Add(-time.Second).UTC().Format(time.RFC3339Nano)
	stderr, err := exit("--start-at", past, "--duration", "1s", "--warmup", "0s")
	if !missedStart(err, stderr) {
		t.Errorf("an instance given a start already past (%v: %s): not taken for a missed start", err, stderr)
	}
	// The same refusal from an instance ready only after the start (bench.startAt)
	// says so under the same flag.
	if ready := "freshbench run: --start-at " + past + ": want an instant still ahead when the instance is ready; it was ready 14ms after it\n"; !missedStart(err, ready) {
		t.Errorf("an instance ready after the start: not taken for a missed start")
	}
	ahead := time.Now().Add(time.Minute).UTC().Format(time.RFC3339Nano)
	stderr, err = exit("--start-at", ahead, "--duration", "1s", "--warmup", "10s")
	if err == nil || missedStart(err, stderr) {
		t.Errorf("an instance given a warm-up longer than its run (%v: %s): want a failure that is not a missed start", err, stderr)
	}
	if missedStart(nil, "freshbench run: --start-at "+ahead) {
		t.Error("an instance that exited 0: taken for a missed start")
	}
}
