// Package corpus replays a user's events: JSON Lines files, plain, gzip
// (.gz) or zstd (.zst, .zstd), read in order line by line. Each line is
// one JSON object that the generator stamps with freshbench's fields.
//
// Open reads every file once, up front, and refuses a line that is not a
// JSON object or that already carries a field freshbench stamps, naming
// the file and the line: a run never sends half of a corpus and then
// stops on a bad line. The replay then streams the files again, so memory
// stays bounded whatever the corpus's size: two read buffers, the longest
// line, and for zstd the decompressor's window (what the file's encoder
// chose: 8 MB at zstd's usual levels, 128 MB with --long; at most 512 MB,
// the decoder's limit).
package corpus

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/freshbench/freshbench/invalid"
)

// Stamped are the fields freshbench writes into every event (the last
// two into updates only). A corpus line must not carry them.
var Stamped = []string{"_id", "_event_time", "generator_identifier", "_seq", "_revision", "_update_time"}

// MaxLine is the longest line accepted, in bytes. It bounds the memory a
// line takes in the reader and in a batch.
const MaxLine = 16 << 20

const readBuffer = 1 << 20

// Corpus is a validated set of JSON Lines files, replayed in order. It is
// safe for concurrent use: the generators of a run share it and each line
// goes to exactly one of them.
type Corpus struct {
	files []string
	lines int64 // non-blank lines over all files
	bytes int64 // their bytes, without line ends and surrounding blanks
	loop  bool

	mu     sync.Mutex
	file   int    // index in files of the open file
	r      reader // reads c.files[file] when its f is not nil
	passes int64  // complete passes over the corpus
	taken  int64  // lines handed out
	done   bool   // the corpus ended and does not loop
	err    error  // a read error during the replay
}

// Open lists the files of paths (a directory stands for its regular
// files, sorted by name), validates every line, and returns the corpus
// ready to replay. With loop, the replay starts over at the end;
// otherwise it ends there.
func Open(paths []string, loop bool) (*Corpus, error) {
	if len(paths) == 0 {
		return nil, invalid.New(invalid.Corpus, "", "one or more JSON Lines files or directories")
	}
	c := &Corpus{loop: loop}
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, invalid.Wrap(invalid.Corpus, p, fmt.Errorf("%w; give an existing file or directory", err))
		}
		if !fi.IsDir() {
			c.files = append(c.files, p)
			continue
		}
		ents, err := os.ReadDir(p)
		if err != nil {
			return nil, invalid.Wrap(invalid.Corpus, p, err)
		}
		for _, e := range ents { // ReadDir sorts by name
			if e.Type().IsRegular() && !strings.HasPrefix(e.Name(), ".") {
				c.files = append(c.files, filepath.Join(p, e.Name()))
			}
		}
	}
	var r reader // one for all the files, as the replay's
	defer r.Close()
	for _, f := range c.files {
		if err := c.check(&r, f); err != nil {
			return nil, err
		}
	}
	if c.lines == 0 {
		return nil, invalid.New(invalid.Corpus, strings.Join(paths, ","), "at least one JSON object, one a line")
	}
	return c, nil
}

// check validates every line of file, read with r, and counts them.
func (c *Corpus) check(r *reader, file string) error {
	if err := r.open(file); err != nil {
		return invalid.Wrap(invalid.Corpus, file, err)
	}
	defer r.closeFile()
	for {
		line, err := r.next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return invalid.Wrap(invalid.Corpus, file, fmt.Errorf("line %d: %w", r.n, err))
		}
		if err := CheckLine(line); err != nil {
			return invalid.Wrap(invalid.Corpus, file, fmt.Errorf("line %d: %w", r.n, err))
		}
		c.lines++
		c.bytes += int64(len(line))
	}
}

// CheckLine says what is wrong with one trimmed, non-blank line, and how
// to fix it.
func CheckLine(line []byte) error {
	if line[0] != '{' {
		return errors.New("not a JSON object; write one object a line, e.g. {\"user\":\"ann\"}")
	}
	if !json.Valid(line) {
		var v any
		err := json.Unmarshal(line, &v)
		return fmt.Errorf("not valid JSON (%v); write one complete JSON object a line", err)
	}
	var stamped string
	err := topKeys(line, func(k []byte) bool {
		if bytes.IndexByte(k, '\\') >= 0 {
			var s string
			if json.Unmarshal(k, &s) == nil {
				k = []byte(s)
			}
		} else {
			k = k[1 : len(k)-1]
		}
		for _, s := range Stamped {
			if string(k) == s {
				stamped = s
				return false
			}
		}
		return true
	})
	if err != nil {
		return err
	}
	if stamped != "" {
		return fmt.Errorf("carries the field %q, which freshbench stamps into every event (%s); rename or remove it", stamped, strings.Join(Stamped, ", "))
	}
	return nil
}

// topKeys calls fn with each key of the valid JSON object obj, quotes
// included, until fn returns false.
func topKeys(obj []byte, fn func(key []byte) bool) error {
	depth := 0
	expectKey := false
	for i := 0; i < len(obj); i++ {
		switch obj[i] {
		case '"':
			j := i + 1
			for ; j < len(obj) && obj[j] != '"'; j++ {
				if obj[j] == '\\' {
					j++
				}
			}
			if depth == 1 && expectKey {
				if !fn(obj[i : j+1]) {
					return nil
				}
				expectKey = false
			}
			i = j
		case '{':
			depth++
			expectKey = depth == 1
		case '[':
			depth++
		case '}', ']':
			depth--
		case ',':
			expectKey = depth == 1
		}
	}
	if depth != 0 {
		return errors.New("unbalanced braces")
	}
	return nil
}

// Head returns the corpus's first n events (all of them when it holds
// fewer), each the JSON object of its line, read apart from the replay,
// which it leaves where it is. It stops early, past the first line, at
// the line that would take the head over max bytes: lines may be
// megabytes long.
func (c *Corpus) Head(n int, max int64) ([][]byte, error) {
	var r reader
	defer r.Close()
	var head [][]byte
	var size int64
	for _, f := range c.files {
		if len(head) == n || size > max {
			break
		}
		if err := r.open(f); err != nil {
			return nil, fmt.Errorf("corpus %s: %w", f, err)
		}
		for len(head) < n {
			line, err := r.next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("corpus %s: line %d: %w", f, r.n, err)
			}
			if size += int64(len(line)); size > max && len(head) > 0 {
				break
			}
			head = append(head, bytes.Clone(line))
		}
		r.closeFile()
	}
	return head, nil
}

// Files lists the corpus's files in replay order.
func (c *Corpus) Files() []string { return slices.Clone(c.files) }

// Lines is the number of events in one pass over the corpus.
func (c *Corpus) Lines() int64 { return c.lines }

// MeanLine is the mean line size in bytes, before stamping.
func (c *Corpus) MeanLine() int { return int((c.bytes + c.lines - 1) / c.lines) }

// Loops says whether the replay starts over at the end.
func (c *Corpus) Loops() bool { return c.loop }

// Passes returns how many events the replay has handed out and in how
// many passes over the corpus (a pass begun counts: 1.5 passes is a
// corpus replayed once and half again).
func (c *Corpus) Passes() (taken int64, passes float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.taken, float64(c.taken) / float64(c.lines)
}

// Err is the error that ended the replay early, if any: a file changed
// or vanished after Open.
func (c *Corpus) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// AppendNext appends the members of the next line's object (what lies
// between its braces, blanks trimmed; nothing for {}) to dst. It returns
// false, and dst unchanged, once the corpus has ended and does not loop,
// or a read failed (see Err).
func (c *Corpus) AppendNext(dst []byte) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for !c.done {
		if c.r.f == nil {
			if err := c.r.open(c.files[c.file]); err != nil {
				c.fail(err)
				break
			}
		}
		line, err := c.r.next()
		if err == nil {
			c.taken++
			return append(dst, members(line)...), true
		}
		c.r.closeFile()
		if !errors.Is(err, io.EOF) {
			c.fail(fmt.Errorf("line %d: %w", c.r.n, err))
			break
		}
		c.file++
		if c.file == len(c.files) {
			c.file = 0
			c.passes++
			c.done = !c.loop
		}
	}
	return dst, false
}

func (c *Corpus) fail(err error) {
	c.err = fmt.Errorf("corpus %s: %w", c.files[c.file], err)
	c.done = true
}

// Close releases the open file and the decompressors.
func (c *Corpus) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.done = true
	return c.r.Close()
}

// members is what lies between the braces of a trimmed object line.
func members(line []byte) []byte {
	return bytes.TrimSpace(line[1 : len(line)-1])
}

// reader reads the non-blank lines of one file at a time. Its buffers
// and decompressors are reset from file to file, and from pass to pass of
// a looping corpus, instead of made anew: a zstd decoder's window alone is
// megabytes, which a short corpus looping would allocate on every pass.
type reader struct {
	f    *os.File      // the open file; nil between files
	in   *bufio.Reader // gzip's input, read a byte at a time
	gz   *gzip.Reader
	zst  *zstd.Decoder
	br   *bufio.Reader // the lines
	long []byte        // a line longer than the read buffer, assembled
	n    int           // number of the line last read, from 1
}

// open opens file, decompressed as its suffix says, from its first line.
func (r *reader) open(file string) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	src, err := r.decompress(file, f)
	if err != nil {
		f.Close()
		return err
	}
	if r.br == nil {
		r.br = bufio.NewReaderSize(src, readBuffer)
	} else {
		r.br.Reset(src)
	}
	r.f, r.n = f, 0
	return nil
}

// decompress returns what reads f decompressed, as file's suffix says.
func (r *reader) decompress(file string, f *os.File) (io.Reader, error) {
	switch {
	case strings.HasSuffix(file, ".gz"):
		if r.in == nil {
			r.in = bufio.NewReaderSize(f, readBuffer)
		} else {
			r.in.Reset(f)
		}
		var err error
		if r.gz == nil {
			r.gz, err = gzip.NewReader(r.in)
		} else {
			err = r.gz.Reset(r.in)
		}
		if err != nil {
			return nil, fmt.Errorf("gzip: %w; give a gzip file or drop the .gz suffix", err)
		}
		return r.gz, nil
	case strings.HasSuffix(file, ".zst"), strings.HasSuffix(file, ".zstd"):
		var err error
		if r.zst == nil {
			// One block at a time on the reading goroutine: a replay
			// is paced, so decoding ahead on other cores gains nothing
			// and costs a window of memory per decoder. Lowmem off
			// keeps the block buffers from one block to the next.
			r.zst, err = zstd.NewReader(f, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(false))
		} else {
			err = r.zst.Reset(f)
		}
		if err != nil {
			return nil, fmt.Errorf("zstd: %w; give a zstd file or drop the .zst suffix", err)
		}
		return r.zst, nil
	}
	return f, nil
}

// closeFile closes the open file, keeping the buffers for the next.
func (r *reader) closeFile() error {
	if r.f == nil {
		return nil
	}
	err := r.f.Close()
	r.f = nil
	return err
}

// next returns the next non-blank line, trimmed; it aliases the reader's
// buffer until the next call.
func (r *reader) next() ([]byte, error) {
	for {
		line, err := r.br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			r.long = append(r.long[:0], line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				if len(r.long) > MaxLine {
					r.n++
					return nil, fmt.Errorf("longer than %d MiB; split the document", MaxLine>>20)
				}
				line, err = r.br.ReadSlice('\n')
				r.long = append(r.long, line...)
			}
			line = r.long
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		if len(line) == 0 && err != nil {
			return nil, err // io.EOF
		}
		r.n++
		if t := bytes.TrimSpace(line); len(t) > 0 {
			return t, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// Close closes the open file and releases the decompressors.
func (r *reader) Close() error {
	err := r.closeFile()
	if r.zst != nil {
		r.zst.Close()
		r.zst = nil
	}
	if r.gz != nil {
		r.gz.Close()
	}
	return err
}
