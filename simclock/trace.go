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
// self-delimiting tokens and an end tag) folded into a blake3 digest: same
// inputs, same digest. Nothing is formatted as text while a run goes on
// unless a JSON-lines writer is attached; the last records are kept in
// binary and rendered only when Tail is asked for.
//
// Records are encoded one after another into one buffer, and the digest
// takes them in batches of at least hashBatch bytes (see flush): a hash is
// a function of the bytes, not of how they are cut, so the digest is the
// one of hashing every record as it ends, which cost a hasher call per
// record (about 70 instructions of a record's few hundred). The buffer
// keeps the last records too: a ring of their offsets (tail) is all that
// Tail needs, each record's header holding its time, kind and actor. Once
// hashed, what lies before the oldest kept record is dropped (compact).
//
// Memory: the buffer holds fewer than 2K + hashBatch + R bytes, K being the
// bytes of the last tailCap records when the last batch was hashed and R
// the largest record (compact leaves at most K bytes of old records beside
// the K kept ones, and a batch is hashed once hashBatch bytes wait); its
// array, grown by append, is at most about twice that. In migrate seeds
// 1-30 (tail 40, records of 107 bytes on average) the buffer held at most
// 23 KB in an array of 27 KB, which the next world reuses (spareTraces).
type Trace struct {
	hash    *blake3.Hasher
	seq     uint64
	buf     []byte // records, from the oldest kept one; buf[:hashed] is hashed
	hashed  int
	tail    []int // ring of the offsets in buf of the last records
	tailPos int   // the ring slot of the next record (the oldest once full)
	kept    int   // how many ring slots hold a record
	out     *json.Encoder
	outErr  error
	rec     Detail // the record under construction
	open    bool   // rec has been started and not ended
	count   bool   // keep no record, only count them (NewCountingTrace)
	// openKind is the kind of a counting trace's open record, for the
	// panic of a record started before it ended.
	openKind string
	// reused: the trace's buffers go back to spareTraces when the loop
	// writing it closes (NewReusedTrace); released: they went back, and
	// the trace only counts what is still recorded and cannot be read.
	reused, released bool
}

// hashBatch is how many bytes of records the trace gathers before it
// hashes them: about 150 records of a migrate world. Batches of 4 KiB and
// of 64 KiB cost a few more instructions (callgrind, migrate), and the
// buffer, which also holds the tail, stays within the first-level cache.
const hashBatch = 16 << 10

// NewTrace returns a trace that keeps the last tailCap records in memory.
func NewTrace(tailCap int) *Trace {
	if tailCap < 1 {
		tailCap = 1
	}
	return newTrace(blake3.New(), nil, make([]int, tailCap))
}

// newTrace returns a trace on the given buffers whose record under
// construction belongs to it: Rec then sets only where its bytes go.
func newTrace(hash *blake3.Hasher, buf []byte, tail []int) *Trace {
	t := &Trace{hash: hash, buf: buf, tail: tail}
	t.rec.tr = t
	return t
}

// NewReusedTrace returns a trace like NewTrace(tailCap) built on the
// buffers (hasher, record buffer and tail ring) of a trace whose loop has
// closed, when there is one (see spareTraces). Its own buffers go back for
// the next world when the loop that writes it closes (Loop.Close): read
// its Digest and Tail before, as a world's Result does; after, they panic.
// Each world made afresh a hasher and the buffers of its records.
func NewReusedTrace(tailCap int) *Trace {
	if tailCap < 1 {
		tailCap = 1
	}
	t := reusedTrace(tailCap)
	if t == nil {
		t = NewTrace(tailCap)
	}
	t.reused = true
	return t
}

// traceBuffers are what a closed loop's trace leaves for the next one.
type traceBuffers struct {
	hash *blake3.Hasher
	buf  []byte
	tail []int
}

// spareTraces keeps the buffers of the traces of closed loops for the
// next worlds of the process, as spareCoroutines keeps coroutines. The
// buffers of a released trace are reset before they are used again (the
// hasher to its initial state, the record buffer emptied, no ring slot
// read before it is written), so which buffers a trace gets changes no
// record, digest or tail, even for worlds that run in parallel. At most
// maxSpareTraces are kept.
var spareTraces = spareList[traceBuffers]{max: maxSpareTraces}

// maxSpareTraces bounds the spares: one for each of a few parallel workers.
const maxSpareTraces = 8

// reusedTrace returns a fresh trace on spare buffers with tailCap slots,
// or nil if no spare has that many.
func reusedTrace(tailCap int) *Trace {
	b, ok := spareTraces.take(func(b traceBuffers) bool { return len(b.tail) == tailCap })
	if !ok {
		return nil
	}
	b.hash.Reset()
	return newTrace(b.hash, b.buf[:0], b.tail)
}

// release gives the buffers of a trace made by NewReusedTrace back to the
// spares (Loop.Close calls it), once. The trace then only counts records:
// Digest and Tail panic.
func (t *Trace) release() {
	if !t.reused || t.released || t.open {
		return // a record left open is still being written: keep its buffers
	}
	t.released, t.count, t.out = true, true, nil
	spareTraces.keep(traceBuffers{hash: t.hash, buf: t.buf, tail: t.tail})
	t.hash, t.buf, t.tail = nil, nil, nil
	t.hashed, t.tailPos, t.kept = 0, 0, 0
}

// mustBeReadable panics if the trace's buffers were released.
func (t *Trace) mustBeReadable() {
	if t.released {
		panic("simclock: a trace read after its loop closed (NewReusedTrace)")
	}
}

// NewCountingTrace returns a trace that only counts its records (Len): it
// encodes none of their fields, keeps no tail (Tail is empty) and no
// digest (Digest returns ""). It is for runs nobody reads the trace of,
// such as the millions a model checker makes, where encoding and hashing
// every record cost about a tenth of the instructions. JSON lines cannot
// be written from it.
func NewCountingTrace() *Trace { return &Trace{count: true} }

// WriteJSON makes the trace also write every record to w as one JSON object
// per line, its detail rendered as text. A counting trace refuses (panics).
func (t *Trace) WriteJSON(w io.Writer) {
	if t.count {
		panic("simclock: a counting trace writes no JSON lines")
	}
	t.out = json.NewEncoder(w)
	t.out.SetEscapeHTML(false) // "->" stays readable, not "-\u003e"
}

// Rec starts a record at virtual time at; fill its Detail and call End.
// Records do not nest: starting one before the last has ended panics.
func (t *Trace) Rec(at Time, kind, actor string) *Detail {
	if t.open {
		panic("simclock: trace record " + t.openRecordKind() + " was never ended")
	}
	t.open = true
	t.seq++
	if t.count {
		t.rec = Detail{tr: t, drop: true}
		t.openKind = kind
		return &t.rec
	}
	if len(t.buf)-t.hashed >= hashBatch {
		t.flush()
		t.compact()
	}
	if t.buf == nil {
		t.buf = make([]byte, 0, hashBatch+hashBatch/4)
	}
	t.keep(len(t.buf))
	b := binary.AppendUvarint(t.buf, t.seq)
	b = binary.AppendVarint(b, int64(at))
	b = binary.AppendUvarint(b, uint64(len(kind)))
	b = append(b, kind...)
	b = binary.AppendUvarint(b, uint64(len(actor)))
	b = append(b, actor...)
	t.rec.b, t.rec.start = b, len(b) // tr is t since newTrace; depth is 0 after End
	return &t.rec
}

// keep puts the offset of a new record in the tail ring, over the oldest
// record's once the ring is full.
func (t *Trace) keep(off int) {
	t.tail[t.tailPos] = off
	if t.tailPos++; t.tailPos == len(t.tail) {
		t.tailPos = 0
	}
	if t.kept < len(t.tail) {
		t.kept++
	}
}

// keptOffsets returns the offsets of the kept records, oldest first: the
// ring's slots from the oldest on, then those before it.
func (t *Trace) keptOffsets() (older, newer []int) {
	if t.kept < len(t.tail) {
		return t.tail[:t.kept], nil
	}
	return t.tail[t.tailPos:], t.tail[:t.tailPos]
}

// flush hashes the records not yet hashed. The hasher copies what it is
// given into its own 8 KiB buffer, except whole 8 KiB blocks it can hash
// in place, and compresses 8 KiB at a time whatever the calls were.
func (t *Trace) flush() {
	if t.hashed < len(t.buf) {
		t.hash.Write(t.buf[t.hashed:])
		t.hashed = len(t.buf)
	}
}

// compact drops the hashed bytes before the oldest kept record, once they
// are at least half the buffer (so that each byte is moved at most about
// once, however large the tail is). It runs only between records.
func (t *Trace) compact() {
	older, newer := t.keptOffsets()
	if len(older) == 0 {
		return
	}
	drop := min(older[0], t.hashed)
	if drop < len(t.buf)/2 {
		return
	}
	t.buf = t.buf[:copy(t.buf, t.buf[drop:])]
	t.hashed -= drop
	for _, offs := range [][]int{older, newer} {
		for i := range offs {
			offs[i] -= drop
		}
	}
}

// openRecordKind returns the kind of the record under construction.
func (t *Trace) openRecordKind() string {
	if t.count {
		return t.openKind
	}
	return parseRecord(t.rec.b[t.newest():]).kind
}

// newest returns the offset of the latest record.
func (t *Trace) newest() int {
	i := t.tailPos - 1
	if i < 0 {
		i = len(t.tail) - 1
	}
	return t.tail[i]
}

// Add appends a record at virtual time at whose detail is free text.
func (t *Trace) Add(at Time, kind, actor, detail string) {
	d := t.Rec(at, kind, actor)
	if detail != "" {
		d.Text(detail)
	}
	d.End()
}

// end finishes the record under construction (Detail.End). Its bytes are
// hashed with the next batch (see flush).
func (t *Trace) end(d *Detail) {
	if !t.open || d != &t.rec {
		panic("simclock: Detail.End on a record that is not open")
	}
	t.open = false
	if t.count {
		return
	}
	if t.out != nil && t.outErr == nil {
		t.writeJSON(d.b[t.newest():])
	}
	t.buf = append(d.b, tagEnd)
	d.b = nil
}

// writeJSON writes a record, without its end tag, as a JSON line.
func (t *Trace) writeJSON(enc []byte) {
	r := parseRecord(enc)
	t.outErr = t.out.Encode(recordLine{Record{Seq: r.seq, At: r.at, Kind: r.kind, Actor: r.actor, Detail: RenderDetail(r.detail)}, DetailJSON(r.detail)})
}

// parsedRecord is a record's encoding read back: its header and its
// detail's tokens.
type parsedRecord struct {
	seq         uint64
	at          Time
	kind, actor string
	detail      []byte
}

// parseRecord reads the header of a record's encoding (as Rec wrote it),
// the rest being the detail's tokens.
func parseRecord(enc []byte) parsedRecord {
	r := detailReader{b: enc}
	var p parsedRecord
	p.seq = r.uvarint()
	p.at = Time(r.varint())
	p.kind = string(r.bytes())
	p.actor = string(r.bytes())
	p.detail = r.b
	return p
}

// Len returns how many records the trace holds in all.
func (t *Trace) Len() uint64 { return t.seq }

// Digest returns the hex blake3 digest of every record so far ("" for a
// counting trace). It hashes the records not yet hashed first.
func (t *Trace) Digest() string {
	t.mustBeReadable()
	if t.count {
		return ""
	}
	t.flush()
	return hex.EncodeToString(t.hash.Sum(nil))
}

// Tail returns the last records kept in memory, oldest first, rendered.
func (t *Trace) Tail() []Record {
	t.mustBeReadable()
	older, newer := t.keptOffsets()
	offs := append(append(make([]int, 0, len(older)+len(newer)+1), older...), newer...)
	if t.open {
		offs = offs[:len(offs)-1] // the record under construction
	}
	offs = append(offs, len(t.buf)) // where the last finished record ends
	out := make([]Record, 0, len(offs)-1)
	for i := 0; i+1 < len(offs); i++ {
		r := parseRecord(t.buf[offs[i] : offs[i+1]-1])
		out = append(out, Record{Seq: r.seq, At: r.at, Kind: r.kind, Actor: r.actor, Detail: RenderDetail(r.detail)})
	}
	return out
}

// Err returns the first error from writing JSON lines, if any.
func (t *Trace) Err() error { return t.outErr }
