package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"shardsim/corpus"
	"shardsim/property"
	"shardsim/scenarios"
)

const aboutRun = `Runs one world of a scenario from a seed (or from a file of choice bytes) and
prints its report: the swarm options drawn, how much happened, the trace
digest and the verdict. A run that did not pass also shows the property, what
went wrong, the last events of the key, shard or job it concerns, and the
exact command that replays it.

With -json, stdout holds exactly one JSON object (the report, the options and
the replay command); the text report goes to stderr.

"events" counts loop steps (scheduled callbacks and deliveries that ran);
"records" counts trace records: a step may write several records or none,
so the two differ. -trace writes every record, after a header record naming
the run and before an end record with both counts.`

func cmdRun(e *env, args []string) (int, error) {
	fs := newFlagSet("run")
	var wf worldFlags
	wf.register(fs)
	seed := fs.Uint64("seed", 1, "seed `N` of the choice stream (0 to 18446744073709551615)")
	choicesFile := fs.String("choices", "", "drive the run from this `FILE`'s bytes (raw, or a Go fuzz corpus entry) instead of a seed")
	tracePath := fs.String("trace", "", "write every trace record to `FILE` as JSON lines (a header record first)")
	asJSON := fs.Bool("json", false, "print one JSON object on stdout and the text report on stderr")
	saveDir := fs.String("save", "", "save the run (whatever its verdict) as a corpus entry under `DIR` (never overwriting one)")
	recordPath := fs.String("record", "", "write the run's choice stream to `FILE` (replays with -choices)")
	recordFuzz := fs.String("record-fuzz", "", "write the run's choice stream to `FILE` as a Go fuzz corpus entry")
	vizPath := fs.String("viz", "", "write a self-contained HTML report of the run (timeline, violation, porcupine) to `FILE`")
	tlaPath := fs.String("tla-trace", "", "write the run's steps, mapped onto its TLA+ specification, to `FILE`.tla (a module named after the file; see tla/README.md)")
	if err := parseFlags(fs, args); err != nil {
		return 0, err
	}
	name, cfg, err := wf.config("run")
	if err != nil {
		return 0, err
	}
	cfg.Seed = *seed
	noteOverrides(e.stderr, name, cfg.Options)
	if *choicesFile != "" {
		if flagGiven(fs, "seed") {
			return 0, usagef("run: -seed and -choices are exclusive")
		}
		if cfg.Choices, err = readChoices(*choicesFile); err != nil {
			return 0, err
		}
		cfg.Seed = 0
	}
	text, out := e.stdout, e.stdout
	if *asJSON {
		text = e.stderr
	}
	closeTrace, err := openTrace(*tracePath, name, &cfg, *choicesFile)
	if err != nil {
		return 0, err
	}
	if *tlaPath != "" {
		if !strings.HasSuffix(*tlaPath, ".tla") {
			return 0, usagef("run: -tla-trace needs a .tla file name")
		}
		f, err := os.Create(*tlaPath)
		if err != nil {
			return 0, usagef("run: cannot create TLA+ trace file: %v", err)
		}
		defer f.Close()
		cfg.TLATrace, cfg.TLATraceModule = f, strings.TrimSuffix(filepath.Base(*tlaPath), ".tla")
	}
	cfg.Record = *recordPath != "" || *recordFuzz != ""
	var viz vizRecorder
	if *vizPath != "" {
		viz.attach(&cfg)
	}
	res, err := scenarios.Run(name, cfg)
	if err != nil {
		return 0, usageError{err.Error()}
	}
	if err := closeTrace(res); err != nil {
		return 0, err
	}
	if *vizPath != "" {
		if err := viz.write(*vizPath, res, cfg, *choicesFile); err != nil {
			return 0, err
		}
	}
	if err := writeRecording(res.Recording, *recordPath, *recordFuzz); err != nil {
		return 0, err
	}
	rep := newReport(res, cfg, specOf(name, cfg, *choicesFile))
	if *choicesFile != "" {
		rep.source = fmt.Sprintf("choices %s (%d bytes, blake3 %s)", *choicesFile, len(cfg.Choices), res.ChoicesHash[:16])
	}
	if *saveDir != "" {
		if rep.saved, err = saveRun(*saveDir, cfg, res); err != nil {
			return 0, usagef("run: cannot save: %v", err)
		}
	}
	rep.print(text)
	if *asJSON {
		writeJSON(out, rep.json())
	}
	return exitCode(res.Verdict), nil
}

func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

// readChoices reads a -choices file: raw bytes or a Go fuzz corpus entry.
// An empty stream and a corpus entry are refused: the first would silently
// be the quiet run (every fault off, smallest values) and pass, the second
// is a saved run, which simrun replay runs with its own seed, options and
// bugs.
func readChoices(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, usagef("run: cannot read choices: %v", err)
	}
	if looksLikeCorpusEntry(data) {
		return nil, usagef("run: %s is a corpus entry (a saved run), not choice bytes: replay it with simrun replay %s", path, path)
	}
	choices, err := decodeChoices(data)
	if err != nil {
		return nil, usagef("run: %s: %v", path, err)
	}
	if len(choices) == 0 {
		return nil, usagef("run: %s holds no choice bytes; an empty stream would run the quiet run (every fault off) and pass without testing anything (a file of one zero byte runs it on purpose)", path)
	}
	return choices, nil
}

// looksLikeCorpusEntry reports whether data is a JSON object with a
// scenario, as every corpus entry is.
func looksLikeCorpusEntry(data []byte) bool {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return false
	}
	var probe struct {
		Scenario *string `json:"scenario"`
	}
	return json.Unmarshal(trimmed, &probe) == nil && probe.Scenario != nil
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

// saveRun saves a run as a corpus entry under dir (never over an existing
// file) and returns its path. An undecided run is not saved: it has no
// verdict to replay to.
func saveRun(dir string, cfg scenarios.Config, res scenarios.Result) (string, error) {
	if res.Verdict == property.VerdictUnknown {
		return "", nil
	}
	return corpus.Save(dir, corpus.FromResult(cfg, res))
}

// writeJSON prints v as one JSON object and a newline, without HTML
// escaping (a detail's "->" stays readable instead of becoming "-\u003e").
func writeJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
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
		entry := fmt.Sprintf("%s[]byte(%q)\n", fuzzHeader, rec)
		if err := os.WriteFile(fuzz, []byte(entry), 0o644); err != nil {
			return usagef("run: cannot write the recording: %v", err)
		}
	}
	return nil
}

func fmtNs(ns int64) string {
	return fmt.Sprintf("%.3fs", float64(ns)/1e9)
}

// indentLines indents every line of s after the first by pad.
func indentLines(s, pad string) string {
	return strings.ReplaceAll(s, "\n", "\n"+pad)
}
