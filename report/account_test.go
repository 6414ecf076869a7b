package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/freshbench/freshbench/results"
)

// widget is the account of a database freshbench has never heard of: the
// report shows it all the same.
type widget struct {
	Name  string   `account:"widget,key"`
	Spins int64    `account:"spins,counter,unit=spins"`
	Lag   *float64 `account:"lag,level,unit=ms"`
	Color string   `account:"color"`
	Wear  *int64   `account:"wear,level"` // never given: not shown
}

// accountResult is a run whose server gave a widget account, with one
// check of each verdict.
func accountResult() *results.Result {
	res := runResult(2000, 1)
	t0 := res.StartedAt
	lag := func(f float64) *float64 { return &f }
	at := func(d time.Duration, w ...widget) *results.ServerAccount {
		return &results.ServerAccount{At: t0.Add(d), Tables: []results.AccountTable{results.TableOf("widgets", "each <widget> of the server", w)}}
	}
	res.ServerAccount = results.NewAccount(
		at(time.Second, widget{"a", 10, lag(1.5), "red", nil}, widget{"b", 3, nil, "blue", nil}),
		at(9*time.Second, widget{"a", 250, lag(2), "green", nil}, widget{"b", 3, lag(7), "blue", nil}))
	res.ServerAccount.Findings = []results.Finding{
		{Check: "spins against events", Verdict: results.Agrees, Detail: "240 spins for 240 batches"},
		{Check: "lag against visibility", Verdict: results.NotYetKnown, Detail: "no probe seen"},
	}
	return res
}

// The console shows any database's account: its tables over the window
// (a counter's increase, a level at each end, with their units; a column
// without a value in any row left out) and its checks against
// freshbench's figures.
func TestConsoleAccount(t *testing.T) {
	var b bytes.Buffer
	Console(&b, accountResult())
	out := b.String()
	for _, want := range []string{
		"server's account: Taken at the start and the end of the measured phase, 8s apart",
		"widgets: each <widget> of the server",
		"widget  spins (spins)  lag_start (ms)  lag_end (ms)  color",
		"a       240            1.5             2             green",
		"b       0              -               7             blue",
		"check, spins against events: agrees: 240 spins for 240 batches",
		"check, lag against visibility: not yet known: no probe seen",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("console lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "wear") {
		t.Errorf("console shows a column without values:\n%s", out)
	}
	res := accountResult()
	from, _ := res.MeasuredWindow()
	res.ServerAccount.Start.At = from.Add(1500 * time.Millisecond)
	res.ServerAccount.LateStart = "at the start of the measured phase: no answer within 10s"
	b.Reset()
	Console(&b, res)
	if want := "measured phase, 2.5s apart (and 0 times in between), starting 1.5s into the phase: at the start of the measured phase: no answer within 10s."; !strings.Contains(b.String(), want) {
		t.Errorf("console lacks %q:\n%s", want, b.String())
	}
	res.ServerAccount = &results.Account{Error: "at the start of the measured phase: connection refused"}
	b.Reset()
	Console(&b, res)
	if want := "server's account: Not complete: at the start of the measured phase: connection refused"; !strings.Contains(b.String(), want) {
		t.Errorf("console lacks %q:\n%s", want, b.String())
	}
}

// The HTML report shows the same, escaped, and nothing of an account for
// a target that gave none.
func TestHTMLAccount(t *testing.T) {
	page := render(t, accountResult())
	for _, want := range []string{
		"<h2>The server's account</h2>", "each &lt;widget&gt; of the server",
		"<th>spins (spins)</th>", "<td>240</td>", `<span class="badge ok">agrees</span> spins against events`,
		`<span class="badge warn">not yet known</span>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
	if strings.Contains(render(t, runResult(2000, 1)), "server-account") {
		t.Error("a run without an account has its section")
	}
}
