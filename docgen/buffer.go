package docgen

import "github.com/freshbench/freshbench/target"

// Buffer is one batch's memory: its documents and the one byte slice they
// all point into, reused batch after batch.
type Buffer struct {
	Docs []target.Document
	JSON []byte
}

// Reset empties b, keeping its memory.
func (b *Buffer) Reset() { b.Docs, b.JSON = b.Docs[:0], b.JSON[:0] }

// Append adds g's next event, generated at eventTime. It returns false,
// adding nothing, when g's corpus has ended.
func (b *Buffer) Append(g *Generator, eventTime int64) bool {
	var d target.Document
	d, b.JSON = g.Next(b.JSON, eventTime)
	if d.JSON == nil {
		return false
	}
	b.Docs = append(b.Docs, d)
	return true
}

// AppendRevision adds revision r of the event k, generated at updateTime.
// It returns false, adding nothing, when g's corpus has ended.
func (b *Buffer) AppendRevision(g *Generator, k Key, r, updateTime int64) bool {
	var d target.Document
	d, b.JSON = g.Revise(b.JSON, k, r, updateTime)
	if d.JSON == nil {
		return false
	}
	b.Docs = append(b.Docs, d)
	return true
}

// Seal points every document into the final JSON slice: an append that
// grew it left the earlier documents in the previous array, still valid
// but not one block. Call it once the batch is complete.
func (b *Buffer) Seal() {
	off := 0
	for i := range b.Docs {
		n := len(b.Docs[i].JSON)
		b.Docs[i].JSON = b.JSON[off : off+n : off+n]
		off += n
	}
}
