package main

import (
	"bufio"
	"os"

	"shardsim/scenarios"
)

// traceHeader is the first line of a -trace file: which run the records
// belong to. It and the end line have seq 0: they describe the file, and
// are not records of the run (nor part of its digest).
type traceHeader struct {
	Seq    int             `json:"seq"`
	Kind   string          `json:"kind"` // "trace.header"
	Fields traceHeaderBody `json:"fields"`
}

type traceHeaderBody struct {
	Format      string            `json:"format"` // how to read the lines that follow
	Scenario    string            `json:"scenario"`
	Seed        *uint64           `json:"seed,omitempty"`
	ChoicesHash string            `json:"choices_hash,omitempty"`
	ChoicesFile string            `json:"choices_file,omitempty"`
	Options     map[string]string `json:"options"`
	Bugs        []string          `json:"bugs"`
	Version     buildVersion      `json:"version"`
}

// traceEnd is the last line of a -trace file: the counts a report shows.
type traceEnd struct {
	Seq    int          `json:"seq"`
	Kind   string       `json:"kind"` // "trace.end"
	Fields traceEndBody `json:"fields"`
}

type traceEndBody struct {
	Records  uint64 `json:"records"` // the run's records, the lines between header and end
	Events   uint64 `json:"events"`  // loop steps; a step writes any number of records
	Digest   string `json:"digest"`
	Verdict  string `json:"verdict"`
	Property string `json:"property,omitempty"`
	Swarm    any    `json:"swarm"`
}

const traceFormat = "shardsim trace v1: one JSON object per line; between the header and the end line every record has " +
	"seq, t (virtual ns), kind, actor, detail (text) and fields (the same detail as typed JSON)"

// openTrace makes cfg write the run's records to path (nothing when path
// is empty), after a header line; the returned function writes the end
// line and closes the file.
func openTrace(path, name string, cfg *scenarios.Config, choicesFile string) (func(scenarios.Result) error, error) {
	if path == "" {
		return func(scenarios.Result) error { return nil }, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, usagef("run: cannot create trace file: %v", err)
	}
	w := bufio.NewWriterSize(f, 1<<16)
	head := traceHeaderBody{Format: traceFormat, Scenario: name, ChoicesFile: choicesFile, Options: cfg.Options,
		Bugs: append([]string{}, cfg.Bugs.Names()...), Version: readVersion()}
	if cfg.Choices != nil {
		head.ChoicesHash = scenarios.ChoicesHash(cfg.Choices)
	} else {
		seed := cfg.Seed
		head.Seed = &seed
	}
	if head.Options == nil {
		head.Options = map[string]string{}
	}
	writeJSON(w, traceHeader{Kind: "trace.header", Fields: head})
	cfg.TraceOut = w
	return func(res scenarios.Result) error {
		writeJSON(w, traceEnd{Kind: "trace.end", Fields: traceEndBody{Records: res.Records, Events: res.Events,
			Digest: res.Digest, Verdict: string(res.Verdict), Property: string(res.Property), Swarm: res.Swarm}})
		if err := w.Flush(); err != nil {
			f.Close()
			return usagef("run: writing the trace: %v", err)
		}
		if err := f.Close(); err != nil {
			return usagef("run: writing the trace: %v", err)
		}
		return nil
	}, nil
}
