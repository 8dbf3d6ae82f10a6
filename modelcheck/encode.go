package modelcheck

import (
	"bytes"

	"shardsim/simclock"
)

// encode writes a path as the byte stream simclock.NewBytes replays (the
// same encoding as shrink.Encode: values big-endian in their bound's
// width, trailing zeros dropped).
func encode(draws []Draw) []byte {
	var out []byte
	for _, d := range draws {
		for i := simclock.DrawWidth(d.Bound) - 1; i >= 0; i-- {
			out = append(out, byte(d.Value>>(8*uint(i))))
		}
	}
	return bytes.TrimRight(out, "\x00")
}

// Stream returns a witness as a choice file's bytes (simrun run -choices).
func Stream(witness []Draw) []byte { return encode(witness) }
