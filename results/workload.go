package results

// Workload is the workload a command ran when it read a workload file or
// a preset: where it came from, the setup it replays, the scale applied
// and every flag as resolved — from the file, scaled, or given on the
// command line, which overrides the file — credentials removed.
type Workload struct {
	Source      string            `json:"source"` // the file's path, or preset:NAME
	Description string            `json:"description,omitempty"`
	Replays     string            `json:"replays,omitempty"` // the published setup it replays
	Scale       float64           `json:"scale"`
	Flags       map[string]string `json:"flags"`
	// FromCommandLine names the flags given on the command line: they
	// override the file and were not scaled.
	FromCommandLine []string `json:"from_command_line,omitempty"`
}
