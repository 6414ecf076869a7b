package questdb

import (
	"errors"
	"fmt"
	"strings"
	"time"

	qdb "github.com/questdb/go-questdb-client/v4"

	"github.com/freshbench/freshbench/target/internal/pgwire"
)

// describe renders err as one short line: a rejection of ILP over HTTP
// by its status and the line that names the row, the rest as every
// target reached over PostgreSQL's wire protocol does.
func describe(err error, timeout time.Duration) string {
	var httpErr *qdb.HttpError
	if errors.As(err, &httpErr) {
		// QuestDB's message spans lines ("errors encountered on line(s):\n
		// error in line 2: …"); the line that names the row matters.
		return fmt.Sprintf("ILP over HTTP: %d %s", httpErr.HttpStatus(), strings.Join(strings.Fields(httpErr.Message), " "))
	}
	return pgwire.Describe(err, timeout)
}
