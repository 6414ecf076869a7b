package metrics

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/freshbench/freshbench/results"
)

// The Prometheus and Grafana files of deploy/ that go with these metrics.
var (
	rulesFile     = filepath.Join("..", "deploy", "prometheus", "rules.yml")
	promConfig    = filepath.Join("..", "deploy", "prometheus", "prometheus.yml")
	dashboardFile = filepath.Join("..", "deploy", "grafana", "freshbench.json")
)

// exposedNames returns every series name an Observer exposes, with the
// suffixes of the classic histograms and the bare name of the native ones.
func exposedNames(t *testing.T) map[string]bool {
	t.Helper()
	reg := prometheus.NewRegistry()
	o := New(reg, "sim", &results.Experiment{Name: "x", Instances: 1})
	o.TargetRate(1)
	o.Scheduled("g", 1, false, 1)
	o.Unsent("g", 1)
	o.Written("g", 0, 1, 0, map[string]int{"timeout": 1}, time.Millisecond, time.Millisecond)
	o.Freshness("target", "g", time.Second)
	o.Visible("target", "g", time.Second)
	o.Query("target", "point", time.Millisecond, 1, false)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, mf := range mfs {
		names[mf.GetName()] = true
		if mf.GetType() == dto.MetricType_HISTOGRAM {
			for _, s := range []string{"_bucket", "_count", "_sum"} {
				names[mf.GetName()+s] = true
			}
		}
	}
	return names
}

// rules reads the recording rules' names and expressions from the rules
// file, one "- record:" and one "expr:" line each.
func rules(t *testing.T) (names map[string]bool, exprs []string) {
	t.Helper()
	f, err := os.Open(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	names = map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if v, ok := strings.CutPrefix(line, "- record:"); ok {
			names[strings.TrimSpace(v)] = true
		}
		if v, ok := strings.CutPrefix(line, "expr:"); ok {
			exprs = append(exprs, strings.TrimSpace(v))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(names) == 0 || len(exprs) != 2*9 {
		t.Fatalf("%s: %d rule names and %d expressions, want 3 names and 18 expressions (3 quantiles of 3 metrics, native and classic)", rulesFile, len(names), len(exprs))
	}
	return names, exprs
}

var (
	promqlStrings  = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|` + "`[^`]*`")
	promqlMatchers = regexp.MustCompile(`\{[^}]*\}|\[[^\]]*\]`)
	promqlGrouping = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	promqlTokens   = regexp.MustCompile(`[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?|[A-Za-z_:][A-Za-z0-9_:]*(\s*\()?`)
	promqlKeywords = []string{"and", "or", "unless", "bool", "offset", "group_left", "group_right", "inf", "nan"}
)

// promqlNames returns the series names a PromQL expression selects:
// identifiers that are neither functions, nor keywords, nor inside label
// matchers, ranges, strings or grouping clauses.
func promqlNames(expr string) []string {
	s := promqlStrings.ReplaceAllString(expr, `""`)
	s = promqlMatchers.ReplaceAllString(s, " ")
	s = promqlGrouping.ReplaceAllString(s, " ")
	var names []string
	for _, m := range promqlTokens.FindAllStringSubmatch(s, -1) {
		tok := m[0]
		if m[1] != "" || tok[0] >= '0' && tok[0] <= '9' || slices.Contains(promqlKeywords, strings.ToLower(tok)) {
			continue
		}
		names = append(names, tok)
	}
	return names
}

func TestPromqlNames(t *testing.T) {
	got := promqlNames(`histogram_quantile(0.99, sum by (experiment, le) (rate(a_bucket{phase=~"(.+-)?m",x="y z"}[1m]))) / on (x) group_left b or vector(1e-3) + c:d:e`)
	if want := []string{"a_bucket", "b", "c:d:e"}; !slices.Equal(got, want) {
		t.Errorf("names %q, want %q", got, want)
	}
}

// TestRulesFile checks the recording rules with promtool when it is
// installed (the real Prometheus also loads them in
// TestPrometheusExperiment), and that they select only series the
// Observer exposes.
func TestRulesFile(t *testing.T) {
	exposed := exposedNames(t)
	names, exprs := rules(t)
	for _, e := range exprs {
		for _, n := range promqlNames(e) {
			if !exposed[n] {
				t.Errorf("rule %s selects %s, which freshbench does not expose", e, n)
			}
		}
		if !strings.Contains(e, "sum by (experiment") {
			t.Errorf("rule %s does not aggregate by experiment", e)
		}
	}
	for n := range names {
		if !strings.HasPrefix(n, "experiment:") {
			t.Errorf("rule %s: want the level:metric:operations form, aggregated to experiment", n)
		}
	}
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("no promtool on PATH (scripts/prometheus.sh install); the rules are still loaded by TestPrometheusExperiment")
	}
	for _, args := range [][]string{{"check", "rules", rulesFile}, {"check", "config", promConfig}} {
		out, err := exec.Command(promtool, args...).CombinedOutput()
		if err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// dashboard is the part of a Grafana dashboard the tests read.
type dashboard struct {
	Title      string `json:"title"`
	Templating struct {
		List []struct {
			Name       string          `json:"name"`
			Type       string          `json:"type"`
			Query      json.RawMessage `json:"query"`
			Datasource *datasourceRef  `json:"datasource"`
		} `json:"list"`
	} `json:"templating"`
	Panels []panel `json:"panels"`
}

type panel struct {
	Title      string         `json:"title"`
	Type       string         `json:"type"`
	Datasource *datasourceRef `json:"datasource"`
	Panels     []panel        `json:"panels"` // of a collapsed row
	Targets    []struct {
		Expr       string         `json:"expr"`
		Datasource *datasourceRef `json:"datasource"`
	} `json:"targets"`
}

type datasourceRef struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

// readDashboard decodes the dashboard and returns it with its panels,
// those of rows included.
func readDashboard(t *testing.T) (*dashboard, []panel) {
	t.Helper()
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	var all []panel
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			all = append(all, p)
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	return &d, all
}

// experimentVar is how every dashboard query selects the experiment.
const experimentVar = `experiment="$experiment"`

// TestDashboard checks that the Grafana dashboard decodes, takes its
// datasource and experiment as variables, and that every panel queries
// only series that freshbench exposes or the rules record, for the
// chosen experiment.
func TestDashboard(t *testing.T) {
	known := exposedNames(t)
	recorded, _ := rules(t)
	for n := range recorded {
		known[n] = true
	}
	d, panels := readDashboard(t)
	vars := map[string]string{}
	for _, v := range d.Templating.List {
		vars[v.Name] = v.Type
		if v.Name != "experiment" {
			continue
		}
		var q struct {
			Query string `json:"query"`
		}
		if err := json.Unmarshal(v.Query, &q); err != nil {
			t.Fatalf("experiment variable's query: %v", err)
		}
		m := regexp.MustCompile(`^label_values\(([a-z_:]+), experiment\)$`).FindStringSubmatch(q.Query)
		if m == nil || !known[m[1]] {
			t.Errorf("experiment variable's query %q: want label_values(<a freshbench metric>, experiment)", q.Query)
		}
		if v.Datasource == nil || v.Datasource.UID != "${datasource}" {
			t.Errorf("experiment variable's datasource %+v, want the datasource variable", v.Datasource)
		}
	}
	if vars["datasource"] != "datasource" || vars["experiment"] != "query" {
		t.Errorf("variables %v: want datasource (a datasource) and experiment (a query)", vars)
	}
	exprs := 0
	for _, p := range panels {
		if p.Type == "row" {
			continue
		}
		if p.Datasource == nil || p.Datasource.UID != "${datasource}" {
			t.Errorf("panel %q: datasource %+v, want the datasource variable", p.Title, p.Datasource)
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			exprs++
			if !strings.Contains(tg.Expr, experimentVar) {
				t.Errorf("panel %q: %s does not select the experiment (%s)", p.Title, tg.Expr, experimentVar)
			}
			names := promqlNames(tg.Expr)
			if len(names) == 0 {
				t.Errorf("panel %q: %s selects no series", p.Title, tg.Expr)
			}
			for _, n := range names {
				if !known[n] {
					t.Errorf("panel %q: %s selects %s, which neither freshbench exposes nor the rules record", p.Title, tg.Expr, n)
				}
			}
		}
	}
	if exprs < 10 {
		t.Errorf("%d queries in %d panels: the dashboard lost its panels?", exprs, len(panels))
	}
}
