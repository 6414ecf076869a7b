// Package all registers every target freshbench ships.
package all

import (
	"github.com/freshbench/freshbench/target"
	"github.com/freshbench/freshbench/target/druid"
	"github.com/freshbench/freshbench/target/elastic"
	"github.com/freshbench/freshbench/target/pinot"
	"github.com/freshbench/freshbench/target/postgres"
	"github.com/freshbench/freshbench/target/questdb"
	"github.com/freshbench/freshbench/target/sim"
	"github.com/freshbench/freshbench/target/sqlite"
)

// Registry returns a registry with every shipped target.
func Registry() *target.Registry {
	r := target.NewRegistry()
	sqlite.Register(r)
	sim.Register(r)
	elastic.Register(r)
	postgres.Register(r)
	questdb.Register(r)
	druid.Register(r)
	pinot.Register(r)
	return r
}
