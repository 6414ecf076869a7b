package docgen

import (
	"testing"
)

// benchmarkNext measures one generator on one goroutine, reusing a buffer
// the way a batcher would.
func benchmarkNext(b *testing.B, size int) { benchmarkNextConfig(b, Config{DocSize: size, Seed: 1}) }

// benchmarkNextConfig measures the generator cfg makes: built-in shapes,
// corpora and templates alike; the bytes per op are its Size.
func benchmarkNextConfig(b *testing.B, cfg Config) {
	g, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	// Room for any document of the size, so that Next never grows it.
	buf := make([]byte, 0, max(2*g.Size(), 4096))
	b.SetBytes(int64(g.Size()))
	b.ReportAllocs()
	var n int
	cpu := cpuTime(b)
	for i := 0; b.Loop(); i++ {
		doc, _ := g.Next(buf[:0], 1_700_000_000_000_000+int64(i))
		n += len(doc.JSON)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "docs/s")
	// CPU time per event beside the wall time: with -cpu 1 the process
	// runs on one core, and on a machine shared with other work its CPU
	// time is what an event costs, its wall time that and the waiting.
	b.ReportMetric(float64(cpuTime(b)-cpu)/float64(b.N), "cpu-ns/op")
	if n == 0 {
		b.Fatal("no output")
	}
}

func BenchmarkNext1KB(b *testing.B)   { benchmarkNext(b, 1000) }
func BenchmarkNext10KB(b *testing.B)  { benchmarkNext(b, 10_000) }
func BenchmarkNext1250B(b *testing.B) { benchmarkNext(b, 1250) }
func BenchmarkNext400B(b *testing.B)  { benchmarkNext(b, 400) }
func BenchmarkNext1MB(b *testing.B)   { benchmarkNext(b, 1_000_000) }

// A nonce mixes every _id once more; it must stay as cheap as without.
func BenchmarkNextNonce1KB(b *testing.B) {
	benchmarkNextConfig(b, Config{DocSize: 1000, Seed: 1, Nonce: 7})
}

// The 20K-QPS study's documents: about 9 KB, nested.
func BenchmarkNextNested9KB(b *testing.B) {
	benchmarkNextConfig(b, Config{DocSize: 9000, Seed: 1, Shape: ShapeNested})
}

var sinkUUID []byte

func BenchmarkAppendUUID(b *testing.B) {
	buf := make([]byte, 0, uuidLen)
	for i := uint64(0); b.Loop(); i++ {
		sinkUUID = appendUUID(buf[:0], i*0x9e3779b97f4a7c15, ^i)
	}
}

// builtinShape1250 is the built-in shape at 1250 bytes (BenchmarkNext1250B)
// written as a template: its fields in its order, its counts of tags,
// emails, ratings and friends, its text lengths, its name, company and
// emails of one person (both emails the work one), as the hand-written
// shape was before the shipped rockbench template became it; the golden
// test pins its events.
const builtinShape1250 = `{
  "guid": "{{uuid}}", "isActive": "{{bool}}", "balance": "{{int 0 9999}}", "picture": "img{{digits 4}}.png",
  "age": "{{int 18 90}}", "eyeColor": "{{choice brown blue green hazel gray amber}}", "name": "{{person name}}",
  "gender": "{{choice female male}}", "company": "{{person company}}", "email": "{{person email}}",
  "emails": {"$array": "2", "of": "{{person email}}"}, "phone": "{{phone}}", "processBy": "worker-{{digits 3}}",
  "address": {"street": "{{street}}", "city": "{{city}}", "state": "{{state}}", "zipcode": "{{digits 5}}",
    "coordinates": {"lat": "{{float -90 90}}", "long": "{{float -180 180}}"}},
  "about": "{{text 4 8}}", "registered": "{{date 2000-01-01 2024-12-28}}",
  "tags": {"$array": "8..12", "of": "{{word}}"}, "ratings": {"$array": "5", "of": "{{int 1 5}}"},
  "friends": {
    "friend1": {"name": "{{name}}", "age": "{{int 18 80}}"}, "friend2": {"name": "{{name}}", "age": "{{int 18 80}}"},
    "friend3": {"name": "{{name}}", "age": "{{int 18 80}}"}, "friend4": {"name": "{{name}}", "age": "{{int 18 80}}"},
    "friend5": {"name": "{{name}}", "age": "{{int 18 80}}"}, "friend6": {"name": "{{name}}", "age": "{{int 18 80}}"},
    "friend7": {"name": "{{name}}", "age": "{{int 18 80}}"}, "friend8": {"name": "{{name}}", "age": "{{int 18 80}}"}
  },
  "favoriteFruit": "{{choice apple banana strawberry mango cherry kiwi peach pear plum grape orange lemon papaya fig apricot blueberry}}",
  "score": "{{float 0 100 2}}", "greeting": "{{fill 1250}}"
}`

func BenchmarkTemplateBuiltinShape1250(b *testing.B) {
	tm, err := ParseTemplate([]byte(builtinShape1250))
	if err != nil {
		b.Fatal(err)
	}
	benchmarkNextConfig(b, Config{Template: tm, Seed: 1})
}

// BenchmarkNewNested is the cost of a nested-shape generator: every
// generator of a run, and every check of a size, asks for the shipped
// template.
func BenchmarkNewNested(b *testing.B) {
	for b.Loop() {
		if _, err := New(Config{DocSize: 9000, Shape: ShapeNested, Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
}
