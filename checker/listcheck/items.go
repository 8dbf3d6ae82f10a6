package listcheck

import (
	"fmt"
	"sort"

	"shardsim/property"
)

// Every pushed value is unique in a run (the world makes it from the
// operation's id), which is what lets a value stand for the item.

// CheckNoDoublePop judges L.NoDoublePop: no value is returned by two pops
// that answered (a pop whose answer was lost returned nothing anyone saw).
func CheckNoDoublePop(ops []Op) *property.Violation {
	by := map[string]Op{}
	for _, o := range sorted(ops) {
		if o.Outcome != Done {
			continue
		}
		for i, c := range o.Cmds {
			if !c.pops() || i >= len(o.Answers) || !o.Answers[i].OK {
				continue
			}
			v := o.Answers[i].Val
			if first, dup := by[v]; dup {
				return &property.Violation{Property: property.LNoDoublePop, Subject: listSubject(o.List),
					Detail: fmt.Sprintf("list %q: %q was returned by two pops: %s and %s", o.List, v, first, o)}
			}
			by[v] = o
		}
	}
	return nil
}

// CheckNoLostItem judges L.NoLostItem at the end of a run: every value an
// acknowledged push (or LSET) wrote is still in its list as a reader of
// the final rows finds it (final), or an acknowledged pop returned it, or
// it left its list legitimately by the truth: a DEL or LSET removed it, or
// a pop whose answer was lost took it. A value whose push committed but
// whose removal no client saw, or whose push was acknowledged but never
// committed, is lost.
func CheckNoLostItem(ops []Op, t *Truth, final map[string][]string) *property.Violation {
	outcome := map[string]Outcome{}
	returned := map[string]bool{}
	for _, o := range ops {
		outcome[o.ID] = o.Outcome
		if o.Outcome != Done {
			continue
		}
		for i, c := range o.Cmds {
			if c.pops() && i < len(o.Answers) && o.Answers[i].OK {
				returned[o.Answers[i].Val] = true
			}
		}
	}
	present := map[string]bool{}
	for _, vs := range final {
		for _, v := range vs {
			present[v] = true
		}
	}
	for _, o := range sorted(ops) {
		if o.Outcome != Done {
			continue
		}
		for i, c := range o.Cmds {
			if !pushes(c, o.Answers, i) {
				continue
			}
			for _, v := range c.Vals {
				if present[v] || returned[v] {
					continue
				}
				if msg := lostBecause(t, v, outcome); msg != "" {
					return &property.Violation{Property: property.LNoLostItem, Subject: listSubject(o.List),
						Detail: fmt.Sprintf("list %q: %q, written by %s, is gone: %s", o.List, v, o, msg)}
				}
			}
		}
	}
	return nil
}

// pushes reports whether command i of an operation wrote its values.
func pushes(c Cmd, ans []Answer, i int) bool {
	switch c.Op {
	case "RPUSH", "LPUSH":
		return true
	case "LSET":
		return i < len(ans) && !ans[i].Err
	}
	return false
}

// lostBecause explains why a value that is neither in its list nor was
// returned by a pop is lost ("": it left legitimately).
func lostBecause(t *Truth, v string, outcome map[string]Outcome) string {
	f, ok := t.fates[v]
	switch {
	case !ok:
		return "no committed command removed it, and no reader of the final rows finds it"
	case f.how == "pop" && outcome[f.op] == Unknown:
		return ""
	case f.how == "pop":
		return fmt.Sprintf("operation %s popped it when it committed, but answered otherwise", f.op)
	}
	return ""
}

// sorted returns ops by call time (then id), so reports are stable.
func sorted(ops []Op) []Op {
	out := append([]Op(nil), ops...)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Call != out[j].Call {
			return out[i].Call < out[j].Call
		}
		return out[i].ID < out[j].ID
	})
	return out
}
