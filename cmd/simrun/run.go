package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"shardsim/corpus"
	"shardsim/property"
	"shardsim/scenarios"
)

func cmdRun(args []string, stdout io.Writer) (int, error) {
	fs := newFlagSet("run")
	var wf worldFlags
	wf.register(fs)
	seed := fs.Uint64("seed", 1, "seed of the choice stream")
	choicesFile := fs.String("choices", "", "drive the run from this file's bytes (raw, or a Go fuzz corpus entry) instead of a seed")
	tracePath := fs.String("trace", "", "write every trace record to this file as JSON lines")
	asJSON := fs.Bool("json", false, "end with one JSON object describing the run")
	saveDir := fs.String("save", "", "save the run (whatever its verdict) as a corpus entry under this folder")
	recordPath := fs.String("record", "", "write the run's choice stream to this file (replays with -choices)")
	recordFuzz := fs.String("record-fuzz", "", "write the run's choice stream to this file as a Go fuzz corpus entry")
	vizPath := fs.String("viz", "", "write a self-contained HTML report of the run (timeline, violation, porcupine) to this file")
	if err := parseFlags(fs, args); err != nil {
		return 0, err
	}
	name, cfg, err := wf.config("run")
	if err != nil {
		return 0, err
	}
	cfg.Seed = *seed
	seedGiven := false
	fs.Visit(func(f *flag.Flag) { seedGiven = seedGiven || f.Name == "seed" })
	if *choicesFile != "" {
		if seedGiven {
			return 0, usagef("run: -seed and -choices are exclusive")
		}
		data, err := os.ReadFile(*choicesFile)
		if err != nil {
			return 0, usagef("run: cannot read choices: %v", err)
		}
		if data, err = decodeChoices(data); err != nil {
			return 0, usagef("run: %s: %v", *choicesFile, err)
		}
		cfg.Choices = data
	}
	if *tracePath != "" {
		f, err := os.Create(*tracePath)
		if err != nil {
			return 0, usagef("run: cannot create trace file: %v", err)
		}
		defer f.Close()
		cfg.TraceOut = f
	}
	cfg.Record = *recordPath != "" || *recordFuzz != ""
	var report vizRecorder
	if *vizPath != "" {
		report.attach(&cfg)
	}
	res, err := scenarios.Run(name, cfg)
	if err != nil {
		return 0, usageError{err.Error()}
	}
	if *vizPath != "" {
		if err := report.write(*vizPath, res, cfg, *choicesFile); err != nil {
			return 0, err
		}
	}
	if err := writeRecording(res.Recording, *recordPath, *recordFuzz); err != nil {
		return 0, err
	}
	if *saveDir != "" && res.Verdict != property.VerdictUnknown {
		path, err := corpus.Save(*saveDir, corpus.FromResult(cfg, res))
		if err != nil {
			return 0, usagef("run: cannot save: %v", err)
		}
		fmt.Fprintf(stdout, "saved    %s\n", path)
	}
	printRun(stdout, res, cfg, *choicesFile, *asJSON)
	return exitCode(res.Verdict), nil
}

func exitCode(v property.Verdict) int {
	switch v {
	case property.VerdictOK:
		return exitOK
	case property.VerdictViolation:
		return exitViolation
	}
	return exitUnknown
}

// replayCommand is the exact command that reproduces a run.
func replayCommand(res scenarios.Result, cfg scenarios.Config, choicesFile string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "simrun run -scenario %s", res.Scenario)
	if cfg.Choices != nil {
		fmt.Fprintf(&b, " -choices %s", choicesFile)
	} else {
		fmt.Fprintf(&b, " -seed %d", cfg.Seed)
	}
	b.WriteString(fmtBugFlags(cfg.Bugs))
	keys := make([]string, 0, len(cfg.Options))
	for k := range cfg.Options {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, " -opt %s=%s", k, cfg.Options[k])
	}
	return b.String()
}

// runJSON is the last line of `simrun run -json`.
type runJSON struct {
	Scenario  string          `json:"scenario"`
	Seed      uint64          `json:"seed"`
	Verdict   string          `json:"verdict"`
	Property  property.Name   `json:"property"`
	Events    uint64          `json:"events"`
	VirtualNs int64           `json:"virtual_ns"`
	Digest    string          `json:"digest"`
	Swarm     json.RawMessage `json:"swarm"`
	Bugs      []string        `json:"bugs"`
	Stats     json.RawMessage `json:"stats"`
	Detail    string          `json:"detail,omitempty"`
}

func printRun(w io.Writer, res scenarios.Result, cfg scenarios.Config, choicesFile string, asJSON bool) {
	src := fmt.Sprintf("seed %d", res.Seed)
	if res.FromBytes {
		src = fmt.Sprintf("choices %s (%d bytes)", choicesFile, len(cfg.Choices))
	}
	printReport(w, res, src, replayCommand(res, cfg, choicesFile))
	if asJSON {
		printRunJSON(w, res)
	}
}

// printReport prints a run's summary and, unless it passed, what went
// wrong: the property, the last relevant events and how to replay it.
func printReport(w io.Writer, res scenarios.Result, src, replay string) {
	fmt.Fprintf(w, "scenario %s  %s  bugs %s\n", res.Scenario, src, res.Bugs)
	fmt.Fprintf(w, "swarm    %s\n", res.Swarm)
	fmt.Fprintf(w, "events   %d  virtual %s  draws %d\n", res.Events, fmtNs(res.VirtualNs), res.Draws)
	if len(res.Stats) > 0 {
		fmt.Fprintf(w, "stats    %s\n", fmtStats(res.Stats))
	}
	fmt.Fprintf(w, "digest   %s\n", res.Digest)
	fmt.Fprintf(w, "verdict  %s", res.Verdict)
	if res.Property != "" {
		fmt.Fprintf(w, "  %s", res.Property)
	}
	fmt.Fprintln(w)
	if res.Verdict != property.VerdictOK {
		fmt.Fprintf(w, "detail   %s\n", res.Detail)
		fmt.Fprintln(w, "last events:")
		for _, r := range res.Tail {
			fmt.Fprintf(w, "  %12s  %-18s %-10s %s\n", fmtNs(int64(r.At)), r.Kind, r.Actor, r.Detail)
		}
		fmt.Fprintf(w, "replay   %s\n", replay)
	}
}

// printRunJSON prints the run's one-line JSON summary (the contract's last line).
func printRunJSON(w io.Writer, res scenarios.Result) {
	swarm, _ := json.Marshal(res.Swarm)
	// Encoder writes the object and a newline; without HTML escaping a
	// detail's "->" stays readable instead of becoming "-\u003e".
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(runJSON{
		Scenario: res.Scenario, Seed: res.Seed, Verdict: string(res.Verdict), Property: res.Property,
		Events: res.Events, VirtualNs: res.VirtualNs, Digest: res.Digest, Swarm: swarm,
		Bugs: append([]string{}, res.Bugs.Names()...), Stats: statsJSON(res.Stats), Detail: res.Detail,
	})
}

// fmtStats renders a run's counters on one line, in the run's order.
func fmtStats(stats []scenarios.Stat) string {
	parts := make([]string, len(stats))
	for i, st := range stats {
		parts[i] = fmt.Sprintf("%s=%d", st.Name, st.Value)
	}
	return strings.Join(parts, " ")
}

// statsJSON renders the counters as one object, keys in the run's order.
func statsJSON(stats []scenarios.Stat) json.RawMessage {
	var b strings.Builder
	b.WriteByte('{')
	for i, st := range stats {
		if i > 0 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(st.Name)
		fmt.Fprintf(&b, "%s:%d", name, st.Value)
	}
	b.WriteByte('}')
	return json.RawMessage(b.String())
}

func uintString(n uint64) string { return fmt.Sprintf("%d", n) }

func fmtNs(ns int64) string {
	return fmt.Sprintf("%.3fs", float64(ns)/1e9)
}

// writeRecording writes a run's choice stream raw (for -choices) and as a
// Go fuzz corpus entry (so that a fuzz target's minimiser can shrink a
// seeded failure): each to its path, when given.
func writeRecording(rec []byte, raw, fuzz string) error {
	if raw != "" {
		if err := os.WriteFile(raw, rec, 0o644); err != nil {
			return usagef("run: cannot write the recording: %v", err)
		}
	}
	if fuzz != "" {
		entry := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", rec)
		if err := os.WriteFile(fuzz, []byte(entry), 0o644); err != nil {
			return usagef("run: cannot write the recording: %v", err)
		}
	}
	return nil
}
