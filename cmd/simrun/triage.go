package main

import (
	"cmp"
	"regexp"
	"slices"
	"strings"

	"shardsim/property"
)

// Triage groups failing runs by what they show: the property violated and
// the bug signature, the set of injected bugs the run had switched on
// ("clean" for none), which is also how corpus entries are named
// (<bugs>-<property>-seedN.json), so a group of a sweep or of saved runs is
// "known" when the committed corpus holds an entry with the same pair. Each
// group names its fastest-failing seed (the least virtual time to the
// violation, then the fewest events, then the lowest seed), the cheapest
// one to replay, and shows that seed's detail with its particulars
// (numbers, identifiers, quoted keys and values) blanked out as its shape.

// shapeMax bounds a shape's length; the start of a detail is what tells
// failures apart.
const shapeMax = 120

var (
	quoted      = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	hexNumber   = regexp.MustCompile(`\b0x[0-9a-fA-F]+\b|\b[0-9a-f]{6,}\b`)
	number      = regexp.MustCompile(`\d+(\.\d+)?(ns|µs|us|ms|s|m|h)?`)
	blankSpaces = regexp.MustCompile(`\s+`)
)

// bugSignature names a set of bugs: their names joined by "+", or "clean".
func bugSignature(names []string) string {
	if len(names) == 0 {
		return "clean"
	}
	return strings.Join(names, "+")
}

// shape is the first line of a detail with its particulars blanked out.
func shape(detail string) string {
	line, _, _ := strings.Cut(detail, "\n")
	line = quoted.ReplaceAllString(line, `"_"`)
	line = hexNumber.ReplaceAllStringFunc(line, func(s string) string {
		if !strings.HasPrefix(s, "0x") && !strings.ContainsAny(s, "0123456789") {
			return s // a word such as "facade" is not an id
		}
		return "#"
	})
	line = number.ReplaceAllString(line, "#")
	line = blankSpaces.ReplaceAllString(strings.TrimSpace(line), " ")
	if len(line) > shapeMax {
		line = line[:shapeMax] + "…"
	}
	return line
}

// failure is one failing (or undecided) seed of a sweep.
type failure struct {
	Seed      uint64        `json:"seed"`
	Property  property.Name `json:"property"`
	Signature string        `json:"signature"` // the bug signature
	VirtualNs int64         `json:"virtual_ns"`
	Events    uint64        `json:"events"`
	Digest    string        `json:"digest"`
	Detail    string        `json:"detail,omitempty"` // kept for undecided seeds and each group's fastest
}

// group is the failures sharing a property and a bug signature.
type group struct {
	Property  property.Name `json:"property"`
	Signature string        `json:"signature"` // the bug signature
	Shape     string        `json:"shape"`     // the fastest seed's detail, particulars blanked out
	Runs      int           `json:"runs"`
	Fastest   failure       `json:"fastest"` // the fastest-failing seed
	Replay    string        `json:"replay"`  // the fastest seed's replay command
	Seeds     []uint64      `json:"seeds"`   // every seed of the group, ascending
	Status    string        `json:"status,omitempty"`
}

// faster orders failures by how cheaply they show the bug.
func faster(a, b failure) int {
	return cmp.Or(cmp.Compare(a.VirtualNs, b.VirtualNs), cmp.Compare(a.Events, b.Events), cmp.Compare(a.Seed, b.Seed))
}

// groups accumulates failures into groups by property and signature.
type groups struct {
	index map[[2]string]int
	list  []group
}

// add counts f (whose Detail, if any, a group keeps for its fastest seed).
func (gs *groups) add(f failure) {
	gs.merge(group{Property: f.Property, Signature: f.Signature, Shape: shape(f.Detail), Runs: 1, Fastest: f, Seeds: []uint64{f.Seed}})
}

// merge adds a group of another sweep (a shard) to gs.
func (gs *groups) merge(g group) {
	if gs.index == nil {
		gs.index = map[[2]string]int{}
	}
	key := [2]string{string(g.Property), g.Signature}
	i, ok := gs.index[key]
	if !ok {
		gs.index[key] = len(gs.list)
		g.Seeds = slices.Clone(g.Seeds)
		gs.list = append(gs.list, g)
		return
	}
	old := &gs.list[i]
	old.Runs += g.Runs
	old.Seeds = append(old.Seeds, g.Seeds...)
	if faster(g.Fastest, old.Fastest) < 0 {
		old.Fastest, old.Shape = g.Fastest, g.Shape
	}
}

// sorted returns the groups by descending size, then property and
// signature, each with its seeds ascending and its replay command.
func (gs *groups) sorted(replay func(uint64) string) []group {
	out := slices.Clone(gs.list)
	for i := range out {
		out[i].Seeds = slices.Clone(out[i].Seeds)
		slices.Sort(out[i].Seeds)
		if replay != nil {
			out[i].Replay = replay(out[i].Fastest.Seed)
		}
	}
	slices.SortFunc(out, func(a, b group) int {
		return cmp.Or(cmp.Compare(b.Runs, a.Runs), cmp.Compare(a.Property, b.Property), cmp.Compare(a.Signature, b.Signature))
	})
	return out
}
