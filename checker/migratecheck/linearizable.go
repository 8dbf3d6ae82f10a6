package migratecheck

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/anishathalye/porcupine"

	"shardsim/checker"
	"shardsim/model/migrate/hlc"
	"shardsim/property"
	"shardsim/simclock"
)

// KeyOp is one client operation on one raw key, as the history recorder
// saw it: a write (put or delete) or a latest read. Snapshot reads at older
// timestamps are not linearizability operations (M.SnapshotReads judges
// them).
type KeyOp struct {
	Client int
	Key    string
	Call   simclock.Time
	Return simclock.Time // ignored for ambiguous writes
	Write  bool
	Delete bool
	Op     string // a write's unique operation id (its value)

	Ambiguous bool // a write whose outcome the client could not learn

	ReadTS hlc.TS // a read's timestamp
	Found  bool
	Value  string
}

// mInput and mOutput are the porcupine operation payloads.
type mInput struct {
	write    bool
	delete   bool
	op       string
	expireAt hlc.TS
	readTS   hlc.TS
}

type mOutput struct {
	found bool
	value string
}

// mState is the key's latest write in linearization order.
type mState struct {
	has      bool
	delete   bool
	value    string
	expireAt hlc.TS
}

// KeyModel is the sequential specification of one raw key under
// the migration: writes replace the key's latest version; a latest read
// at ts sees it unless it is a delete or expired at ts.
var KeyModel = porcupine.Model{
	Partition: func(h []porcupine.Operation) [][]porcupine.Operation {
		byKey := map[string][]porcupine.Operation{}
		var ks []string
		for _, op := range h {
			k := op.Metadata.(string)
			if _, ok := byKey[k]; !ok {
				ks = append(ks, k)
			}
			byKey[k] = append(byKey[k], op)
		}
		sort.Strings(ks)
		out := make([][]porcupine.Operation, 0, len(ks))
		for _, k := range ks {
			out = append(out, byKey[k])
		}
		return out
	},
	Init: func() any { return mState{} },
	Step: func(state, input, output any) (bool, any) {
		s, in, out := state.(mState), input.(mInput), output.(mOutput)
		if in.write {
			return true, mState{has: true, delete: in.delete, value: in.op, expireAt: in.expireAt}
		}
		vis := s.has && !s.delete && (s.expireAt == 0 || in.readTS < s.expireAt)
		if vis != out.found {
			return false, s
		}
		return !vis || s.value == out.value, s
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(mInput), output.(mOutput)
		if in.write {
			if in.delete {
				return "delete " + in.op
			}
			return "put " + in.op
		}
		if !out.found {
			return fmt.Sprintf("read@%s -> none", in.readTS)
		}
		return fmt.Sprintf("read@%s -> %s", in.readTS, out.value)
	},
}

// Operations is the history CheckLinearizable judges, as porcupine
// operations (checked per key with KeyModel).
func Operations(ops []KeyOp, oracle *VersionOracle) []porcupine.Operation {
	hist := make([]porcupine.Operation, 0, len(ops))
	for _, o := range ops {
		op := porcupine.Operation{ClientId: o.Client, Call: int64(o.Call), Return: int64(o.Return), Metadata: o.Key}
		if o.Write {
			w, ok := oracle.OpOn(o.Op, o.Key)
			if !ok {
				continue
			}
			op.Input = mInput{write: true, delete: o.Delete, op: o.Op, expireAt: w.ExpireAt}
			op.Output = mOutput{}
			if o.Ambiguous {
				op.Return = int64(w.At)
				if op.Return < op.Call {
					op.Return = op.Call
				}
			}
		} else {
			op.Input = mInput{readTS: o.ReadTS}
			op.Output = mOutput{found: o.Found, value: o.Value}
		}
		if op.Return == math.MaxInt64 {
			continue
		}
		hist = append(hist, op)
	}
	return hist
}

// CheckLinearizable checks M.Linearizable per key. Writes are resolved
// against the oracle: a write that was never applied is dropped (failed
// writes certainly were not; ambiguous ones the oracle proves either way),
// and an applied ambiguous write takes effect by its first apply.
func CheckLinearizable(ops []KeyOp, oracle *VersionOracle, timeout time.Duration) (property.Verdict, *property.Violation) {
	hist := Operations(ops, oracle)
	parts := KeyModel.Partition(hist)
	single := KeyModel
	single.Partition = nil
	deadline := time.Duration(0)
	for _, part := range parts {
		left := timeout - deadline
		if left <= 0 {
			return property.VerdictUnknown, property.Violated(property.MLinearizable, "porcupine ran out of time")
		}
		start := time.Now() // wall time bounds the checker only; it never feeds the world
		verdict := checker.CheckWithin(single, part, left)
		deadline += time.Since(start)
		switch verdict {
		case property.VerdictViolation:
			return property.VerdictViolation, property.Violated(property.MLinearizable, "the %d operations on %q have no linearization", len(part), part[0].Metadata)
		case property.VerdictUnknown:
			return property.VerdictUnknown, property.Violated(property.MLinearizable, "porcupine ran out of time")
		}
	}
	return property.VerdictOK, nil
}

// ScanReads turns a complete scan at the latest timestamp into the reads
// it amounts to for M.Linearizable: one per key the oracle knows of the
// scanned family whose route key lies in the span (found or not), all
// with the scan's call and return times. A scan cut short by its limit
// says nothing of the keys it did not reach and gives none.
func (o *VersionOracle) ScanReads(s ScanObs, client int, call, ret simclock.Time) []KeyOp {
	if s.Limit > 0 && len(s.Rows) >= s.Limit {
		return nil
	}
	found := map[string]string{}
	for _, row := range s.Rows {
		found[row.Key] = row.Value
	}
	var out []KeyOp
	for _, ki := range o.keyInfos() {
		k := ki.key
		if !ki.inFamilySpan(s.Family.Prefix(), s.Span.Start, s.Span.End) {
			continue
		}
		v, ok := found[k]
		out = append(out, KeyOp{Client: client, Key: k, Call: call, Return: ret, ReadTS: s.TS, Found: ok, Value: v})
	}
	return out
}
