package ingest

import (
	"context"
	"fmt"
	"syscall"

	"github.com/freshbench/freshbench/target"
)

// failing is a target whose every write is refused.
type failing struct{ target.Target }

func (failing) Write(context.Context, target.Batch) (target.WriteResult, error) {
	return target.WriteResult{}, fmt.Errorf("post bulk: %w", syscall.ECONNREFUSED)
}
