package all

import (
	"testing"
)

// TestKnobDefaults checks every shipped target's declarations: each knob
// has a name and a meaning, none is declared twice, and the defaults parse.
func TestKnobDefaults(t *testing.T) {
	for _, d := range Registry().Drivers() {
		seen := map[string]bool{}
		for _, k := range d.Knobs {
			if k.Name == "" || k.Help == "" || seen[k.Name] {
				t.Errorf("%s: knob %q has no name or help, or is declared twice", d.Name, k.Name)
			}
			seen[k.Name] = true
		}
		s, err := d.Knobs.Resolve(nil)
		if err != nil {
			t.Errorf("%s: defaults: %v", d.Name, err)
		}
		if len(s) != len(d.Knobs) {
			t.Errorf("%s: %d effective settings for %d knobs", d.Name, len(s), len(d.Knobs))
		}
	}
}
