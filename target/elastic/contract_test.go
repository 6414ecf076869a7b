package elastic

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/target/targettest"
)

// The contract holds with either mapping: with dynamic mapping the first
// document of the suite's first batch maps _seq as a number.
func TestServerTargetContract(t *testing.T) {
	forEachServer(t, func(t *testing.T, s testServer) {
		for _, mapping := range []string{MappingFreshbench, MappingDynamic} {
			t.Run(mapping, func(t *testing.T) { contract(t, s, mapping) })
		}
	})
}

func contract(t *testing.T, s testServer, mapping string) {
	targettest.Run(t, targettest.Harness{
		// Refreshes are off, so that nothing is searchable until the
		// suite asks for it.
		Open: func(t *testing.T) target.Target {
			u := *serverURL(t, s)
			u.Path = fmt.Sprintf("/freshbench-contract-%d", time.Now().UnixNano())
			tgt, err := open(context.Background(), &u, target.Options{Settings: map[string]string{"refresh_interval": "-1", "mapping": mapping}}, os.Getenv)
			if err != nil {
				t.Fatal(err)
			}
			return tgt
		},
		// _seq is mapped as a number: a string fails that item alone.
		FailItem: func(b *target.Batch, i int) {
			d := &b.Docs[i]
			d.JSON = fmt.Appendf(nil, `{"_id":%q,"_event_time":%d,"generator_identifier":%q,"_seq":"not-a-number"}`, d.ID, d.EventTime, d.Generator)
		},
		Searchable: func(ctx context.Context, tgt target.Target) error {
			t := tgt.(*Target)
			res, err := t.do(ctx, http.MethodPost, "/"+t.ip+"/_refresh", "", nil)
			if err != nil {
				return err
			}
			if !is2xx(res.status) {
				return serverError(res.status, res.body)
			}
			return nil
		},
		Register: Register,
		BadURLs: []string{
			s.product + "://127.0.0.1:1/Upper",
			s.product + "://127.0.0.1:1/idx?refresh_interval=1s",
			s.product + "://127.0.0.1:99999/idx",
			s.product + "://127.0.0.1:1/",
		},
	})
}
