package docgen

// Shapes of document, each the shipped template of its name
// (templates/*.json). ShapeRockBench is the RockBench sample's: flat
// profile fields, an address, tags and friends, about 1 KB. ShapeNested is
// the 20K-QPS study's: 9 KB, deeply nested (a profile with contact
// details and preferences, 11 orders of line items with their attributes,
// 10 activity events with metadata, metrics), of mixed types, the notes'
// text filling it to the configured size; the fields the query workload
// filters on (processBy, emails, company, tags, age) stay at the top
// level in both.
const (
	ShapeRockBench = "rockbench"
	ShapeNested    = "nested"
)

// Shapes lists the shapes New takes.
var Shapes = []string{ShapeRockBench, ShapeNested}
