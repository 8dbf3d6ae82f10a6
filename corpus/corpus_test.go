package corpus

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"shardsim/scenarios"
)

// TestReplayCorpus is H.Replayable: every saved run replays to its recorded
// verdict, property and digest, and to its golden trace excerpt
// (testdata/<scenario>/<name>.trace), whose first difference is shown when
// it does not. With SHARDSIM_UPDATE_CORPUS=1 (make corpus) it re-records the
// digests and excerpts instead, and says per entry what moved — only for
// entries whose verdict and property are unchanged: a changed verdict fails
// unless SHARDSIM_UPDATE_CORPUS=verdicts. Do that only after a deliberate
// change of behaviour, and review the diff.
func TestReplayCorpus(t *testing.T) {
	files, err := Files(".")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("the corpus is empty")
	}
	mode := os.Getenv("SHARDSIM_UPDATE_CORPUS")
	for _, path := range files {
		if strings.HasPrefix(path, "testdata") {
			continue
		}
		t.Run(path, func(t *testing.T) {
			e, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			res, excerpt, err := Replay(e)
			if err != nil {
				t.Fatal(err)
			}
			golden := ExcerptPath(path)
			old, _ := os.ReadFile(golden)
			sameVerdict := string(res.Verdict) == e.Verdict && res.Property == e.Property
			if mode == "1" || mode == "verdicts" {
				if !sameVerdict && mode != "verdicts" {
					t.Fatalf("replayed to %s %s, recorded %s %s: not re-recorded (SHARDSIM_UPDATE_CORPUS=verdicts accepts it)", res.Verdict, res.Property, e.Verdict, e.Property)
				}
				rerecord(t, path, e, res, excerpt, string(old))
				return
			}
			if !sameVerdict {
				t.Fatalf("replayed to %s %s, recorded %s %s", res.Verdict, res.Property, e.Verdict, e.Property)
			}
			if old == nil {
				t.Errorf("no trace excerpt %s (make corpus records it)", golden)
			} else if diff := ExcerptDiff(string(old), excerpt); diff != "" {
				t.Errorf("trace excerpt %s differs (make corpus re-records it): %s", golden, diff)
			}
			if res.Digest != e.Digest {
				t.Fatalf("replayed digest %s, recorded %s", res.Digest, e.Digest)
			}
		})
	}
}

// rerecord writes the entry's new verdict, digest and excerpt, and logs
// what changed.
func rerecord(t *testing.T, path string, e Entry, res scenarios.Result, excerpt, old string) {
	t.Helper()
	before := e
	e.Verdict, e.Property, e.Digest = string(res.Verdict), res.Property, res.Digest
	data, err := Encode(e)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	golden := ExcerptPath(path)
	if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(golden, []byte(excerpt), 0o644); err != nil {
		t.Fatal(err)
	}
	switch diff := ExcerptDiff(old, excerpt); {
	case before.Digest == e.Digest && diff == "":
		t.Logf("%s: unchanged", path)
	case old == "":
		t.Logf("%s: re-recorded: digest %.12s -> %.12s; new excerpt %s", path, before.Digest, e.Digest, golden)
	default:
		t.Logf("%s: re-recorded: verdict %s %s, digest %.12s -> %.12s; %s", path, e.Verdict, e.Property, before.Digest, e.Digest, diff)
	}
}

func TestDecodeRejectsBadEntries(t *testing.T) {
	good := `{"scenario":"kv","seed":3,"verdict":"ok","digest":"` + strings.Repeat("ab", 32) + `"}`
	if _, err := Decode([]byte(good)); err != nil {
		t.Fatalf("good entry rejected: %v", err)
	}
	bad := map[string]string{
		"not json":              `{"scenario":`,
		"unknown field":         strings.Replace(good, `"seed"`, `"sneed"`, 1),
		"trailing data":         good + `{}`,
		"unknown scenario":      strings.Replace(good, `"kv"`, `"nope"`, 1),
		"no source":             strings.Replace(good, `"seed":3,`, ``, 1),
		"two sources":           strings.Replace(good, `"seed":3,`, `"seed":3,"choices":"AA==",`, 1),
		"bad base64":            strings.Replace(good, `"seed":3,`, `"choices":"!!",`, 1),
		"unknown bug":           strings.Replace(good, `"seed":3,`, `"seed":3,"bugs":["kv.nope"],`, 1),
		"bad verdict":           strings.Replace(good, `"ok"`, `"fine"`, 1),
		"violation no property": strings.Replace(good, `"ok"`, `"violation"`, 1),
		"ok with property":      strings.Replace(good, `"verdict":"ok"`, `"verdict":"ok","property":"KV.Linearizable"`, 1),
		"short digest":          strings.Replace(good, strings.Repeat("ab", 32), "abcd", 1),
		"hex garbage":           strings.Replace(good, strings.Repeat("ab", 32), strings.Repeat("zz", 32), 1),
	}
	for name, data := range bad {
		if _, err := Decode([]byte(data)); err == nil {
			t.Errorf("%s: accepted %s", name, data)
		}
	}
}

func TestSaveThenLoadRoundTrips(t *testing.T) {
	cfg := scenarios.Config{Choices: []byte{1, 2, 3}}
	res, err := scenarios.Run("kv", cfg)
	if err != nil {
		t.Fatal(err)
	}
	path, err := Save(t.TempDir(), FromResult(cfg, res))
	if err != nil {
		t.Fatal(err)
	}
	e, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if e.Choices != base64.StdEncoding.EncodeToString(cfg.Choices) || e.Digest != res.Digest {
		t.Fatalf("round trip lost data: %+v", e)
	}
}

// FuzzDecode: the corpus decoder never panics, and whatever it accepts
// re-encodes to an entry it accepts again.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"scenario":"kv","seed":3,"verdict":"ok","digest":"` + strings.Repeat("ab", 32) + `"}`))
	f.Add([]byte(`{"scenario":"kv","choices":"AAEC","bugs":["kv.phantom-ack"],"verdict":"violation","property":"KV.Linearizable","digest":"` + strings.Repeat("0f", 32) + `"}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := Decode(data)
		if err != nil {
			return
		}
		again, err := Encode(e)
		if err != nil {
			t.Fatalf("accepted entry does not encode: %v", err)
		}
		if _, err := Decode(again); err != nil {
			t.Fatalf("re-encoded entry rejected: %v", err)
		}
	})
}
