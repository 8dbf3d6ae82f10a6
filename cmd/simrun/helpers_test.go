package main

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"
)

// decodeOne requires out to be exactly one JSON value and decodes it.
func decodeOne[T any](t *testing.T, out string) T {
	t.Helper()
	var v T
	dec := json.NewDecoder(bytes.NewReader([]byte(out)))
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("stdout is not a JSON object: %v\n%s", err, out)
	}
	if _, err := dec.Token(); err != io.EOF {
		t.Fatalf("stdout holds more than one JSON object:\n%s", out)
	}
	return v
}

// simrunEnv runs simrun with the given environment variables (and no
// others of the batch-engine kind) and says whether stderr is a terminal.
func simrunEnv(t *testing.T, vars map[string]string, tty bool, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := runEnv(args, &env{stdout: &out, stderr: &errb, getenv: func(k string) string { return vars[k] },
		stderrTTY: func() bool { return tty }})
	return code, out.String(), errb.String()
}
