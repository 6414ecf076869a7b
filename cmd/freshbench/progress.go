package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/term"
)

// liveLine shows progress: one line rewritten in place on a terminal, a
// plain line every ten seconds otherwise, so that CI logs stay readable.
type liveLine struct {
	w    io.Writer
	tty  bool
	last time.Duration
	open bool // a rewritten line is on screen, not yet ended
}

func newLiveLine(w io.Writer) *liveLine {
	f, isFile := w.(*os.File)
	return &liveLine{w: w, tty: isFile && term.IsTerminal(int(f.Fd()))}
}

// show writes line at elapsed; prefix goes before it on a terminal only
// (a progress bar). An elapsed time that went back starts a new count (the
// next step of a peak search).
func (l *liveLine) show(elapsed time.Duration, prefix, line string) {
	if l.tty {
		fmt.Fprintf(l.w, "\r\033[K%s%s", prefix, line)
		l.open = true
		return
	}
	if elapsed < l.last {
		l.last = 0
	}
	if elapsed-l.last >= 10*time.Second {
		l.last = elapsed
		fmt.Fprintln(l.w, line)
	}
}

// end ends a rewritten line, if one is on screen.
func (l *liveLine) end() {
	if l.open {
		fmt.Fprintln(l.w)
		l.open = false
	}
}
