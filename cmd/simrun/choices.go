package main

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// fuzzHeader starts a Go fuzz corpus entry (testdata/fuzz/FuzzX/...).
const fuzzHeader = "go test fuzz v1\n"

// decodeChoices returns the choice bytes of a -choices file: raw bytes, or a
// Go fuzz corpus entry holding one []byte (what `go test -fuzz` writes for
// a failing input), so a fuzzer's finding replays as it was written.
func decodeChoices(data []byte) ([]byte, error) {
	if !bytes.HasPrefix(data, []byte(fuzzHeader)) {
		return data, nil
	}
	body := strings.TrimSpace(string(data[len(fuzzHeader):]))
	lit, ok := strings.CutPrefix(body, "[]byte(")
	if !ok || !strings.HasSuffix(lit, ")") || strings.Contains(body, "\n") {
		return nil, fmt.Errorf("a fuzz corpus entry must hold exactly one []byte value")
	}
	s, err := strconv.Unquote(strings.TrimSuffix(lit, ")"))
	if err != nil {
		return nil, fmt.Errorf("fuzz corpus entry: %v", err)
	}
	return []byte(s), nil
}
