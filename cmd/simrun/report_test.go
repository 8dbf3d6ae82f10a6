package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// simrun report groups saved runs like a sweep and marks each group new or
// known against a committed corpus.
func TestReportGroupsSavedRuns(t *testing.T) {
	saved := t.TempDir()
	_, kvOut, _ := simrun(t, "sweep", "-scenario", "kv", "-seeds", "1-8", "-bug", "kv.phantom-ack", "-corpus", saved, "-max-saved", "3", "-json")
	_, coordOut, _ := simrun(t, "sweep", "-scenario", "coord", "-seeds", "1-20", "-bug", "coord.split-two-txns", "-corpus", saved, "-max-saved", "2", "-json")
	kvSaved, coordSaved := len(decodeOne[sweepSummary](t, kvOut).Saved), len(decodeOne[sweepSummary](t, coordOut).Saved)
	if kvSaved != 3 || coordSaved == 0 {
		t.Fatalf("saved %d kv and %d coord runs", kvSaved, coordSaved)
	}
	committed := filepath.Join("..", "..", "corpus")

	code, out, _ := simrun(t, "report", saved, "-known", committed, "-json")
	rep := decodeOne[reportJSON](t, out)
	if code != 0 || rep.Entries != kvSaved+coordSaved || rep.Failing != rep.Entries || len(rep.Groups) != 2 {
		t.Fatalf("exit %d: %+v", code, rep)
	}
	for _, g := range rep.Groups {
		if g.Status != "known" || !strings.HasPrefix(g.Replay, "simrun replay "+saved) || len(g.Files) != g.Runs {
			t.Fatalf("group %+v", g)
		}
		// the replay line of the fastest run reproduces it
		if code, _, _ := simrun(t, strings.Fields(g.Replay)[1:]...); code != 1 {
			t.Fatalf("%s: exit %d", g.Replay, code)
		}
	}
	code, text, _ := simrun(t, "report", saved, "-known", t.TempDir())
	if code != 1 || strings.Count(text, "[new]") != 2 || !strings.Contains(text, "KV.Linearizable  kv.phantom-ack  [new]  3 runs") {
		t.Fatalf("exit %d:\n%s", code, text)
	}
	// An entry that no longer reproduces is listed apart.
	files, _ := filepath.Glob(filepath.Join(saved, "kv", "*.json"))
	data, _ := os.ReadFile(files[0])
	os.WriteFile(files[0], []byte(strings.Replace(string(data), `"digest": "`, `"digest": "00`, 1)[:len(data)]), 0o644)
	_, text, _ = simrun(t, "report", saved, "-known", committed)
	if !strings.Contains(text, "DIFFERS  "+files[0]) {
		t.Fatalf("the tampered entry is not listed:\n%s", text)
	}
}

func TestBugSignatureAndShape(t *testing.T) {
	if bugSignature(nil) != "clean" || bugSignature([]string{"a.x", "b.y"}) != "a.x+b.y" {
		t.Fatal("bug signature")
	}
	a := shape(`key "k1": client3 put("k1" "c3-4") -> rev=17 [1.2s, 1.3s] cannot be linearized (57 of 95 operations)` + "\nmore")
	b := shape(`key "k0": client1 put("k0" "c1-9") -> rev=3 [22ms, 30ms] cannot be linearized (5 of 9 operations)`)
	if a != b || strings.Contains(a, "more") {
		t.Fatalf("shapes differ:\n%s\n%s", a, b)
	}
	if c := shape("shard a1000000/run:101/shard:be0ebc6e5011c9f6 fence 2"); strings.Contains(c, "be0ebc6e") {
		t.Fatalf("an id survived: %s", c)
	}
}
