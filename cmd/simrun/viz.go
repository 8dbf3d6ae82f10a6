package main

import (
	"fmt"
	"io"
	"os"

	"github.com/anishathalye/porcupine"

	"shardsim/scenarios"
	"shardsim/timeline"
	"shardsim/viz"
)

// vizRecorder gathers what a -viz report needs while the run goes: every
// trace record and every porcupine-judged history.
type vizRecorder struct {
	trace     timeline.Collector
	histories []viz.History
}

// attach makes cfg feed the recorder (alongside any -trace file).
func (v *vizRecorder) attach(cfg *scenarios.Config) {
	if cfg.TraceOut != nil {
		cfg.TraceOut = io.MultiWriter(cfg.TraceOut, &v.trace)
	} else {
		cfg.TraceOut = &v.trace
	}
	cfg.Histories = func(label string, model porcupine.Model, ops []porcupine.Operation) {
		// kv and migrate histories are stamped with virtual time; the
		// coordination histories with sequence numbers.
		virtual := label == "kv" || label == "migrate"
		v.histories = append(v.histories, viz.History{Label: label, Model: model, Ops: ops, VirtualTime: virtual})
	}
}

// write renders the report of res to path.
func (v *vizRecorder) write(path string, res scenarios.Result, cfg scenarios.Config, choicesFile string) error {
	if err := v.trace.Err(); err != nil {
		return usagef("run: -viz: %v", err)
	}
	src := fmt.Sprintf("seed %d", res.Seed)
	if res.FromBytes {
		src = "choices " + choicesFile
	}
	page := viz.Page{
		Scenario: res.Scenario, Source: src, Bugs: res.Bugs.String(), Swarm: res.Swarm.String(),
		Verdict: string(res.Verdict), Property: string(res.Property), Detail: res.Detail,
		Replay: specOf(res.Scenario, cfg, choicesFile).command(), Digest: res.Digest,
		Records: v.trace.Records(), Histories: v.histories,
	}
	f, err := os.Create(path)
	if err != nil {
		return usagef("run: cannot create -viz file: %v", err)
	}
	if err := viz.Write(f, page); err != nil {
		f.Close()
		return usagef("run: -viz: %v", err)
	}
	if err := f.Close(); err != nil {
		return usagef("run: -viz: %v", err)
	}
	return nil
}
