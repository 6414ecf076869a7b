package questdb

import (
	"testing"

	"github.com/freshbench/freshbench/query/querytest"
)

func TestQueries(t *testing.T) {
	s := openTest(t, nil)
	querytest.Check(t, s, "g"+randomHex(t, 4))
}
