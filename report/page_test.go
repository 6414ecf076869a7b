package report

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/freshbench/freshbench/internal/testenv"
	"github.com/freshbench/freshbench/results"
)

// drawn lists, for every chart of the page, what is wrong with it: no
// SVG, or a series its legend names that has nothing drawn (no line,
// area, bar or marker of its colour with an extent). A chart that says it is empty is listed with
// its reason, so that a report of data never shows an empty chart
// unnoticed.
const drawn = `(() => {
	const out = [];
	document.querySelectorAll('figure.chart').forEach(fig => {
		const title = (fig.querySelector('.ctitle') || {}).textContent;
		const svg = fig.querySelector('svg');
		if (!svg) { out.push(title + ': no svg'); return; }
		const empty = svg.querySelector('text.empty');
		if (empty) { out.push(title + ': empty: ' + empty.textContent); return; }
		fig.querySelectorAll('.legend .sw').forEach(sw => {
			[...sw.classList].filter(c => c.startsWith('c-')).forEach(c => {
				// A legend's colour c-NAME is drawn as a line (c-NAME), an
				// area, bars or markers of NAME.
				const name = c.slice(2);
				const seen = ['c-', 'area-', 'bar-', 'mark-'].some(p =>
					[...svg.getElementsByClassName(p + name)].some(e => { const b = e.getBBox(); return b.width > 0 || b.height > 0; }));
				if (!seen) out.push(title + ': series ' + name + ' not drawn');
			});
		});
	});
	return out;
})()`

// Each kind of report renders in a browser offline: no request leaves
// the page, nothing is logged as an error, and every chart has every
// series of its legend drawn. A page that breaks each rule is caught.
func TestPagesInChromium(t *testing.T) {
	browser := startBrowser(t)
	dir := t.TempDir()
	pages := map[string]*results.Result{
		"run": runResult(2000, 1), "peak": peakResult(), "levels": levelsResult(),
		"merged": mergedResult(t), "isolation": isolationResult(),
	}
	for name, res := range pages {
		t.Run(name, func(t *testing.T) {
			problems, undrawn, charts := inspect(t, browser, filepath.Join(dir, name+".html"), render(t, res))
			if len(problems) > 0 {
				t.Errorf("the page in Chromium: %s", strings.Join(problems, "; "))
			}
			if charts == 0 {
				t.Error("no chart on the page")
			}
			if len(undrawn) > 0 {
				t.Errorf("of %d charts: %s", charts, strings.Join(undrawn, "; "))
			}
		})
	}
	t.Run("a page breaking every rule", func(t *testing.T) {
		bad := `<!DOCTYPE html><html><body><img src="http://example.com/x.png"><script>console.error("boom")</script>
<figure class="chart"><figcaption><div class="ctitle">T</div><ul class="legend"><li><span class="sw c-write"></span>w</li></ul></figcaption>
<svg viewBox="0 0 10 10"><path class="c-fresh" d="M0 0 L5 5"></path></svg></figure></body></html>`
		problems, undrawn, _ := inspect(t, browser, filepath.Join(dir, "bad.html"), bad)
		all := strings.Join(append(problems, undrawn...), "; ")
		for _, want := range []string{"request: http://example.com/x.png", "console error", "T: series write not drawn"} {
			if !strings.Contains(all, want) {
				t.Errorf("a broken page's findings %q lack %q", all, want)
			}
		}
	})
}

// startBrowser starts a headless Chromium for the test, offline, or ends
// the test as testenv.Unavailable does when there is none.
func startBrowser(t *testing.T) context.Context {
	t.Helper()
	path := ""
	for _, b := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(b); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		testenv.Unavailable(t, "no chromium on PATH: install it with `scripts/chromium.sh install`")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.DisableGPU,
		// Offline: no name resolves, nothing in the background reaches out.
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND"),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.WindowSize(1400, 3000),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start %s: %v", path, err)
	}
	return ctx
}

// inspect opens html, written to path, in a tab of browser and returns
// what went wrong as it loaded (requests other than the page's own,
// console errors, exceptions, log errors), what drawn finds, and how many
// charts the page has.
func inspect(t *testing.T, browser context.Context, path, html string) (problems, undrawn []string, charts int) {
	t.Helper()
	if err := os.WriteFile(path, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	page := "file://" + path
	ctx, cancel := chromedp.NewContext(browser)
	defer cancel()
	ctx, cancelTimeout := context.WithTimeout(ctx, time.Minute)
	defer cancelTimeout()
	// Enabled before the page loads, so that its first request and its
	// first message are seen.
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	for _, enable := range []cdp.Command[cdp.Empty, cdp.Empty]{runtime.Enable, log.Enable} {
		if _, err := chromedp.Call(ctx, enable, cdp.Empty{}); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	err := chromedp.Listen(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			if e.Request.URL != page {
				problems = append(problems, "request: "+e.Request.URL)
			}
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeAssert {
				problems = append(problems, "console "+string(e.Type))
			}
		case *runtime.EventExceptionThrown:
			problems = append(problems, "exception: "+e.ExceptionDetails.Text)
		case *log.EventEntryAdded:
			if e.Entry.Level == log.EntryLevelError {
				problems = append(problems, "log: "+e.Entry.Text+" "+e.Entry.URL)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(page), chromedp.WaitReady("body")); err != nil {
		t.Fatal(err)
	}
	if charts, err = chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('figure.chart').length`)); err != nil {
		t.Fatal(err)
	}
	if undrawn, err = chromedp.Run(ctx, chromedp.Evaluate[[]string](drawn)); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	return slices.Clone(problems), undrawn, charts
}
