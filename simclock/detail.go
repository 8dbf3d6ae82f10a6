package simclock

import (
	"encoding/binary"
	"encoding/hex"
	"strconv"
	"strings"
	"time"
)

// Detail is the payload of a trace record: a sequence of typed fields in a
// compact, self-describing binary form. Building one costs a few appends (no
// formatting, no quoting), the binary form is what the trace digest hashes,
// and text is rendered from it only when a person or a file asks (a trace
// file, a violation report's tail, a golden trace excerpt). Because the text
// is a function of the bytes that were hashed, what a report shows is
// exactly what the digest covered.
//
// Text rendering: fields of one group are separated by a space; a named
// field renders as name=value, an unnamed one as its value; a flag as its
// name; a group as name(fields); integers in decimal (Hex ones in
// hexadecimal), durations as
// time.Duration prints them; byte strings quoted when every byte is
// printable ASCII and as 0x-prefixed hex otherwise; strings bare when they
// are one plain word, quoted otherwise; text verbatim.
//
// Methods return the detail so calls chain. A detail started by Loop.Rec or
// Context.Rec becomes a trace record when End is called.
type Detail struct {
	b     []byte // the tokens (after start); for a trace record, after its header
	start int    // where this detail's tokens begin in b
	tr    *Trace // the trace this record goes to, nil for a free-standing detail
	depth int    // open groups
	drop  bool   // a record of a counting trace: fields are not encoded
}

// Token tags of the binary form. Tag 0 ends a trace record, so every token
// is self-delimiting and a record needs no length prefix.
const (
	tagEnd   byte = iota // end of a record (trace encoding only)
	tagUint              // name, uvarint
	tagInt               // name, zigzag varint
	tagBytes             // name, uvarint length, bytes
	tagStr               // name, uvarint length, bytes
	tagDur               // name, zigzag varint nanoseconds
	tagFlag              // name
	tagOpen              // name
	tagClose             // (nothing)
	tagText              // uvarint length, bytes: verbatim text
	tagHex               // name, uvarint: an identifier shown in hexadecimal
)

// NewDetail returns an empty free-standing detail, for rendering a value's
// trace form as text (String) outside a trace.
func NewDetail() *Detail { return &Detail{} }

// appendName appends a field's tag and name to b. The field methods build
// each field in a local slice and store it into d.b once: d lives in the
// heap (a trace's record under construction), and every store of d.b is a
// pointer write, which costs a write barrier while the collector marks.
func appendName(b []byte, tag byte, name string) []byte {
	b = append(b, tag)
	b = binary.AppendUvarint(b, uint64(len(name)))
	return append(b, name...)
}

// appendString appends a uvarint length and the bytes of v.
func appendString[T ~string | ~[]byte](b []byte, v T) []byte {
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

// Uint adds an unsigned integer field.
func (d *Detail) Uint(name string, v uint64) *Detail {
	if d.drop {
		return d
	}
	d.b = binary.AppendUvarint(appendName(d.b, tagUint, name), v)
	return d
}

// Int adds a signed integer field.
func (d *Detail) Int(name string, v int64) *Detail {
	if d.drop {
		return d
	}
	d.b = binary.AppendVarint(appendName(d.b, tagInt, name), v)
	return d
}

// Hex adds an unsigned integer field shown in hexadecimal (identifiers that
// are printed that way elsewhere).
func (d *Detail) Hex(name string, v uint64) *Detail {
	if d.drop {
		return d
	}
	d.b = binary.AppendUvarint(appendName(d.b, tagHex, name), v)
	return d
}

// Bytes adds a byte-string field (a key, a value).
func (d *Detail) Bytes(name string, v []byte) *Detail {
	if d.drop {
		return d
	}
	d.b = appendString(appendName(d.b, tagBytes, name), v)
	return d
}

// Str adds a string field (an error message, an identifier).
func (d *Detail) Str(name, v string) *Detail {
	if d.drop {
		return d
	}
	d.b = appendString(appendName(d.b, tagStr, name), v)
	return d
}

// TextBytes adds free text whose bytes are b: the same token as
// Text(string(b)), without making the string. A log line built in a stack
// buffer with strconv's Append functions thus costs no allocation (fmt's
// Sprintf costs one or more on every record, even on a counting trace).
func (d *Detail) TextBytes(b []byte) *Detail {
	if d.drop {
		return d
	}
	d.b = appendString(append(d.b, tagText), b)
	return d
}

// StrBytes adds a string field whose value is v: the same token as
// Str(name, string(v)), without making the string (see TextBytes).
func (d *Detail) StrBytes(name string, v []byte) *Detail {
	if d.drop {
		return d
	}
	d.b = appendString(appendName(d.b, tagStr, name), v)
	return d
}

// Dur adds a duration field.
func (d *Detail) Dur(name string, v time.Duration) *Detail {
	if d.drop {
		return d
	}
	d.b = binary.AppendVarint(appendName(d.b, tagDur, name), int64(v))
	return d
}

// Flag adds a field that is just its name (a boolean that is true).
func (d *Detail) Flag(name string) *Detail {
	if d.drop {
		return d
	}
	d.b = appendName(d.b, tagFlag, name)
	return d
}

// FlagIf adds the flag when on is true.
func (d *Detail) FlagIf(name string, on bool) *Detail {
	if on {
		d.Flag(name)
	}
	return d
}

// Err adds err's message as a string field, or nothing when err is nil.
func (d *Detail) Err(name string, err error) *Detail {
	if err != nil && !d.drop {
		d.Str(name, err.Error())
	}
	return d
}

// Open starts a group of fields rendered as name(...); Close ends it.
func (d *Detail) Open(name string) *Detail {
	if !d.drop {
		d.b = appendName(d.b, tagOpen, name)
	}
	d.depth++
	return d
}

// Close ends the innermost open group.
func (d *Detail) Close() *Detail {
	if d.depth == 0 {
		panic("simclock: Detail.Close without Open")
	}
	if !d.drop {
		d.b = append(d.b, tagClose)
	}
	d.depth--
	return d
}

// Text adds free text, rendered verbatim.
func (d *Detail) Text(s string) *Detail {
	if d.drop {
		return d
	}
	d.b = appendString(append(d.b, tagText), s)
	return d
}

// Raw adds fields encoded before: b is a stretch of some detail's Binary()
// made of whole fields and balanced groups. A caller that records one
// value in two records encodes it once and copies its bytes into the
// second; the record is the same as if the fields had been added again.
func (d *Detail) Raw(b []byte) *Detail {
	if !d.drop {
		d.b = append(d.b, b...)
	}
	return d
}

// End makes the detail a record of the trace it was started on.
func (d *Detail) End() {
	if d.tr == nil {
		panic("simclock: Detail.End on a detail that belongs to no trace")
	}
	if d.depth != 0 {
		panic("simclock: Detail.End with an open group")
	}
	d.tr.end(d)
}

// Binary returns the detail's binary form (valid until the detail changes).
func (d *Detail) Binary() []byte { return d.b[d.start:] }

// String renders the detail as text.
func (d *Detail) String() string { return RenderDetail(d.Binary()) }

// RenderDetail renders a detail's binary form as text. Malformed input (it
// never comes from a Detail) renders with a marker rather than failing.
func RenderDetail(b []byte) string {
	var sb strings.Builder
	r := detailReader{b: b}
	r.render(&sb)
	return sb.String()
}

// detailReader walks a detail's tokens.
type detailReader struct {
	b   []byte
	bad bool
}

// skip consumes n bytes of a varint just read; n <= 0 (a bad varint)
// marks the input malformed.
func (r *detailReader) skip(n int) {
	if n <= 0 {
		r.bad, r.b = true, nil
		return
	}
	r.b = r.b[n:]
}

func (r *detailReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	r.skip(n)
	return v
}

func (r *detailReader) varint() int64 {
	v, n := binary.Varint(r.b)
	r.skip(n)
	return v
}

func (r *detailReader) bytes() []byte {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.bad, r.b = true, nil
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *detailReader) render(sb *strings.Builder) {
	first := true // no separator before the first field of a group
	for len(r.b) > 0 && !r.bad {
		tag := r.b[0]
		r.b = r.b[1:]
		if tag == tagClose {
			sb.WriteByte(')')
			first = false
			continue
		}
		if !first {
			sb.WriteByte(' ')
		}
		first = false
		if tag == tagText {
			sb.Write(r.bytes())
			continue
		}
		if tag == tagEnd || tag > tagHex {
			r.bad = true
			break
		}
		name := r.bytes()
		r.field(sb, tag, name)
		if tag == tagOpen {
			first = true
		}
	}
	if r.bad {
		sb.WriteString(" !malformed")
	}
}

// field renders one named token whose name has been read.
func (r *detailReader) field(sb *strings.Builder, tag byte, name []byte) {
	switch tag {
	case tagFlag:
		sb.Write(name)
		return
	case tagOpen:
		sb.Write(name)
		sb.WriteByte('(')
		return
	}
	if len(name) > 0 {
		sb.Write(name)
		sb.WriteByte('=')
	}
	var buf [24]byte
	switch tag {
	case tagUint:
		sb.Write(strconv.AppendUint(buf[:0], r.uvarint(), 10))
	case tagHex:
		sb.Write(strconv.AppendUint(buf[:0], r.uvarint(), 16))
	case tagInt:
		sb.Write(strconv.AppendInt(buf[:0], r.varint(), 10))
	case tagDur:
		sb.WriteString(time.Duration(r.varint()).String())
	case tagBytes:
		writeBytes(sb, r.bytes())
	case tagStr:
		writeStr(sb, r.bytes())
	}
}

// writeBytes renders a byte string: quoted when every byte is printable
// ASCII (no quote or backslash, which would need escaping), 0x-hex otherwise.
func writeBytes(sb *strings.Builder, v []byte) {
	for _, c := range v {
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			sb.WriteString("0x")
			sb.WriteString(hex.EncodeToString(v))
			return
		}
	}
	sb.WriteByte('"')
	sb.Write(v)
	sb.WriteByte('"')
}

// writeStr renders a string bare when it is one plain word, quoted
// (Go syntax) otherwise.
func writeStr(sb *strings.Builder, v []byte) {
	if len(v) > 0 && plainWord(v) {
		sb.Write(v)
		return
	}
	sb.WriteString(strconv.Quote(string(v)))
}

func plainWord(v []byte) bool {
	for _, c := range v {
		if c <= 0x20 || c > 0x7e {
			return false
		}
		switch c {
		case '"', '\\', '(', ')', '=', '[', ']':
			return false
		}
	}
	return true
}

// Rec starts a trace record of kind about actor at the current time; fill
// its Detail and call End.
func (l *Loop) Rec(kind, actor string) *Detail { return l.trace.Rec(l.now, kind, actor) }

// Rec starts a trace record of kind attributed to the actor; fill its
// Detail and call End.
func (c *Context) Rec(kind string) *Detail { return c.loop.Rec(kind, c.Name()) }
