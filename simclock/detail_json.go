package simclock

import (
	"encoding/hex"
	"encoding/json"
	"strconv"
	"time"
)

// DetailJSON renders a detail's binary form as one JSON object of its
// fields, for trace files that tools read: a named field becomes a key, a
// group a nested object, a flag true, integers numbers, hexadecimal
// identifiers and durations strings (as Detail's text shows them), byte
// strings text when printable ASCII and 0x-prefixed hex otherwise, free
// text the key "text", and unnamed values the key "_". A name used more
// than once in a group gathers its values in an array, in order. Keys keep
// the order the fields were written in.
func DetailJSON(b []byte) json.RawMessage {
	r := detailReader{b: b}
	obj := r.object()
	if r.bad {
		obj.add("malformed", json.RawMessage("true"))
	}
	return obj.marshal()
}

// jsonObject is an ordered JSON object under construction.
type jsonObject struct {
	keys   []string
	values [][]json.RawMessage
}

func (o *jsonObject) add(key string, v json.RawMessage) {
	for i, k := range o.keys {
		if k == key {
			o.values[i] = append(o.values[i], v)
			return
		}
	}
	o.keys = append(o.keys, key)
	o.values = append(o.values, []json.RawMessage{v})
}

func (o *jsonObject) marshal() json.RawMessage {
	out := []byte{'{'}
	for i, k := range o.keys {
		if i > 0 {
			out = append(out, ',')
		}
		out = strconv.AppendQuote(out, k)
		out = append(out, ':')
		vs := o.values[i]
		if len(vs) == 1 {
			out = append(out, vs[0]...)
			continue
		}
		out = append(out, '[')
		for j, v := range vs {
			if j > 0 {
				out = append(out, ',')
			}
			out = append(out, v...)
		}
		out = append(out, ']')
	}
	return append(out, '}')
}

// object reads tokens up to the end of the input or of the current group.
func (r *detailReader) object() *jsonObject {
	obj := &jsonObject{}
	for len(r.b) > 0 && !r.bad {
		tag := r.b[0]
		r.b = r.b[1:]
		switch {
		case tag == tagClose:
			return obj
		case tag == tagText:
			obj.add("text", jsonString(string(r.bytes())))
			continue
		case tag == tagEnd || tag > tagHex:
			r.bad = true
			return obj
		}
		name := string(r.bytes())
		if name == "" {
			name = "_"
		}
		obj.add(name, r.value(tag))
	}
	return obj
}

// value reads one named token's value (its name already read).
func (r *detailReader) value(tag byte) json.RawMessage {
	switch tag {
	case tagFlag:
		return json.RawMessage("true")
	case tagOpen:
		return r.object().marshal()
	case tagUint:
		return strconv.AppendUint(nil, r.uvarint(), 10)
	case tagInt:
		return strconv.AppendInt(nil, r.varint(), 10)
	case tagHex:
		return jsonString(strconv.FormatUint(r.uvarint(), 16))
	case tagDur:
		return jsonString(time.Duration(r.varint()).String())
	case tagStr:
		return jsonString(string(r.bytes()))
	case tagBytes:
		v := r.bytes()
		for _, c := range v {
			if c < 0x20 || c > 0x7e {
				return jsonString("0x" + hex.EncodeToString(v))
			}
		}
		return jsonString(string(v))
	}
	r.bad = true
	return json.RawMessage("null")
}

// jsonString quotes s as a JSON string without HTML escaping.
func jsonString(s string) json.RawMessage {
	b, _ := json.Marshal(s) // escapes <, >, & as \u003c...; undo that for readability
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] == '\\' && i+5 < len(b) && b[i+1] == 'u' && b[i+2] == '0' && b[i+3] == '0' {
			switch string(b[i+4 : i+6]) {
			case "3c":
				out = append(out, '<')
				i += 5
				continue
			case "3e":
				out = append(out, '>')
				i += 5
				continue
			case "26":
				out = append(out, '&')
				i += 5
				continue
			}
		}
		out = append(out, b[i])
	}
	return out
}
