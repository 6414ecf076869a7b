package e2e

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/freshbench/freshbench/internal/testenv"
	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/target/all"
	"github.com/freshbench/freshbench/via"
)

// newViaPipeline opens the target of env (its URL given by script) on a
// table of the test's own, named after name, fed through a Kafka topic of
// the same name (--via), and sets it up with settings; all is removed
// when the test ends. It returns the pipeline and the target's URL with
// the table as its path.
func newViaPipeline(t *testing.T, env, script, name string, settings map[string]string) (target.Target, *url.URL) {
	t.Helper()
	raw := testenv.URL(t, env, script)
	broker := strings.TrimSuffix(testenv.URL(t, "FRESHBENCH_TEST_KAFKA_URL", "scripts/kafka.sh"), "/")
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	table := fmt.Sprintf("fb_e2e_%s_%d", name, time.Now().UnixNano()%1e9)
	u.Path = "/" + table
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	db, err := all.Registry().Open(ctx, u.String(), target.Options{Settings: settings, RequestTimeout: requestTimeout})
	if err != nil {
		t.Fatal(err)
	}
	k, err := via.Open(ctx, broker+"/"+table, 30*time.Second)
	if err != nil {
		db.Close()
		t.Fatal(err)
	}
	p := k.Wrap(db)
	if err := p.Setup(ctx); err != nil {
		p.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := p.Teardown(ctx); err != nil {
			t.Errorf("teardown: %v", err)
		}
		p.Close()
	})
	return p, u
}

// ownAccount is the database's own account now (of type A, such as
// pinot.Account), read through the pipeline p.
func ownAccount[A any, P interface {
	*A
	results.AccountSnapshot
}](t *testing.T, p target.Target) P {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := p.(target.AccountReporter).ServerAccount(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range s.(results.AccountSnapshots) {
		if d, ok := a.(P); ok {
			return d
		}
	}
	t.Fatalf("server account %+v: no %T in it", s, new(A))
	return nil
}

// offsets are a database's own offsets of a topic, summed over its
// partitions: consumed to, Kafka's end, and the lag between.
type offsets struct{ consumed, ends, lag int64 }

func (o *offsets) add(consumed, end, lag int64) {
	o.consumed, o.ends, o.lag = o.consumed+consumed, o.ends+end, o.lag+lag
}

// drained says whether o shows the topic consumed to its end offset,
// want, with no lag.
func (o offsets) drained(want int64) bool {
	return o.ends == want && o.consumed == want && o.lag == 0
}

// waitDrained reads the offsets every poll until they are drained to
// want or within has passed, and returns the last reading.
func waitDrained(within, poll time.Duration, want int64, read func() offsets) offsets {
	for deadline := time.Now().Add(within); ; time.Sleep(poll) {
		if o := read(); o.drained(want) || time.Now().After(deadline) {
			return o
		}
	}
}
