package testenv

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// BuildFreshbench builds the freshbench command of the module that holds
// the working directory and returns the path of the executable, for tests
// that run it as a process of its own. The executable goes to a directory
// of the temporary directory named for the module's root: the test
// packages of one checkout share it, and go build, finding it up to date,
// does not link it again (the link is most of a build: seen 4 to 40 s on
// a busy machine), while two checkouts never run each other's.
func BuildFreshbench(ctx context.Context) (string, error) {
	gomod, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("find the module's root: go env GOMOD: %w", err)
	}
	root := filepath.Dir(strings.TrimSpace(string(gomod)))
	sum := sha256.Sum256([]byte(root))
	dir := filepath.Join(os.TempDir(), "freshbench-test-"+hex.EncodeToString(sum[:6]))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("build freshbench: %w", err)
	}
	bin := filepath.Join(dir, "freshbench")
	// Without the symbol table and DWARF (-s -w), which no test reads: a
	// link takes about half the time.
	build := exec.CommandContext(ctx, "go", "build", "-ldflags=-s -w", "-o", bin, "github.com/freshbench/freshbench/cmd/freshbench")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build freshbench: %w\n%s", err, out)
	}
	return bin, nil
}
