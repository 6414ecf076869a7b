package target

import "errors"

// ErrNotKept is what a Reader returns when its target keeps no events
// (discard://): such a target has no freshness, visibility or
// completeness to measure, and a figure computed from its empty answers
// (every event "missing", a lag as old as the run) would be nonsense.
// Callers test for it with errors.Is and report "not measured" instead.
var ErrNotKept = errors.New("the target keeps no events")
