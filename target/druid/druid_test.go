package druid

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/freshbench/freshbench/internal/testenv"
	"github.com/freshbench/freshbench/stats"
	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/target/targettest"
)

func TestParseConfig(t *testing.T) {
	targettest.CheckURLs(t, func(u *url.URL) (*config, error) { return parseConfig(u, target.Options{}) }, map[string]string{
		"druid://127.0.0.1:8888/events?task_duration=PT10M": "",
		"druid://127.0.0.1:8888":                            "",
		"druid://127.0.0.1/events":                          "want druid://host:port/datasource",
		"druid://127.0.0.1:8888/a/b":                        "the path must be a datasource name",
		`druid://127.0.0.1:8888/x"y`:                        "the path must be a datasource name",
		"druid://127.0.0.1:8888/x?task_duration=1h":         "want an ISO 8601 period",
		"druid://127.0.0.1:8888/x?overlord=host":            "want host:port",
		"druid://127.0.0.1:8888/x?taskduration=PT1H":        `query parameter "taskduration"`,
	})
	u, _ := url.Parse("druid://127.0.0.1:8888?overlord=127.0.0.1:8081")
	cfg, err := parseConfig(u, target.Options{})
	if err != nil || cfg.datasource != DefaultDatasource || cfg.overlord != "http://127.0.0.1:8081" || cfg.broker != "http://127.0.0.1:8888" {
		t.Errorf("%+v, %v: want the default datasource, the overlord given", cfg, err)
	}
}

// A druid target without a topic refuses to write and to set up, saying
// what to give.
func TestNoVia(t *testing.T) {
	u, _ := url.Parse("druid://127.0.0.1:1/x")
	tgt, err := Open(context.Background(), u, target.Options{})
	if err != nil {
		t.Fatal(err)
	}
	targettest.NoStream(t, tgt, errNoVia)
}

// server opens a target on a datasource of the test's own, fed from a
// topic of the same name, and produces nothing; the topic's records are
// the test's to write.
func server(t *testing.T, settings map[string]string) (*store, *kgo.Client) {
	t.Helper()
	st := targettest.OpenStream(t, "FRESHBENCH_TEST_DRUID_URL", "scripts/druid.sh", "fb_druid", settings, Open)
	return st.Target.(*store), st.Kafka
}

// Setup is idempotent and makes the supervisor read the topic: an event
// produced to it is read back over SQL, exactly, by every read.
// A supervisor of another topic is refused; teardown removes both the
// supervisor and the datasource.
func TestSetupReadsTheTopic(t *testing.T) {
	// A datasource and topic of its own; it waits on Druid (its supervisor
	// and task start), which runs four tasks at once.
	t.Parallel()
	s, kc := server(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	targettest.SetupTwice(t, ctx, s, "g")
	now := time.Now().UnixMicro()
	doc := fmt.Sprintf(`{"_id":"a1","_event_time":%d,"generator_identifier":"g","_seq":7,"processBy":"p","company":"c","emails":["e1","e2"],"tags":["t1","t2"]}`, now)
	if err := kc.ProduceSync(ctx, &kgo.Record{Key: []byte("a1"), Value: []byte(doc)}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	targettest.WaitFresh(t, ctx, s, "g", now)
	targettest.SeesOneEvent(t, ctx, s, "g")
	sample, err := s.Sample(ctx, 5)
	if err != nil || len(sample) != 1 || !strings.Contains(string(sample[0]), `"emails":["e1","e2"]`) {
		t.Errorf("sample %s, %v; want the event's fields, arrays as arrays", sample, err)
	}

	other, _ := server(t, nil)
	other.cfg = s.cfg
	targettest.RefusesOtherTopic(t, ctx, s, other)

	if err := s.Teardown(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.supervisorSpec(ctx); ok || err != nil {
		t.Errorf("supervisor after teardown: %v, %v; want none", ok, err)
	}
}

// Druid's errors come back in its words, and a request that outlasts its
// bound fails saying so.
func TestErrorsInDruidsWords(t *testing.T) {
	s, _ := server(t, nil)
	ctx := context.Background()
	err := s.sql(ctx, "test query on", `SELECT no_such_column FROM sys.segments`, nil, func([]json.RawMessage) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "Column 'no_such_column' not found") {
		t.Errorf("%v; want Druid's own message", err)
	}
	// A broker that hangs: the bound is freshbench's (Druid, given 1 ms,
	// sometimes answered first that it knows no such datasource).
	broker, bound := s.cfg.broker, s.api.Timeout
	s.cfg.broker, s.api.Timeout = "http://"+testenv.Mute(t), 50*time.Millisecond
	_, _, err = s.Freshness(ctx, "g")
	mine := target.Query{Kind: "mine", Statement: target.Statement{Text: `SELECT "_id" FROM {table} WHERE "_id" = ?`, Args: []any{"x"}}}
	_, ownErr := s.Query(ctx, mine)
	s.cfg.broker, s.api.Timeout = broker, bound
	if err == nil || !strings.Contains(err.Error(), "no answer within 50ms") {
		t.Errorf("%v; want the request's bound named", err)
	}
	// A query of one's own is bounded and its error classified as every
	// query's.
	if ownErr == nil || !strings.Contains(ownErr.Error(), "druid query mine on "+s.cfg.datasource) || stats.ErrorKind(ownErr) != "timeout" {
		t.Errorf("%v (%s); want the query named and a timeout", ownErr, stats.ErrorKind(ownErr))
	}
}

// A query of one's own takes its parameters as Druid SQL's, each typed by
// its value: a string that looks like a number stays a string, and a
// number, a fraction and a boolean compare as such (a number sent as a
// string, or the reverse, fails or matches nothing).
func TestOwnQueryParameters(t *testing.T) {
	s, _ := server(t, nil)
	ctx := context.Background()
	text := `SELECT TABLE_NAME FROM INFORMATION_SCHEMA.TABLES WHERE TABLE_NAME = ? AND ? > 1 AND ? < 3.5 AND ? AND ? = '7'`
	for _, tc := range []struct {
		args []any
		want int
	}{
		{[]any{"COLUMNS", int64(2), 2.5, true, "7"}, 1},
		{[]any{"COLUMNS", int64(1), 2.5, true, "7"}, 0},
		{[]any{"COLUMNS", int64(2), 3.75, true, "7"}, 0},
		{[]any{"COLUMNS", int64(2), 2.5, false, "7"}, 0},
	} {
		n, err := s.Query(ctx, target.Query{Kind: "mine", Statement: target.Statement{Text: text, Args: tc.args}})
		if err != nil || n != tc.want {
			t.Errorf("%v: %d rows, %v; want %d", tc.args, n, err, tc.want)
		}
	}
	if got := s.QueryText(target.Query{Kind: "mine", Statement: target.Statement{Text: `SELECT * FROM {table} WHERE "a" = ?`, Args: []any{"it's"}}}); !strings.HasPrefix(got, `SELECT * FROM "`+s.cfg.datasource+`" WHERE "a" = ?`) || !strings.Contains(got, `-- parameters 1: "it's"`) {
		t.Errorf("query text %s; want the datasource and the parameter", got)
	}
}
