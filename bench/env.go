package bench

import (
	"context"
	"net/url"
	"os"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/freshbench/freshbench/target"
)

// ToolVersion is the module version of the running binary, or "devel".
func ToolVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

// Describe fills in the tool and environment of a result.
func Describe(ctx context.Context, res *Result, command string, tgt target.Target, rawURL string) {
	res.Command = command
	res.Tool = Tool{Name: "freshbench", Version: ToolVersion()}
	host, _ := os.Hostname()
	res.Environment = Environment{
		Host: host, OS: runtime.GOOS, Arch: runtime.GOARCH, Cores: runtime.NumCPU(),
		GoVersion: runtime.Version(), Target: tgt.Name(), TargetURL: target.Redact(rawURL),
	}
	if d, ok := tgt.(target.Describer); ok {
		res.Config.TargetSettings = d.Settings()
	}
	if u, err := url.Parse(rawURL); err == nil {
		res.Environment.Target = u.Scheme
	}
	vctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if v, err := tgt.Version(vctx); err == nil {
		res.Environment.TargetVersion = v
	} else {
		res.Environment.TargetVersion = "unknown: " + err.Error()
	}
}
