// Package tlatrace writes a simulated run's history as a TLA+ module that
// TLC can read without extra modules: the constants of the run (workers,
// tenants, runs, key universe, ...) and the sequence Trace of its steps,
// each a record naming the specification's action, its parameters and the
// records the step changed, mapped onto the specification's variables. The
// trace specifications beside the protocol specifications in tla/
// (TraceShardCoordination.tla) replay the sequence against the
// specification's actions; tla/tracecheck drives them.
package tlatrace

import (
	"sort"
	"strconv"
	"strings"
)

// value is a TLA+ value rendered as text.
type value string

// str is a TLA+ string.
func str(s string) value { return value(strconv.Quote(s)) }

// num is a TLA+ integer.
func num(n int64) value { return value(strconv.FormatInt(n, 10)) }

// boolean is TRUE or FALSE.
func boolean(b bool) value {
	if b {
		return "TRUE"
	}
	return "FALSE"
}

// tuple is a TLA+ sequence <<a, b, ...>>.
func tuple(vs ...value) value {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = string(v)
	}
	return value("<<" + strings.Join(parts, ", ") + ">>")
}

// set is a TLA+ set of the values, sorted for a stable text.
func set(vs ...value) value {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = string(v)
	}
	sort.Strings(parts)
	return value("{" + strings.Join(parts, ", ") + "}")
}

// field is one field of a record.
type field struct {
	name string
	v    value
}

// record is a TLA+ record [a |-> x, b |-> y].
func record(fs ...field) value {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = f.name + " |-> " + string(f.v)
	}
	return value("[" + strings.Join(parts, ", ") + "]")
}

// fn is a TLA+ function over the keys of m, written with TLC's :> and @@
// ((k1 :> v1 @@ k2 :> v2)); the empty function is <<>>.
func fn(m map[value]value) value {
	if len(m) == 0 {
		return "<<>>"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, string(k))
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + " :> " + string(m[value(k)])
	}
	return value("(" + strings.Join(parts, " @@ ") + ")")
}
