package noop

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// Product is how the server names itself in its version, which
// freshbench's targets report: a client can tell it is talking to it.
const Product = "freshbench-noop"

// Names of the index and the table in the URLs the server announces.
const (
	AnnouncedIndex = "freshbench"
	AnnouncedTable = "freshbench_events"
)

// Announce writes the server's --target URLs, one a line: the
// Elasticsearch, the OpenSearch and the PostgreSQL endpoint, each when
// it is on.
func (s *Server) Announce(w io.Writer) error {
	for _, u := range []string{s.ElasticsearchURL(AnnouncedIndex), s.OpenSearchURL(AnnouncedIndex), s.PostgresURL(AnnouncedTable)} {
		if u == "" {
			continue
		}
		if _, err := fmt.Fprintln(w, u); err != nil {
			return err
		}
	}
	return nil
}

// Process is a server running as a child process (freshbench noop), so
// that its CPU is not counted as the driver's.
type Process struct {
	cmd    *exec.Cmd
	urls   map[string]string // by scheme
	stderr *tailBuffer

	stop    sync.Once
	cpu     time.Duration
	stopErr error
}

// StartProcess runs exe (the freshbench binary) as "exe noop" on
// loopback, waits for the URLs it announces and returns it; stop it with
// Stop. ctx bounds only the start.
func StartProcess(ctx context.Context, exe string) (*Process, error) {
	cmd := exec.Command(exe, "noop", "--http-listen", "127.0.0.1:0", "--postgres-listen", "127.0.0.1:0")
	p := &Process{cmd: cmd, urls: map[string]string{}, stderr: &tailBuffer{}}
	cmd.Stderr = p.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("start the noop server: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the noop server: %w", err)
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		// Whatever else it writes is read and dropped, so it never blocks.
		_, _ = io.Copy(io.Discard, out)
	}()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for len(p.urls) < 3 {
		select {
		case l, ok := <-lines:
			if !ok {
				p.Stop()
				return nil, fmt.Errorf("the noop server ended before it announced its URLs: %s", p.stderr.text())
			}
			if scheme, _, ok := strings.Cut(l, "://"); ok {
				p.urls[scheme] = l
			}
		case <-ctx.Done():
			p.Stop()
			return nil, fmt.Errorf("the noop server did not announce its URLs: %w", ctx.Err())
		}
	}
	return p, nil
}

// URL returns the announced URL of scheme (elasticsearch, opensearch or
// postgres), "" for another.
func (p *Process) URL(scheme string) string { return p.urls[scheme] }

// Stop interrupts the server, waits for it to end and returns the CPU
// time it used. Calling it again returns the same.
func (p *Process) Stop() (time.Duration, error) {
	p.stop.Do(func() { p.cpu, p.stopErr = p.end() })
	return p.cpu, p.stopErr
}

func (p *Process) end() (time.Duration, error) {
	_ = p.cmd.Process.Signal(os.Interrupt)
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		err = <-done
	}
	st := p.cmd.ProcessState
	if st == nil {
		return 0, err
	}
	cpu := st.UserTime() + st.SystemTime()
	var exit *exec.ExitError
	if errors.As(err, &exit) && !st.Success() {
		return cpu, fmt.Errorf("the noop server ended with %v: %s", exit, p.stderr.text())
	}
	return cpu, err
}

// tailBuffer keeps the last few KB written to it, for error messages.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if len(b.buf) > 4096 {
		b.buf = b.buf[len(b.buf)-4096:]
	}
	return len(p), nil
}

func (b *tailBuffer) text() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(bytes.TrimSpace(b.buf))
}
