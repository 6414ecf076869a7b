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

// A write that timed out on a busy server may have been stored: the
// target then holds more than was acknowledged, by at most what failed
// (the old check wanted exactly the acknowledged count). Fewer than
// acknowledged, or more than could have been written, is still wrong.
func TestExperimentStoredCount(t *testing.T) {
	for _, c := range []struct {
		stored, acked, failed int64
		ok                    bool
	}{
		{6000, 6000, 0, true},
		{6025, 6000, 25, true}, // a batch of 25 timed out after the server stored it
		{6000, 6000, 25, true}, // … or before
		{5999, 6000, 25, false},
		{6026, 6000, 25, false},
		{6001, 6000, 0, false},
	} {
		if err := storedCount(c.stored, c.acked, c.failed); (err == nil) != c.ok {
			t.Errorf("stored %d, acked %d, failed %d: %v; want ok %v", c.stored, c.acked, c.failed, err, c.ok)
		}
	}
}
