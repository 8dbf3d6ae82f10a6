package main

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"shardsim/corpus"
	"shardsim/property"
	"shardsim/scenarios"
	"shardsim/shrink"
)

// shrinkJSON is the last line of `simrun shrink -json`.
type shrinkJSON struct {
	Scenario string             `json:"scenario"`
	Property string             `json:"property"`
	Before   shrink.Size        `json:"before"`
	After    shrink.Size        `json:"after"`
	Replays  int                `json:"replays"`
	Accepted int                `json:"accepted"`
	Rounds   int                `json:"rounds"`
	Fixpoint bool               `json:"fixpoint"`
	Passes   []shrink.PassStats `json:"passes"`
	Out      string             `json:"out"`
}

const aboutShrink = `Minimises a failing run (a corpus entry, or a choices file with -scenario,
-bug and -opt) to the shortest choice stream that still violates the same
property (or -property), Hypothesis-style, and writes it as a corpus entry
that simrun replay reproduces. It never writes over an existing file unless
-force. With -json, stdout holds one JSON object and the text goes to stderr.`

// cmdShrink minimises a failing run and saves it as a corpus entry.
func cmdShrink(e *env, args []string) (int, error) {
	fs := newFlagSet("shrink")
	var wf worldFlags
	wf.register(fs)
	in := fs.String("in", "", "a corpus entry, or a choices file (raw or a Go fuzz entry: give -scenario, -bug, -opt)")
	out := fs.String("out", "", "write the shrunk run here as a corpus entry")
	keep := fs.String("property", "", "the property the failure must keep (default: the one the input violates)")
	maxReplays := fs.Int("max-replays", 20000, "stop after this many replays")
	force := fs.Bool("force", false, "overwrite -out if it exists")
	asJSON := fs.Bool("json", false, "print one JSON object describing the shrink on stdout, the text on stderr")
	if err := parseFlags(fs, args); err != nil {
		return 0, err
	}
	if *in == "" || *out == "" {
		return 0, usagef("shrink: -in and -out are required")
	}
	if *maxReplays < 1 {
		return 0, usagef("shrink: -max-replays must be at least 1")
	}
	if !*force {
		if _, err := os.Stat(*out); err == nil {
			return 0, usagef("shrink: %s exists (use -force to overwrite it)", *out)
		}
	}
	target, cfg, note, err := shrinkInput(*in, &wf)
	if err != nil {
		return 0, err
	}
	target.Property = property.Name(*keep)
	rep, err := shrink.Shrink(target, cfg, shrink.Options{MaxReplays: *maxReplays})
	if err != nil {
		return 0, usagef("shrink: %v", err)
	}
	entry := shrunkEntry(rep, note)
	if err := writeEntry(*out, entry, *force); err != nil {
		return 0, err
	}
	text := e.stdout
	if *asJSON {
		text = e.stderr
	}
	printShrink(text, rep, *out)
	if *asJSON {
		writeJSON(e.stdout, shrinkJSON{Scenario: target.Scenario, Property: string(rep.Target.Property),
			Before: rep.Before, After: rep.After, Replays: rep.Result.Replays, Accepted: rep.Result.Accepted,
			Rounds: rep.Result.Rounds, Fixpoint: rep.Result.Fixpoint, Passes: rep.Result.Passes, Out: *out})
	}
	return exitOK, nil
}

// shrinkInput reads -in: a corpus entry carries its own scenario, bugs and
// options (giving them as flags too is an error); a choices file needs them
// as flags.
func shrinkInput(path string, wf *worldFlags) (shrink.Target, scenarios.Config, string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return shrink.Target{}, scenarios.Config{}, "", usagef("shrink: cannot read %s: %v", path, err)
	}
	if bytes.HasPrefix(bytes.TrimSpace(data), []byte("{")) {
		e, err := corpus.Decode(data)
		if err != nil {
			return shrink.Target{}, scenarios.Config{}, "", usagef("shrink: %s: %v", path, err)
		}
		if wf.scenario != "" || len(wf.bugs) > 0 || len(wf.opts) > 0 {
			return shrink.Target{}, scenarios.Config{}, "", usagef("shrink: %s is a corpus entry: it names its own scenario, bugs and options", path)
		}
		cfg, err := e.Config()
		if err != nil {
			return shrink.Target{}, scenarios.Config{}, "", usagef("shrink: %s: %v", path, err)
		}
		src := "bytes"
		if e.Seed != nil {
			src = fmt.Sprintf("seed %d", *e.Seed)
		}
		return shrink.Target{Scenario: e.Scenario, Bugs: cfg.Bugs, Options: cfg.Options}, cfg,
			fmt.Sprintf("%s (%s)", filepath.Base(path), src), nil
	}
	name, cfg, err := wf.config("shrink")
	if err != nil {
		return shrink.Target{}, scenarios.Config{}, "", err
	}
	if cfg.Choices, err = decodeChoices(data); err != nil {
		return shrink.Target{}, scenarios.Config{}, "", usagef("shrink: %s: %v", path, err)
	}
	if cfg.Choices == nil {
		cfg.Choices = []byte{}
	}
	return shrink.Target{Scenario: name, Bugs: cfg.Bugs, Options: cfg.Options}, cfg, filepath.Base(path), nil
}

// shrunkEntry is the corpus entry of a shrunk run.
func shrunkEntry(rep shrink.Report, from string) corpus.Entry {
	e := corpus.Entry{
		Scenario: rep.Target.Scenario,
		Choices:  base64.StdEncoding.EncodeToString(rep.Result.Stream),
		Options:  rep.Target.Options,
		Bugs:     rep.Target.Bugs.Names(),
		Verdict:  string(rep.Final.Verdict),
		Property: rep.Final.Property,
		Digest:   rep.Final.Digest,
		Note: fmt.Sprintf("simrun shrink of %s: %d bytes to %d, %d draws to %d (%d not zero to %d), %d events to %d, %d faults to %d, in %d replays",
			from, rep.Before.Bytes, rep.After.Bytes, rep.Before.Draws, rep.After.Draws, rep.Before.Chosen, rep.After.Chosen,
			rep.Before.Events, rep.After.Events, rep.Before.Faults, rep.After.Faults, rep.Result.Replays),
	}
	if len(rep.Result.Stream) == 0 {
		// An empty stream is the quiet run; corpus entries need a source.
		e.Choices = base64.StdEncoding.EncodeToString([]byte{0})
	}
	return e
}

// writeEntry writes a corpus entry to path, never over an existing file
// unless force.
func writeEntry(path string, e corpus.Entry, force bool) error {
	data, err := corpus.Encode(e)
	if err != nil {
		return usagef("shrink: %v", err)
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if force {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return usagef("shrink: %v", err)
		}
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if errors.Is(err, os.ErrExist) {
		return usagef("shrink: %s exists (use -force to overwrite it)", path)
	}
	if err != nil {
		return usagef("shrink: %v", err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return usagef("shrink: %v", err)
	}
	return f.Close()
}

func printShrink(w io.Writer, rep shrink.Report, out string) {
	fmt.Fprintf(w, "shrink   %s  bugs %s  property %s\n", rep.Target.Scenario, rep.Target.Bugs, rep.Target.Property)
	for _, row := range []struct {
		name string
		s    shrink.Size
	}{{"before", rep.Before}, {"after", rep.After}} {
		fmt.Fprintf(w, "%-8s bytes %d  draws %d (%d not zero)  events %d  faults %d\n", row.name, row.s.Bytes, row.s.Draws, row.s.Chosen, row.s.Events, row.s.Faults)
	}
	end := "fixpoint"
	if !rep.Result.Fixpoint {
		end = "replay budget spent"
	}
	fmt.Fprintf(w, "chosen   %s\n", shrink.Describe(rep.Result.Draws, 40))
	fmt.Fprintf(w, "replays  %d  (kept %d, rounds %d, %s)\n", rep.Result.Replays, rep.Result.Accepted, rep.Result.Rounds, end)
	var passes []string
	for _, p := range rep.Result.Passes {
		passes = append(passes, fmt.Sprintf("%s %d/%d", p.Name, p.Kept, p.Replays))
	}
	fmt.Fprintf(w, "passes   %s (kept/replayed)\n", strings.Join(passes, ", "))
	fmt.Fprintf(w, "saved    %s\n", out)
	fmt.Fprintf(w, "replay   simrun replay %s\n", out)
}

// shrinkForSweep shrinks one failing seed of a sweep and returns the entry
// to save: the shrunk run, or the seeded one if shrinking failed (said on
// stderr, since the failure itself is still worth keeping).
func shrinkForSweep(name string, cfg scenarios.Config, seeded corpus.Entry, maxReplays int, stdout, stderr io.Writer) corpus.Entry {
	target := shrink.Target{Scenario: name, Bugs: cfg.Bugs, Options: cfg.Options, Property: seeded.Property}
	rep, err := shrink.Shrink(target, cfg, shrink.Options{MaxReplays: maxReplays})
	if err != nil {
		fmt.Fprintf(stderr, "simrun: could not shrink seed %d: %v\n", cfg.Seed, err)
		return seeded
	}
	fmt.Fprintf(stdout, "shrunk   seed %d: %d bytes to %d, %d events to %d, %d faults to %d (%d replays)\n",
		cfg.Seed, rep.Before.Bytes, rep.After.Bytes, rep.Before.Events, rep.After.Events,
		rep.Before.Faults, rep.After.Faults, rep.Result.Replays)
	return shrunkEntry(rep, fmt.Sprintf("%s seed %d", name, cfg.Seed))
}
