package main

import (
	"strings"
	"testing"

	"github.com/freshbench/freshbench/target/all"
)

// TestBadSettingExitsTwo checks that a setting the user can fix, unknown
// or with a bad value, is a usage error (exit 2) naming the setting.
func TestBadSettingExitsTwo(t *testing.T) {
	for _, c := range []struct {
		set, want string
	}{
		{"capacity=abc", `capacity="abc"`},
		{"capacty=10", `"capacty"`},
	} {
		wantUsageError(t, []string{"run", "--target", "sim://", "--set", c.set, "--duration", "2s", "--warmup", "1s"}, c.want)
	}
	wantUsageError(t, []string{"run", "--target", "sim://?capacity=10", "--set", "capacity=20", "--duration", "2s", "--warmup", "1s"},
		`capacity="10" in the URL but "20" in the settings`)
}

// TestSettingsHelp checks that -h lists every setting of every target.
func TestSettingsHelp(t *testing.T) {
	_, _, stderr := freshbench(t, "run", "-h")
	for _, d := range all.Registry().Drivers() {
		for _, k := range d.Knobs {
			if !strings.Contains(stderr, "  "+k.Name+" (default ") || !strings.Contains(stderr, k.Help) {
				t.Errorf("run -h does not describe %s setting %s", d.Name, k.Name)
			}
		}
	}
}
