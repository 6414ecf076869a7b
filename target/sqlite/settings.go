package sqlite

import "strings"

// Settings returns the settings (--set keys) in effect, defaults included.
// The journal mode is always WAL.
func (t *Target) Settings() map[string]string {
	sync := strings.ToUpper(t.opts.Settings["synchronous"])
	if sync == "" {
		sync = "NORMAL"
	}
	return map[string]string{"table": t.table, "synchronous": sync}
}
