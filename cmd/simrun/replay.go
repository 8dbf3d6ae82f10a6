package main

import (
	"fmt"
	"os"
	"time"

	"shardsim/corpus"
	"shardsim/property"
)

const aboutReplay = `Runs a saved corpus entry (its scenario, seed or choice bytes, options and
bugs) and says whether it reproduced: the same verdict, property and digest as
recorded. When it did not, it shows where the trace first moved, from the
entry's golden excerpt (corpus/testdata/...) when there is one.

Exit status: the run's own (0, 1 or 3) when it reproduced; 4 when it differs
from its record, whatever its verdict; 2 for an unreadable or corrupt entry.
With -json, stdout holds one JSON object: the run's report plus "reproduced"
(true or false), "recorded" (verdict, property, digest) and "trace_diff".`

// replayJSON is `simrun replay -json`'s one object.
type replayJSON struct {
	runJSON
	Entry      string       `json:"entry"`
	Reproduced bool         `json:"reproduced"`
	Recorded   recordedJSON `json:"recorded"`
	TraceDiff  string       `json:"trace_diff,omitempty"`
	Note       string       `json:"note,omitempty"`
}

type recordedJSON struct {
	Verdict  string        `json:"verdict"`
	Property property.Name `json:"property,omitempty"`
	Digest   string        `json:"digest"`
}

// cmdReplay runs a saved corpus entry and says whether it reproduced.
func cmdReplay(e *env, args []string) (int, error) {
	fs := newFlagSet("replay")
	asJSON := fs.Bool("json", false, "print one JSON object on stdout and the text report on stderr")
	var timeout time.Duration
	registerCheckTimeout(fs, &timeout)
	if err := parseInterleaved(fs, args); err != nil {
		return 0, err
	}
	if fs.NArg() != 1 {
		return 0, usagef("replay: want exactly one corpus file (simrun replay FILE.json)")
	}
	if timeout <= 0 {
		return 0, usagef("replay: -check-timeout must be positive")
	}
	path := fs.Arg(0)
	entry, err := corpus.Load(path)
	if err != nil {
		return 0, usageError{err.Error()}
	}
	cfg, err := entry.Config()
	if err != nil {
		return 0, usageError{err.Error()}
	}
	cfg.CheckTimeout = timeout
	res, excerpt, err := corpus.ReplayConfig(entry, cfg)
	if err != nil {
		return 0, usageError{err.Error()}
	}
	spec := specOf(entry.Scenario, cfg, "")
	rep := newReport(res, cfg, spec)
	rep.replay = "simrun replay " + path
	if res.FromBytes {
		rep.source = fmt.Sprintf("entry %s (%d choice bytes, blake3 %s)", path, len(cfg.Choices), res.ChoicesHash[:16])
	} else {
		rep.source = fmt.Sprintf("entry %s (seed %d)", path, res.Seed)
	}
	text := e.stdout
	if *asJSON {
		text = e.stderr
	}
	rep.print(text)
	same := string(res.Verdict) == entry.Verdict && res.Property == entry.Property && res.Digest == entry.Digest
	want := entry.Verdict
	if entry.Property != "" {
		want += " " + string(entry.Property)
	}
	out := replayJSON{runJSON: rep.json(), Entry: path, Reproduced: same, Note: entry.Note,
		Recorded: recordedJSON{Verdict: entry.Verdict, Property: entry.Property, Digest: entry.Digest}}
	if same {
		fmt.Fprintf(text, "record   reproduced: %s, digest %s\n", want, entry.Digest)
	} else {
		fmt.Fprintf(text, "record   DIFFERS: recorded %s, digest %s (exit %d)\n", want, entry.Digest, exitDiffers)
		// The golden excerpt, when there is one, says where the run moved.
		if golden, err := os.ReadFile(corpus.ExcerptPath(path)); err == nil {
			if out.TraceDiff = corpus.ExcerptDiff(string(golden), excerpt); out.TraceDiff != "" {
				fmt.Fprintf(text, "trace    %s\n", out.TraceDiff)
			}
		}
	}
	if *asJSON {
		writeJSON(e.stdout, out)
	}
	if !same {
		return exitDiffers, nil
	}
	return exitCode(res.Verdict), nil
}
