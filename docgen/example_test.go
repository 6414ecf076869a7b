package docgen_test

import (
	"encoding/json"
	"fmt"

	"github.com/freshbench/freshbench/docgen"
)

func ExampleGenerator_Next() {
	// A fixed seed makes the stream reproducible; Seed 0 picks a random one.
	g, err := docgen.New(docgen.Config{DocSize: 1250, Seed: 1})
	if err != nil {
		panic(err)
	}
	var buf []byte // reused: each document overwrites the previous one
	for range 3 {
		doc, b := g.Next(buf[:0], 1_700_000_000_000_000)
		buf = b
		fmt.Println(doc.Seq, len(doc.JSON), json.Valid(doc.JSON), doc.Generator == g.ID())
	}
	// Output:
	// 0 1250 true true
	// 1 1250 true true
	// 2 1250 true true
}

func ExampleNew_outOfRange() {
	_, err := docgen.New(docgen.Config{DocSize: 10})
	fmt.Println(err)
	// Output:
	// docgen: document size 10 bytes is out of range: accepted 400..1000000 bytes
}
