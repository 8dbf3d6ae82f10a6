// Package reach is "sometimes" coverage for simulated worlds: named points
// (a validation rule refusing a request, a fault being injected, a branch
// that exists to handle a fault) that a sweep of a scenario must reach at
// least once, the way Antithesis' and seedfall's Sometimes assertions fail
// a campaign whose condition never held. A checker only protects what the
// world reaches; a rule no run ever exercises can break unnoticed.
//
// A protocol's scenarios declare their points once (Declare, at init),
// count them as a run reaches them (Counts.Hit, through the world), and a
// sweep adds every run's counts into a Table, which lists the points never
// reached. Protocol code never imports this package: the scenario that
// drives a protocol counts what it sees (answers, refusal codes, the
// protocol's own statistics, the nemesis's faults).
package reach

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
)

// Point is one thing a sweep must reach: its name ("group.op.outcome")
// and what reaching it means.
type Point struct {
	Name string
	Doc  string
}

var registry = map[string][]Point{}

// Declare adds points to group (a protocol's scenarios share one group).
// A name declared twice is a programming error.
func Declare(group string, pts ...Point) {
	for _, p := range pts {
		if slices.ContainsFunc(registry[group], func(q Point) bool { return q.Name == p.Name }) {
			panic("reach: point " + p.Name + " declared twice in " + group)
		}
		registry[group] = append(registry[group], p)
	}
}

// Declared returns group's points, sorted by name.
func Declared(group string) []Point {
	out := slices.Clone(registry[group])
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Groups returns every group with declared points, sorted.
func Groups() []string {
	var out []string
	for g := range registry {
		out = append(out, g)
	}
	sort.Strings(out)
	return out
}

// Count is how often one point was reached.
type Count struct {
	Name string
	N    int64
}

// Counts is what one run reached. The zero value is ready to use.
type Counts struct {
	n map[string]int64
}

// Hit records that the named point was reached once.
func (c *Counts) Hit(name string) { c.Add(name, 1) }

// Add records that the named point was reached n times (n may be 0:
// nothing is recorded).
func (c *Counts) Add(name string, n int64) {
	if n == 0 {
		return
	}
	if c.n == nil {
		c.n = map[string]int64{}
	}
	c.n[name] += n
}

// Sorted returns the counts, sorted by name.
func (c *Counts) Sorted() []Count {
	out := make([]Count, 0, len(c.n))
	for name, n := range c.n {
		out = append(out, Count{name, n})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Table sums the counts of many runs of one group.
type Table struct {
	group string
	total map[string]int64
	runs  map[string]int // how many runs reached each point
	nRuns int
}

// NewTable returns an empty table for group.
func NewTable(group string) *Table {
	return &Table{group: group, total: map[string]int64{}, runs: map[string]int{}}
}

// Add adds one run's counts.
func (t *Table) Add(cs []Count) {
	t.nRuns++
	for _, c := range cs {
		t.total[c.Name] += c.N
		t.runs[c.Name]++
	}
}

// Missing returns the declared points no run reached, sorted.
func (t *Table) Missing() []string {
	var out []string
	for _, p := range Declared(t.group) {
		if t.total[p.Name] == 0 {
			out = append(out, p.Name)
		}
	}
	return out
}

// Undeclared returns the points reached that the group never declared (a
// misspelt name), sorted.
func (t *Table) Undeclared() []string {
	var out []string
	for name := range t.total {
		if !slices.ContainsFunc(registry[t.group], func(p Point) bool { return p.Name == name }) {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// Write prints the table: every declared point with its total and the
// number of runs that reached it, then what is missing or undeclared.
func (t *Table) Write(w io.Writer) {
	pts := Declared(t.group)
	width := len("point")
	for _, p := range pts {
		width = max(width, len(p.Name))
	}
	fmt.Fprintf(w, "reachability (%s, %d runs)\n%-*s %10s %8s\n", t.group, t.nRuns, width, "point", "hits", "runs")
	for _, p := range pts {
		fmt.Fprintf(w, "%-*s %10d %8d\n", width, p.Name, t.total[p.Name], t.runs[p.Name])
	}
	if m := t.Missing(); len(m) > 0 {
		fmt.Fprintf(w, "never reached: %s\n", strings.Join(m, ", "))
	} else {
		fmt.Fprintf(w, "every point reached\n")
	}
	if u := t.Undeclared(); len(u) > 0 {
		fmt.Fprintf(w, "reached but not declared: %s\n", strings.Join(u, ", "))
	}
}
