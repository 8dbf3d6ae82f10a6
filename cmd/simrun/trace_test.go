package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type traceLine struct {
	Seq    uint64         `json:"seq"`
	Kind   string         `json:"kind"`
	Actor  string         `json:"actor"`
	Detail string         `json:"detail"`
	Fields map[string]any `json:"fields"`
}

func readTrace(t *testing.T, path string) ([]byte, []traceLine) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var lines []traceLine
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	sc.Buffer(nil, 1<<22)
	for sc.Scan() {
		var l traceLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("trace line %d: %v", len(lines)+1, err)
		}
		lines = append(lines, l)
	}
	return data, lines
}

// A trace file starts with a header record naming the run (scenario, seed
// or choices hash, options, bugs, version) and ends with one counting its
// records; every record in between has typed fields; the count matches
// the report's; nothing is HTML-escaped; and every client operation of
// every scenario shows its invocation and its completion.
func TestTraceFiles(t *testing.T) {
	for _, tc := range []struct {
		scenario, invoke, complete string
		args                       []string
	}{
		{"kv", "kv.send", "kv.return", []string{"-bug", "kv.phantom-ack", "-seed", "3"}},
		{"coord", "kv.send", "kv.return", []string{"-seed", "2", "-opt", "workers=3"}},
		{"migrate", "op.invoke", "op.return", []string{"-seed", "3"}},
		{"hotspot", "op.invoke", "op.return", []string{"-seed", "3"}},
		{"keymove", "kv.send", "kv.return", []string{"-seed", "3"}},
	} {
		t.Run(tc.scenario, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "run.jsonl")
			args := append([]string{"run", "-scenario", tc.scenario, "-trace", path, "-json"}, tc.args...)
			_, out, _ := simrun(t, args...)
			rep := decodeOne[runJSON](t, out)
			data, lines := readTrace(t, path)
			if strings.Contains(string(data), `\u003e`) || strings.Contains(string(data), `\u003c`) {
				t.Fatal("the trace file HTML-escapes")
			}
			head, end := lines[0], lines[len(lines)-1]
			if head.Kind != "trace.header" || head.Fields["scenario"] != tc.scenario || head.Fields["version"] == nil ||
				head.Fields["options"] == nil || head.Fields["bugs"] == nil || head.Fields["seed"] == nil {
				t.Fatalf("header %+v", head)
			}
			records := lines[1 : len(lines)-1]
			if end.Kind != "trace.end" || uint64(end.Fields["records"].(float64)) != rep.Records || uint64(len(records)) != rep.Records ||
				uint64(end.Fields["events"].(float64)) != rep.Events || end.Fields["digest"] != rep.Digest {
				t.Fatalf("end %+v: %d records in the file, report says %d records %d events", end, len(records), rep.Records, rep.Events)
			}
			open := map[string]bool{}
			var invoked int
			for i, r := range records {
				if r.Seq != uint64(i+1) || r.Fields == nil {
					t.Fatalf("record %d: seq %d fields %v", i+1, r.Seq, r.Fields)
				}
				id := ""
				switch r.Kind {
				case tc.invoke, "kv.refused": // a refused call is invoked, and fails fast
					id = idOf(r)
					open[id] = true
					invoked++
				case tc.complete:
					id = idOf(r)
					if !open[id] {
						t.Fatalf("%s of %s with no invocation", r.Kind, id)
					}
					delete(open, id)
				}
			}
			if invoked == 0 {
				t.Fatalf("no %s records", tc.invoke)
			}
			// Operations still open are those of clients the run ended or a
			// crash interrupted: few.
			if len(open) > invoked/10+2 {
				t.Fatalf("%d of %d operations never completed", len(open), invoked)
			}
		})
	}
}

// idOf is an operation's id: op=N, or a kv call's call=N (per server).
func idOf(r traceLine) string {
	if v, ok := r.Fields["op"]; ok {
		return "op" + jsonText(v)
	}
	return r.Actor + "/call" + jsonText(r.Fields["call"])
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// A run driven by choices names them by hash in the trace header.
func TestTraceHeaderOfAChoicesRun(t *testing.T) {
	dir := t.TempDir()
	choices := writeFile(t, dir, "c.bin", "\x01\x02\x03")
	path := filepath.Join(dir, "run.jsonl")
	if code, _, stderr := simrun(t, "run", "-scenario", "kv", "-choices", choices, "-trace", path); code != 0 {
		t.Fatalf("exit %d %s", code, stderr)
	}
	_, lines := readTrace(t, path)
	if lines[0].Fields["seed"] != nil || lines[0].Fields["choices_hash"] == nil {
		t.Fatalf("header %+v", lines[0])
	}
}

// Every -json command prints exactly one JSON object on stdout; the text
// goes to stderr.
func TestJSONIsOneObjectOnStdout(t *testing.T) {
	entry := filepath.Join("..", "..", "corpus", "kv", "kv.phantom-ack-KV.Linearizable-seed3.json")
	for _, args := range [][]string{
		{"run", "-scenario", "kv", "-seed", "3", "-bug", "kv.phantom-ack", "-json"},
		{"run", "-scenario", "kv", "-seed", "3", "-json", "-save", t.TempDir()},
		{"sweep", "-scenario", "kv", "-seeds", "1-4", "-bug", "kv.phantom-ack", "-json", "-corpus", t.TempDir()},
		{"replay", entry, "-json"},
		{"list", "-json"},
		{"version", "-json"},
		{"report", filepath.Join("..", "..", "corpus", "kv"), "-json"},
	} {
		_, out, stderr := simrun(t, args...)
		decodeOne[map[string]any](t, out)
		if args[0] != "list" && args[0] != "version" && stderr == "" {
			t.Errorf("%v: no text report on stderr", args)
		}
	}
	// Seed 7: its stuck operation has a key to name (seed 3's is a compaction,
	// which names none).
	_, out, _ := simrun(t, "run", "-scenario", "kv", "-seed", "7", "-bug", "kv.phantom-ack", "-opt", "keys=3", "-json")
	got := decodeOne[runJSON](t, out)
	if got.Replay == "" || got.Options["keys"] != "3" || got.Subject == nil || len(got.LastEvents) == 0 {
		t.Fatalf("run JSON lacks the replay, options, subject or events: %+v", got)
	}
}
