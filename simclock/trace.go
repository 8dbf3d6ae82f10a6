package simclock

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"io"

	"github.com/zeebo/blake3"
)

// Record is one line of a run's trace, rendered as text.
type Record struct {
	Seq    uint64 `json:"seq"`    // position in the trace, from 1
	At     Time   `json:"t"`      // virtual time in nanoseconds
	Kind   string `json:"kind"`   // what happened, e.g. "kv.apply", "fault.crash"
	Actor  string `json:"actor"`  // who it happened to, or "" for the world
	Detail string `json:"detail"` // the record's Detail as text
}

// recordLine is a record as a JSON-lines trace writes it: the record and
// its Detail once more as one JSON object of typed fields (DetailJSON), for
// tools. Readers that want only the text decode the line into a Record.
type recordLine struct {
	Record
	Fields json.RawMessage `json:"fields"`
}

// Trace collects the records of a run. Every record is a compact canonical
// binary encoding (sequence number, time, kind, actor, then the Detail's
// self-delimiting tokens and an end tag) folded into a blake3 digest as it
// is added: same inputs, same digest. Nothing is formatted as text while a
// run goes on unless a JSON-lines writer is attached; the last records are
// kept in binary in a bounded ring and rendered only when Tail is asked for.
type Trace struct {
	hash    *blake3.Hasher
	seq     uint64
	scratch []byte // the record under construction, encoded
	ring    []tailRecord
	ringPos int
	out     *json.Encoder
	outErr  error
	rec     Detail // the record under construction
	open    bool   // rec has been started and not ended
}

// tailRecord is a record kept for Tail, its detail still in binary.
type tailRecord struct {
	seq    uint64
	at     Time
	kind   string
	actor  string
	detail []byte
}

// NewTrace returns a trace that keeps the last tailCap records in memory.
func NewTrace(tailCap int) *Trace {
	if tailCap < 1 {
		tailCap = 1
	}
	return &Trace{hash: blake3.New(), ring: make([]tailRecord, 0, tailCap), scratch: make([]byte, 0, 1024)}
}

// WriteJSON makes the trace also write every record to w as one JSON object
// per line, its detail rendered as text.
func (t *Trace) WriteJSON(w io.Writer) {
	t.out = json.NewEncoder(w)
	t.out.SetEscapeHTML(false) // "->" stays readable, not "-\u003e"
}

// Rec starts a record at virtual time at; fill its Detail and call End.
// Records do not nest: starting one before the last has ended panics.
func (t *Trace) Rec(at Time, kind, actor string) *Detail {
	if t.open {
		panic("simclock: trace record " + t.rec.kind + " was never ended")
	}
	t.open = true
	t.seq++
	b := binary.AppendUvarint(t.scratch[:0], t.seq)
	b = binary.AppendVarint(b, int64(at))
	b = binary.AppendUvarint(b, uint64(len(kind)))
	b = append(b, kind...)
	b = binary.AppendUvarint(b, uint64(len(actor)))
	b = append(b, actor...)
	t.rec = Detail{b: b, start: len(b), tr: t, at: at, kind: kind, actor: actor}
	return &t.rec
}

// Add appends a record at virtual time at whose detail is free text.
func (t *Trace) Add(at Time, kind, actor, detail string) {
	d := t.Rec(at, kind, actor)
	if detail != "" {
		d.Text(detail)
	}
	d.End()
}

// end finishes the record under construction (Detail.End).
func (t *Trace) end(d *Detail) {
	if !t.open || d != &t.rec {
		panic("simclock: Detail.End on a record that is not open")
	}
	t.open = false
	body := d.b[d.start:]
	t.keep(tailRecord{seq: t.seq, at: d.at, kind: d.kind, actor: d.actor}, body)
	if t.out != nil && t.outErr == nil {
		t.writeJSON(d, body)
	}
	t.scratch = append(d.b, tagEnd)
	d.b = nil
	t.hash.Write(t.scratch) // the hasher buffers, and compresses 8 chunks at once
}

// keep puts the record into the tail ring, reusing the slot's buffer.
func (t *Trace) keep(r tailRecord, detail []byte) {
	var slot *tailRecord
	if len(t.ring) < cap(t.ring) {
		t.ring = append(t.ring, tailRecord{})
		slot = &t.ring[len(t.ring)-1]
	} else {
		slot = &t.ring[t.ringPos]
		t.ringPos = (t.ringPos + 1) % len(t.ring)
	}
	r.detail = append(slot.detail[:0], detail...)
	*slot = r
}

func (t *Trace) writeJSON(d *Detail, body []byte) {
	t.outErr = t.out.Encode(recordLine{Record{Seq: t.seq, At: d.at, Kind: d.kind, Actor: d.actor, Detail: RenderDetail(body)}, DetailJSON(body)})
}

// Len returns how many records the trace holds in all.
func (t *Trace) Len() uint64 { return t.seq }

// Digest returns the hex blake3 digest of every record so far.
func (t *Trace) Digest() string { return hex.EncodeToString(t.hash.Sum(nil)) }

// Tail returns the last records kept in memory, oldest first, rendered.
func (t *Trace) Tail() []Record {
	out := make([]Record, 0, len(t.ring))
	for _, part := range [][]tailRecord{t.ring[t.ringPos:], t.ring[:t.ringPos]} {
		for _, r := range part {
			out = append(out, Record{Seq: r.seq, At: r.at, Kind: r.kind, Actor: r.actor, Detail: RenderDetail(r.detail)})
		}
	}
	return out
}

// Err returns the first error from writing JSON lines, if any.
func (t *Trace) Err() error { return t.outErr }
