// Package outfile writes the files freshbench writes: results, reports,
// calibrations, profiles. A reader never sees half a file (each is written
// beside its path and renamed over it); a link is written through to the
// file it leads to, the link kept; a path that holds anything but a
// regular file (a device, a FIFO, a socket, a directory) is refused, never
// replaced. Files are made as os.WriteFile makes them, 0666 less the
// umask; a file replaced keeps its mode.
package outfile

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Stream is the standard stream an output path names, if any.
type Stream int

const (
	NoStream Stream = iota // a file
	Stdout
	Stderr
)

// streams are the names of the standard streams.
var streams = map[string]Stream{
	"-": Stdout, "/dev/stdout": Stdout, "/dev/fd/1": Stdout, "/proc/self/fd/1": Stdout,
	"/dev/stderr": Stderr, "/dev/fd/2": Stderr, "/proc/self/fd/2": Stderr,
}

// StreamOf tells which standard stream path names: "-" and /dev/stdout
// name standard output, /dev/stderr standard error, as does a link to
// one of them, or a path that is the same file as this process's
// standard output or error and not a regular file (a link to the
// terminal).
func StreamOf(path string) Stream {
	p := path
	for range 64 {
		if s, ok := streams[p]; ok {
			return s
		}
		to, err := os.Readlink(p)
		if err != nil {
			break
		}
		if !filepath.IsAbs(to) {
			to = filepath.Join(filepath.Dir(p), to)
		}
		p = to
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().IsRegular() {
		return NoStream
	}
	for _, s := range []struct {
		f      *os.File
		stream Stream
	}{{os.Stdout, Stdout}, {os.Stderr, Stderr}} {
		if fst, err := s.f.Stat(); err == nil && os.SameFile(st, fst) {
			return s.stream
		}
	}
	return NoStream
}

// Check tells, before anything is measured, whether Write can write
// path: path leads, through its links, to a regular file or to nothing
// yet, in a directory (made when missing) that takes a new file.
func Check(path string) error {
	target, err := resolve(path)
	if err != nil {
		return err
	}
	if err := regular(path, target); err != nil {
		return err
	}
	dir := filepath.Dir(target)
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return fmt.Errorf("%s: directory cannot be created: %w", path, cause(err))
	}
	f, err := create(dir, "."+filepath.Base(target)+".", ".check")
	if err != nil {
		return fmt.Errorf("%s: directory %s does not take a new file: %w", path, dir, cause(err))
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}

// Write writes data to path, checked again as Check does: through a file
// beside the file path leads to, renamed over it once complete.
func Write(path string, data []byte) error {
	target, err := resolve(path)
	if err == nil {
		err = regular(path, target)
	}
	if err == nil {
		err = replace(target, data)
	}
	if err != nil {
		return &Error{Path: path, Err: err}
	}
	return nil
}

// Save writes data to path as Write does and, when it cannot, keeps data
// in a file of the user's cache or temporary directory (see Keep).
func Save(path string, data []byte) error {
	err := Write(path, data)
	if err == nil {
		return nil
	}
	return Keep(path, data, errors.Unwrap(err))
}

// Keep writes data, which could not be written to path for err, to a new
// file under the user's cache directory (freshbench/unsaved/), or the
// temporary directory when that fails, so that what it holds is not lost.
// The *Error returned names both paths.
func Keep(path string, data []byte, err error) *Error {
	e := &Error{Path: path, Err: err}
	var dirs []string
	if cache, err := os.UserCacheDir(); err == nil {
		dirs = append(dirs, filepath.Join(cache, "freshbench", "unsaved"))
	}
	dirs = append(dirs, filepath.Join(os.TempDir(), "freshbench-unsaved"))
	base := filepath.Base(path)
	if StreamOf(path) != NoStream || base == "." || base == string(filepath.Separator) {
		base = "output"
	}
	ext := filepath.Ext(base)
	prefix := strings.TrimSuffix(base, ext) + "-" + time.Now().Format("20060102-150405") + "-"
	for _, dir := range dirs {
		name, err := writeNew(dir, prefix, ext, data)
		e.Fallback, e.FallbackErr = name, err
		if err == nil {
			break
		}
	}
	return e
}

// Error is a file that could not be written: the command's own output
// failed. Fallback is where its content was kept instead, if anywhere.
type Error struct {
	Path        string
	Err         error
	Fallback    string // "" when not tried
	FallbackErr error  // why the fallback failed too
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("write %s: %v", e.Path, e.Err)
	switch {
	case e.Fallback == "":
		return msg
	case e.FallbackErr != nil:
		return fmt.Sprintf("%s; nor could it be kept in %s: %v", msg, e.Fallback, e.FallbackErr)
	}
	return fmt.Sprintf("%s; kept instead in %s", msg, e.Fallback)
}

func (e *Error) Unwrap() error { return e.Err }

// resolve follows the links of path to the path of the file it leads to,
// which may not exist yet (a dangling link).
func resolve(path string) (string, error) {
	for range 64 {
		// The directory's links first, so that a relative link is read
		// from where it lies.
		if dir, err := filepath.EvalSymlinks(filepath.Dir(path)); err == nil {
			path = filepath.Join(dir, filepath.Base(path))
		}
		st, err := os.Lstat(path)
		if absent(err) {
			return path, nil
		}
		if err != nil {
			return "", fmt.Errorf("%s: %w", path, cause(err))
		}
		if st.Mode()&fs.ModeSymlink == 0 {
			return path, nil
		}
		to, err := os.Readlink(path)
		if err != nil {
			return "", fmt.Errorf("%s: %w", path, cause(err))
		}
		if !filepath.IsAbs(to) {
			to = filepath.Join(filepath.Dir(path), to)
		}
		path = to
	}
	return "", fmt.Errorf("%s: too many links", path)
}

// regular refuses a target that exists and is not a regular file; path is
// what the user gave, which leads to target.
func regular(path, target string) error {
	st, err := os.Lstat(target)
	if absent(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, cause(err))
	}
	if st.Mode().IsRegular() {
		return nil
	}
	what := path
	if target != path {
		what = fmt.Sprintf("%s (a link to %s)", path, target)
	}
	if st.IsDir() {
		return fmt.Errorf("%s is a directory: give a file in it, such as %s%cNAME", what, strings.TrimSuffix(path, string(filepath.Separator)), filepath.Separator)
	}
	return fmt.Errorf("%s is a %s, not a regular file, and is not replaced: give a file path (or - for standard output)", what, kind(st.Mode()))
}

// absent tells that nothing is at a path: it does not exist, or a
// directory on the way is not one (which making the directory reports).
func absent(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "block device"
	}
	return "special file (" + m.Type().String() + ")"
}

// replace writes data to a new file beside target, synced, then renames
// it over target; a target replaced lends the new file its mode.
func replace(target string, data []byte) error {
	dir := filepath.Dir(target)
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return fmt.Errorf("make its directory: %w", cause(err))
	}
	f, err := create(dir, "."+filepath.Base(target)+".", ".tmp")
	if err != nil {
		return cause(err)
	}
	done := false
	defer func() {
		if !done {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if st, err := os.Stat(target); err == nil {
		if err := f.Chmod(st.Mode().Perm()); err != nil {
			return cause(err)
		}
	}
	if err := fill(f, data); err != nil {
		return err
	}
	if err := os.Rename(f.Name(), target); err != nil {
		os.Remove(f.Name())
		return cause(err)
	}
	done = true
	return nil
}

// writeNew writes data to a new file in dir, made when missing, named
// prefix, a number, ext; it returns the file's name.
func writeNew(dir, prefix, ext string, data []byte) (string, error) {
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return dir, cause(err)
	}
	f, err := create(dir, prefix, ext)
	if err != nil {
		return dir, cause(err)
	}
	if err := fill(f, data); err != nil {
		os.Remove(f.Name())
		return f.Name(), err
	}
	return f.Name(), nil
}

// fill writes data to f, syncs and closes it: a file renamed into place
// holds all of data even when the machine stops next.
func fill(f *os.File, data []byte) error {
	_, err := f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return cause(err)
}

// create makes a new file in dir named prefix, a random number, suffix,
// with the mode os.WriteFile gives (os.CreateTemp's is 0600).
func create(dir, prefix, suffix string) (*os.File, error) {
	for {
		name := filepath.Join(dir, prefix+strconv.FormatUint(uint64(rand.Uint32()), 10)+suffix)
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
}

// cause is err without the name of the file beside the target, which
// means nothing to the user.
func cause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return fmt.Errorf("%s: %w", le.Op, le.Err)
	}
	return err
}
