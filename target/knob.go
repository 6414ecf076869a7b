package target

import (
	"errors"
	"fmt"
	"iter"
	"maps"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ErrBadSetting marks a target setting that the target does not take or
// whose value it cannot use: something the user fixes.
var ErrBadSetting = errors.New("bad target setting")

// Knob declares one setting of a target (a key of Options.Settings) in one
// place: its name, its default, what it means and how a value is parsed.
// The settings help, the check for unknown keys, the parsing and the
// effective settings recorded with every result all come from it.
type Knob struct {
	Name string
	// Default is the value in effect when none is given, written as a
	// user would write it. "" leaves the setting to the server or the
	// driver; Help then says what that means.
	Default string
	// Help says what the setting means and which values it takes, in one
	// line.
	Help string
	// Parse checks a value and returns it in the type the target reads
	// (int, bool, time.Duration, a canonical string, …). nil takes any
	// string as it is.
	Parse func(v string) (any, error)
}

func (k Knob) parse(v string) (any, error) {
	if k.Parse == nil {
		return v, nil
	}
	return k.Parse(v)
}

// Knobs are the settings of one target.
type Knobs []Knob

// Names lists the knobs' names, sorted.
func (ks Knobs) Names() []string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = k.Name
	}
	slices.Sort(out)
	return out
}

func (ks Knobs) lookup(name string) (Knob, bool) {
	for _, k := range ks {
		if k.Name == name {
			return k, true
		}
	}
	return Knob{}, false
}

// Help describes the knobs, one line each, "name (default value): what it
// means", each line after indent.
func (ks Knobs) Help(indent string) string {
	lines := make([]string, len(ks))
	for i, k := range ks {
		def := k.Default
		if def == "" {
			def = "unset"
		}
		lines[i] = fmt.Sprintf("%s%s (default %s): %s", indent, k.Name, def, k.Help)
	}
	return strings.Join(lines, "\n")
}

// Check names the first key of set, in sorted order, that is not a knob,
// with the keys that are; a misspelt setting must not be ignored silently.
func (ks Knobs) Check(set map[string]string) error {
	k, ok := ks.unknown(maps.Keys(set))
	switch {
	case !ok:
		return nil
	case len(ks) == 0:
		return fmt.Errorf("%w %q: this target takes no settings", ErrBadSetting, k)
	}
	return fmt.Errorf("%w %q: the settings are %s", ErrBadSetting, k, strings.Join(ks.Names(), ", "))
}

// unknown returns the first of keys, in sorted order, that is not a knob.
func (ks Knobs) unknown(keys iter.Seq[string]) (string, bool) {
	for _, k := range slices.Sorted(keys) {
		if _, ok := ks.lookup(k); !ok {
			return k, true
		}
	}
	return "", false
}

// Resolve checks set and returns the value of every knob: the one given,
// or the default. An unknown key or a value the knob's parser refuses is
// an error that wraps ErrBadSetting.
func (ks Knobs) Resolve(set map[string]string) (Settings, error) {
	if err := ks.Check(set); err != nil {
		return nil, err
	}
	out := make(Settings, len(ks))
	for _, k := range ks {
		v, given := set[k.Name]
		if !given {
			v = k.Default
		}
		val, err := k.parse(v)
		if err != nil {
			if !given {
				// A default that does not parse is the target's bug.
				return nil, fmt.Errorf("default of setting %s=%q: %w", k.Name, v, err)
			}
			return nil, fmt.Errorf("%w %s=%q: %w", ErrBadSetting, k.Name, v, err)
		}
		out[k.Name] = val
	}
	return out, nil
}

// WithQuery returns set plus the knobs given as query parameters of a
// target URL (postgres://…?table=t), for targets that take a setting in
// either place. A knob given both ways with different values is an error
// (wrapping ErrBadURL), so that the two can never disagree silently; a
// value that does not parse is an error wrapping ErrBadURL too. Query
// parameters that are not knobs are left to the caller.
func (ks Knobs) WithQuery(q url.Values, set map[string]string) (map[string]string, error) {
	out := make(map[string]string, len(set))
	for k, v := range set {
		out[k] = v
	}
	for _, k := range ks {
		if !q.Has(k.Name) {
			continue
		}
		v := q.Get(k.Name)
		if _, err := k.parse(v); err != nil {
			return nil, fmt.Errorf("%w: %s=%q: %w", ErrBadURL, k.Name, v, err)
		}
		if s, ok := set[k.Name]; ok && s != v {
			return nil, fmt.Errorf("%w: %s=%q in the URL but %q in the settings; give it once", ErrBadURL, k.Name, v, s)
		}
		out[k.Name] = v
	}
	return out, nil
}

// ResolveURL is Resolve for a target whose URL's query parameters are
// knobs only: it refuses a parameter that is not a knob (checkQuery),
// merges the rest with set (WithQuery) and resolves the result. Its
// errors wrap ErrBadURL or ErrBadSetting as those of the steps do.
func (ks Knobs) ResolveURL(q url.Values, set map[string]string) (Settings, error) {
	if err := ks.checkQuery(q); err != nil {
		return nil, err
	}
	set, err := ks.WithQuery(q, set)
	if err != nil {
		return nil, err
	}
	return ks.Resolve(set)
}

// checkQuery refuses, with ErrBadURL, a query parameter of a target URL
// that is not a knob, for targets whose URL takes knobs only: a misspelt
// one would otherwise leave its knob silently at the default.
func (ks Knobs) checkQuery(q url.Values) error {
	k, ok := ks.unknown(maps.Keys(q))
	switch {
	case !ok:
		return nil
	case len(ks) == 0:
		return fmt.Errorf("%w: query parameter %q: this target takes none", ErrBadURL, k)
	}
	return fmt.Errorf("%w: query parameter %q: the URL takes %s", ErrBadURL, k, strings.Join(ks.Names(), ", "))
}

// Settings are the effective values of a target's knobs, defaults
// included, in the types their parsers return.
type Settings map[string]any

// Text returns the settings as text, for the results file.
func (s Settings) Text() map[string]string {
	out := make(map[string]string, len(s))
	for k, v := range s {
		out[k] = fmt.Sprint(v)
	}
	return out
}

// ParseInt accepts a whole number ≥ minimum and returns an int.
func ParseInt(minimum int) func(string) (any, error) {
	return func(v string) (any, error) {
		n, err := strconv.Atoi(v)
		if err != nil || n < minimum {
			return nil, fmt.Errorf("want a whole number ≥ %d", minimum)
		}
		return n, nil
	}
}

// ParseFloat accepts a number ≥ minimum and returns a float64.
func ParseFloat(minimum float64) func(string) (any, error) {
	return func(v string) (any, error) {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(f) || f < minimum {
			return nil, fmt.Errorf("want a number ≥ %g", minimum)
		}
		return f, nil
	}
}

// ParseBool accepts what strconv.ParseBool does and returns a bool.
func ParseBool(v string) (any, error) {
	b, err := strconv.ParseBool(v)
	if err != nil {
		return nil, errors.New("want true or false")
	}
	return b, nil
}

// ParseDuration accepts a duration ≥ minimum, such as 200ms, and returns
// a time.Duration.
func ParseDuration(minimum time.Duration) func(string) (any, error) {
	return func(v string) (any, error) {
		d, err := time.ParseDuration(v)
		if err != nil || d < minimum {
			return nil, fmt.Errorf("want a duration ≥ %s, such as 200ms", minimum)
		}
		return d, nil
	}
}

// ParseHostPort accepts host:port, or "" (unset), and returns it as
// given.
func ParseHostPort(v string) (any, error) {
	if v == "" {
		return "", nil
	}
	u, err := url.Parse("http://" + v)
	if err != nil || u.Host != v || u.Port() == "" {
		return nil, fmt.Errorf("%q: want host:port", v)
	}
	return v, nil
}

// OneOf accepts one of choices, in any case, and returns it as written in
// choices.
func OneOf(choices ...string) func(string) (any, error) {
	return func(v string) (any, error) {
		for _, c := range choices {
			if strings.EqualFold(v, c) {
				return c, nil
			}
		}
		return nil, fmt.Errorf("want one of %s", strings.Join(choices, ", "))
	}
}
