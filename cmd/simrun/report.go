package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"shardsim/corpus"
	"shardsim/property"
	"shardsim/scenarios"
)

const aboutReport = `Summarises the runs saved under DIR (by sweep, run -save or by hand) the way a
sweep groups its failures: by property and bug signature (the bugs switched
on, "clean" for none), each group with its count, its fastest-failing run (it
replays every entry to learn its virtual time and detail) and that run's
replay command. An entry that no longer reproduces its record is listed apart.

Each group is marked new or known against the committed corpus (-known,
default the corpus/ directory of the shardsim checkout simrun runs in): known
when an entry there records the same property with the same bugs.

Exit status: 1 when a group is new, 0 otherwise, 2 for bad input.`

// savedRun is one replayed entry of a report.
type savedRun struct {
	path  string
	entry corpus.Entry
	res   scenarios.Result
	err   error
}

// reportJSON is `simrun report -json`'s one object.
type reportJSON struct {
	Dir          string           `json:"dir"`
	Known        string           `json:"known"`
	Entries      int              `json:"entries"`
	Failing      int              `json:"failing"`
	Groups       []reportGroup    `json:"groups"`
	NotReproduce []notReproducing `json:"not_reproducing"`
}

type reportGroup struct {
	group
	Files []string `json:"files"`
}

type notReproducing struct {
	File     string `json:"file"`
	Recorded string `json:"recorded"`
	Now      string `json:"now"`
}

func cmdReport(e *env, args []string) (int, error) {
	fs := newFlagSet("report")
	known := fs.String("known", "", "the committed corpus `DIR` to mark groups new or known against (default: corpus/ of the checkout simrun runs in)")
	asJSON := fs.Bool("json", false, "print one JSON object on stdout, the text on stderr")
	if err := parseInterleaved(fs, args); err != nil {
		return 0, err
	}
	if fs.NArg() != 1 {
		return 0, usagef("report: want one directory of saved runs (simrun report DIR)")
	}
	dir := fs.Arg(0)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return 0, usagef("report: %s is not a directory", dir)
	}
	if *known == "" {
		*known = committedCorpus()
	}
	runs, err := replayDir(dir)
	if err != nil {
		return 0, err
	}
	knownSet, err := knownGroups(*known)
	if err != nil {
		return 0, err
	}
	out := buildReport(dir, *known, runs, knownSet)
	text := e.stdout
	if *asJSON {
		text = e.stderr
	}
	printReportText(text, out)
	if *asJSON {
		writeJSON(e.stdout, out)
	}
	for _, g := range out.Groups {
		if g.Status == "new" {
			return exitViolation, nil
		}
	}
	return exitOK, nil
}

// committedCorpus finds corpus/ beside the go.mod of the shardsim checkout
// holding the working directory, or "".
func committedCorpus() string {
	dir, err := os.Getwd()
	for err == nil {
		if data, e := os.ReadFile(filepath.Join(dir, "go.mod")); e == nil && strings.HasPrefix(string(data), "module shardsim\n") {
			if st, e := os.Stat(filepath.Join(dir, "corpus")); e == nil && st.IsDir() {
				return filepath.Join(dir, "corpus")
			}
			return ""
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
	return ""
}

// replayDir replays every corpus entry under dir (golden excerpts under
// testdata are not entries), in parallel.
func replayDir(dir string) ([]savedRun, error) {
	files, err := corpus.Files(dir)
	if err != nil {
		return nil, usagef("report: %v", err)
	}
	var paths []string
	for _, f := range files {
		if rel, _ := filepath.Rel(dir, f); !strings.HasPrefix(rel, "testdata"+string(filepath.Separator)) {
			paths = append(paths, f)
		}
	}
	runs := make([]savedRun, len(paths))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.NumCPU())
	for i, p := range paths {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			runs[i] = replayOne(p)
		}()
	}
	wg.Wait()
	return runs, nil
}

func replayOne(path string) savedRun {
	r := savedRun{path: path}
	if r.entry, r.err = corpus.Load(path); r.err != nil {
		return r
	}
	cfg, err := r.entry.Config()
	if err != nil {
		r.err = err
		return r
	}
	r.res, r.err = scenarios.Run(r.entry.Scenario, cfg)
	return r
}

// groupKey is what makes two saved runs one group: property and bugs.
func groupKey(p property.Name, bugs []string) string {
	return string(p) + "|" + bugSignature(bugs)
}

// knownGroups reads the groups a committed corpus records (its entries
// say their property and bugs; nothing needs to run).
func knownGroups(dir string) (map[string]bool, error) {
	known := map[string]bool{}
	if dir == "" {
		return known, nil
	}
	files, err := corpus.Files(dir)
	if err != nil {
		return nil, usagef("report: -known: %v", err)
	}
	for _, f := range files {
		if rel, _ := filepath.Rel(dir, f); strings.HasPrefix(rel, "testdata"+string(filepath.Separator)) {
			continue
		}
		e, err := corpus.Load(f)
		if err == nil && e.Verdict == string(property.VerdictViolation) {
			known[groupKey(e.Property, e.Bugs)] = true
		}
	}
	return known, nil
}

// buildReport groups the failing runs and marks each group.
func buildReport(dir, known string, runs []savedRun, knownSet map[string]bool) reportJSON {
	out := reportJSON{Dir: dir, Known: known, Entries: len(runs), Groups: []reportGroup{}, NotReproduce: []notReproducing{}}
	index := map[string]int{}
	for _, r := range runs {
		if r.err != nil {
			out.NotReproduce = append(out.NotReproduce, notReproducing{File: r.path, Now: "error: " + r.err.Error()})
			continue
		}
		now := strings.TrimSpace(string(r.res.Verdict) + " " + string(r.res.Property))
		recorded := strings.TrimSpace(r.entry.Verdict + " " + string(r.entry.Property))
		if now != recorded || r.res.Digest != r.entry.Digest {
			out.NotReproduce = append(out.NotReproduce, notReproducing{File: r.path, Recorded: recorded + " " + r.entry.Digest[:12], Now: now + " " + r.res.Digest[:min(12, len(r.res.Digest))]})
		}
		if r.res.Verdict != property.VerdictViolation {
			continue
		}
		out.Failing++
		key := groupKey(r.res.Property, r.entry.Bugs)
		f := failure{Seed: r.res.Seed, Property: r.res.Property, Signature: bugSignature(r.entry.Bugs), VirtualNs: r.res.VirtualNs,
			Events: r.res.Events, Digest: r.res.Digest, Detail: r.res.Detail}
		i, ok := index[key]
		if !ok {
			i = len(out.Groups)
			index[key] = i
			status := "new"
			if knownSet[key] {
				status = "known"
			}
			out.Groups = append(out.Groups, reportGroup{group: group{Property: f.Property, Signature: f.Signature, Shape: shape(f.Detail),
				Fastest: f, Replay: "simrun replay " + r.path, Status: status, Seeds: []uint64{}}})
		}
		g := &out.Groups[i]
		g.Runs++
		g.Files = append(g.Files, r.path)
		if faster(f, g.Fastest) < 0 {
			g.Fastest, g.Shape, g.Replay = f, shape(f.Detail), "simrun replay "+r.path
		}
	}
	return out
}

func printReportText(w io.Writer, out reportJSON) {
	newGroups := 0
	for _, g := range out.Groups {
		if g.Status == "new" {
			newGroups++
		}
	}
	against := "no committed corpus found (-known DIR)"
	if out.Known != "" {
		against = "against " + out.Known
	}
	fmt.Fprintf(w, "report   %s: %d saved runs, %d failing in %d groups, %d new %s\n",
		out.Dir, out.Entries, out.Failing, len(out.Groups), newGroups, against)
	if len(out.Groups) > 0 {
		fmt.Fprintln(w, "groups   (property, bug signature: runs, fastest-failing run, its replay)")
	}
	for _, g := range out.Groups {
		fmt.Fprintf(w, "  %s  %s  [%s]  %d runs\n", g.Property, g.Signature, g.Status, g.Runs)
		fmt.Fprintf(w, "      fastest virtual %s, %d events: %s\n", fmtNs(g.Fastest.VirtualNs), g.Fastest.Events, g.Shape)
		fmt.Fprintf(w, "      replay %s\n", g.Replay)
	}
	for _, n := range out.NotReproduce {
		fmt.Fprintf(w, "DIFFERS  %s: recorded %s, now %s\n", n.File, orNone(n.Recorded), n.Now)
	}
}

// markKnown marks each group of a sweep new or known against the committed
// corpus, when one is found.
func markKnown(gs []group) {
	dir := committedCorpus()
	if dir == "" {
		return
	}
	known, err := knownGroups(dir)
	if err != nil {
		return
	}
	for i := range gs {
		gs[i].Status = "new"
		if known[groupKey(gs[i].Property, strings.Split(gs[i].Signature, "+"))] || gs[i].Signature == "clean" && known[string(gs[i].Property)+"|clean"] {
			gs[i].Status = "known"
		}
	}
}
