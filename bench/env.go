package bench

import (
	"context"
	"net/url"
	"os"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/freshbench/freshbench/redact"
	"github.com/freshbench/freshbench/results"
	"github.com/freshbench/freshbench/target"
)

// ToolVersion is the module version of the running binary, or "devel".
func ToolVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

// Description is what a results file says about the command, the tool,
// the host and the target. It is taken once, before a command measures,
// and applied to every results file the command writes.
type Description struct {
	Command        string
	Tool           results.Tool
	Environment    results.Environment
	TargetSettings map[string]string
	// layout says what the target made of the events when a result is
	// applied, not when the description is taken: a target may shape its
	// table from the events it is sent (QuestDB's columns=flat).
	layout      target.Layouter
	Via         string // see results.Config
	ViaSettings map[string]string
	// Ceilings, when looked for, is this machine's calibration: each
	// result with an ingest records the share of it it used.
	Ceilings Ceilings
	// Workload, when the command read one, is recorded as resolved.
	Workload *results.Workload
}

// Describe asks the host and the target what a results file records.
func Describe(ctx context.Context, command string, tgt target.Target, rawURL string) Description {
	host, _ := os.Hostname()
	d := Description{
		Command: command,
		Tool:    results.Tool{Name: "freshbench", Version: ToolVersion()},
		Environment: results.Environment{
			Host: host, OS: runtime.GOOS, Arch: runtime.GOARCH, Cores: runtime.NumCPU(),
			GoVersion: runtime.Version(), Target: tgt.Name(), TargetURL: redact.URL(rawURL),
		},
	}
	if s, ok := tgt.(target.Describer); ok {
		d.TargetSettings = s.Settings()
	}
	if l, ok := tgt.(target.Layouter); ok {
		d.layout = l
	}
	if p, ok := tgt.(target.Piped); ok {
		d.Via, d.ViaSettings = p.Via()
	}
	if u, err := url.Parse(rawURL); err == nil {
		d.Environment.Target = u.Scheme
	}
	vctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if v, err := tgt.Version(vctx); err == nil {
		d.Environment.TargetVersion = v
	} else {
		d.Environment.TargetVersion = "unknown: " + err.Error()
	}
	return d
}

// Apply writes the description into res.
func (d Description) Apply(res *results.Result) {
	res.Command, res.Tool, res.Environment = d.Command, d.Tool, d.Environment
	res.Target().URL = d.Environment.TargetURL
	res.Config.TargetSettings = d.TargetSettings
	if d.layout != nil {
		res.Config.TargetLayout = d.layout.Layout()
	}
	res.Workload = d.Workload
	res.Config.Via, res.Config.ViaSettings = d.Via, d.ViaSettings
	d.Ceilings.Apply(res, d.Environment)
}
