package migratecheck

import (
	"shardsim/property"
	"sort"

	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/keys"
	"shardsim/simclock"
)

// ServedRead is one successful client read as its client saw it: which
// group answered, when it was invoked, at which timestamp it was served,
// whether it asked for the latest value, and for each raw key what it
// returned (the version chosen, or nothing).
type ServedRead struct {
	Op     string
	Group  int
	Call   simclock.Time
	TS     hlc.TS
	Latest bool
	Key    string // a point read's raw key ("" for a scan)
	Family keys.Family
	Span   keys.Span // the route-key span read (a point read's holds its one route key)
	Limit  int       // a scan's row limit (0: none)
	Rows   []ServedRow
}

// ServedRow is one key a read returned. A scan returns visible rows only:
// a key of its span it did not return read as nothing.
type ServedRow struct {
	Key     string
	Chosen  bool   // some version (maybe a tombstone) was returned
	Visible bool   // it was a value
	TS      hlc.TS // the returned version's timestamp
}

// Move is a completed CUTOVER as the job records show it: Span moved from
// Source to Target at At.
type Move struct {
	Job            uint64
	Source, Target int
	Span           keys.Span
	At             simclock.Time
}

// CheckNoStaleRead checks M.NoStaleRead: after CUTOVER, no read of the
// moved span served by the source returns a value older than a write the
// target acknowledged before that read began. It judges by the version
// oracle (which group applied each version) and the clients' real-time
// record (acked: when each write's client got its answer; reads: when each
// read was invoked), independently of the protocol's own bookkeeping: a
// target write W of key k acknowledged before the source served read R of
// k began, where R asked for the latest value or for a timestamp at or
// above W's, must not return a version older than W (nor nothing, unless
// W is a delete). Snapshot reads below W's timestamp may return older
// versions. What it cannot see: reads whose answer was lost (the client
// never used them), and which node served (only which group).
func CheckNoStaleRead(reads []ServedRead, acked []AckedWrite, oracle *VersionOracle, moves []Move) *property.Violation {
	for _, m := range moves {
		byKey := map[string][]targetAck{}
		for _, a := range acked {
			for _, w := range oracle.OpWrites(a.Op) {
				if (a.Key == "" || w.Key == a.Key) && w.Group == m.Target && w.At >= m.At && routedIn(w.Key, m.Span.Start, m.Span.End) {
					byKey[w.Key] = append(byKey[w.Key], targetAck{w: w, ret: a.Return})
				}
			}
		}
		ks := make([]string, 0, len(byKey))
		for k, acks := range byKey {
			sort.Slice(acks, func(i, j int) bool { return acks[i].ret < acks[j].ret })
			ks = append(ks, k)
		}
		sort.Strings(ks)
		for _, r := range reads {
			if r.Group != m.Source || !r.Span.Overlaps(m.Span) {
				continue
			}
			var own []string // the keys whose latest move, when r began, is m, and no later move brought back to r's group
			for _, k := range ks {
				if latestMove(moves, k, r.Call) == m.Job && !movedBackTo(moves, m, k, r.Group) {
					own = append(own, k)
				}
			}
			if err := checkServed(r, m, own, byKey, oracle); err != nil {
				return err
			}
		}
	}
	return nil
}

// latestMove returns the job of the last move of key's span before t (0:
// none): a read is judged against the move that put the key where it is.
func latestMove(moves []Move, key string, t simclock.Time) uint64 {
	var job uint64
	var at simclock.Time
	for _, m := range moves {
		if m.At <= t && routedIn(key, m.Span.Start, m.Span.End) && (job == 0 || m.At >= at) {
			job, at = m.Job, m.At
		}
	}
	return job
}

// movedBackTo reports whether a move after m took key to group g: a read g
// served may have been served as that move's target (the client saw only
// when it began).
func movedBackTo(moves []Move, m Move, key string, g int) bool {
	for _, x := range moves {
		if x.At > m.At && x.Target == g && routedIn(key, x.Span.Start, x.Span.End) {
			return true
		}
	}
	return false
}

type targetAck struct {
	w   AppliedWrite
	ret simclock.Time
}

// checkServed judges one source read against the target writes acked
// before it began.
func checkServed(r ServedRead, m Move, ks []string, byKey map[string][]targetAck, oracle *VersionOracle) *property.Violation {
	got := map[string]ServedRow{}
	for _, row := range r.Rows {
		got[row.Key] = row
	}
	complete := r.Limit == 0 || len(r.Rows) < r.Limit
	for _, k := range ks {
		acks := byKey[k]
		if r.Key != "" && k != r.Key || familyPrefix(k) != r.Family.Prefix() || !routedIn(k, r.Span.Start, r.Span.End) || !routedIn(k, m.Span.Start, m.Span.End) {
			continue
		}
		row, returned := got[k]
		if !returned && !complete {
			continue // a scan cut short by its limit says nothing about later keys
		}
		for _, a := range acks {
			if a.ret >= r.Call {
				break
			}
			if !r.Latest && r.TS < a.w.TS {
				continue
			}
			stale := false
			switch {
			case returned && row.Chosen:
				stale = row.TS < a.w.TS
			case r.Key == "":
				// A scan shows visible rows only: its silence is stale
				// unless a later delete (or expiry) of the key explains it.
				v, ok := oracle.Newest(k, r.TS)
				stale = a.w.VisibleAt(max(r.TS, a.w.TS)) && !(ok && v.TS >= a.w.TS && !v.VisibleAt(r.TS))
			default:
				stale = a.w.VisibleAt(max(r.TS, a.w.TS))
			}
			if stale {
				return property.Violated(property.MNoStaleRead, "read %s of %s served by source group %d at %s (invoked %s) returned %s, older than %s@%s the target group %d acknowledged at %s (job %d)",
					r.Op, keys.Quote(k), r.Group, r.TS, r.Call, describeRow(row, returned), a.w.Op, a.w.TS, m.Target, a.ret, m.Job)
			}
		}
	}
	return nil
}

func describeRow(row ServedRow, returned bool) string {
	if !returned || !row.Chosen {
		return "nothing"
	}
	return "@" + row.TS.String()
}
