package pace

import (
	"testing"
	"time"
)

func TestParseRate(t *testing.T) {
	good := map[string]Rate{
		"5000":     {5000, Events},
		"5000/s":   {5000, Events},
		"0.5":      {0.5, Events},
		"10MB/s":   {10e6, Bytes},
		"10mb/s":   {10e6, Bytes},
		"1.5KB/s":  {1500, Bytes},
		"512KiB/s": {512 * 1024, Bytes},
		"100B/s":   {100, Bytes},
		"10MB":     {10e6, Bytes},
	}
	for in, want := range good {
		got, err := ParseRate(in)
		if err != nil || got != want {
			t.Errorf("ParseRate(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "-5", "fast", "10XB/s", "MB/s"} {
		if _, err := ParseRate(in); err == nil {
			t.Errorf("ParseRate(%q) succeeded, want an error", in)
		}
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]float64{"1000": 1000, "1KB": 1000, "1.25KB": 1250, "4KiB": 4096, "2MB": 2e6} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := ParseSize("big"); err == nil {
		t.Error("ParseSize(big) succeeded")
	}
}

func TestScheduleEventRate(t *testing.T) {
	start := time.Unix(1000, 0)
	s := NewSchedule(start, Rate{PerSecond: 1000, Unit: Events})
	for k := 0; k < 100; k++ {
		want := start.Add(time.Duration(k) * 50 * time.Millisecond)
		if got := s.Next(); !got.Equal(want) {
			t.Fatalf("batch %d intended at %v, want %v", k, got.Sub(start), want.Sub(start))
		}
		s.Advance(50, 999999) // bytes do not matter for an event rate
	}
}

func TestScheduleByteRate(t *testing.T) {
	start := time.Unix(1000, 0)
	s := NewSchedule(start, Rate{PerSecond: 1e6, Unit: Bytes})
	sizes := []int{1000, 3000, 500, 10000}
	var sent int
	for _, b := range sizes {
		want := start.Add(time.Duration(sent) * time.Microsecond) // 1 byte per µs
		if got := s.Next(); !got.Equal(want) {
			t.Fatalf("after %d bytes intended at %v, want %v", sent, got.Sub(start), want.Sub(start))
		}
		s.Advance(7, b)
		sent += b
	}
}

func TestSleepStopsOnDone(t *testing.T) {
	done := make(chan struct{})
	close(done)
	if Sleep(time.Now().Add(time.Hour), done) {
		t.Fatal("Sleep returned true after done was closed")
	}
	if !Sleep(time.Now().Add(-time.Second), make(chan struct{})) {
		t.Fatal("Sleep into the past returned false")
	}
}

// Skip counts exactly the units Next would have given before end.
func TestSkipMatchesNext(t *testing.T) {
	start := time.Unix(1000, 0)
	for _, tc := range []struct {
		rate   Rate
		unit   float64
		sent   float64
		length time.Duration
	}{
		{Rate{1000, Events}, 50, 0, 2 * time.Second},
		{Rate{1000, Events}, 50, 300, 2 * time.Second},
		{Rate{333, Events}, 7, 14, 1234567 * time.Microsecond},
		{Rate{3e6, Bytes}, 50000, 150000, 3 * time.Second},
		{Rate{10, Events}, 10, 0, 3 * time.Second},
		{Rate{10, Events}, 10, 40, 3 * time.Second},
	} {
		walk := &Schedule{start: start, rate: tc.rate, sent: tc.sent}
		want := 0
		var first, last time.Time
		for t := walk.Next(); t.Before(start.Add(tc.length)); t = walk.Next() {
			if want == 0 {
				first = t
			}
			last = t
			want++
			walk.sent += tc.unit
		}
		s := &Schedule{start: start, rate: tc.rate, sent: tc.sent}
		n, f, l := s.Skip(start.Add(tc.length), tc.unit)
		if n != want || (n > 0 && (!f.Equal(first) || !l.Equal(last))) {
			t.Errorf("%+v: Skip = %d %v %v; walking Next gives %d %v %v", tc, n, f, l, want, first, last)
		}
		if n > 0 && s.Next().Before(start.Add(tc.length)) {
			t.Errorf("%+v: after Skip the next unit %v is still due", tc, s.Next())
		}
	}
}
