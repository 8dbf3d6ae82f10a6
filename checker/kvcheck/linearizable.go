package kvcheck

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"time"

	"github.com/anishathalye/porcupine"

	"shardsim/checker"
	"shardsim/property"
	"shardsim/simclock"
	"shardsim/simkv"
)

// Input is one client request in a KV history.
type Input struct {
	Req simkv.Request
}

// Output is what the client saw. Failed marks a transport error: the
// request may or may not have taken effect, so the model accepts any output
// and the recorder gives the operation a return time at the end of history.
type Output struct {
	Resp   simkv.Response
	Err    error
	Failed bool
}

// Model is the sequential specification of etcd's KV and lease API for
// porcupine. Its state is an immutable *simkv.Store: each step applies the
// request to a clone and compares the answer field by field. Leases never
// expire inside the model; the recorder adds each expiry the server applied
// as a revoke by the pseudo-client "lessor", at the instant it happened.
//
// StepContext honours porcupine's timeout, so a check that runs out of time
// reports Unknown rather than hanging.
var Model = porcupine.Model{
	Init: func() any { return &kvState{store: simkv.NewStore(simkv.StoreConfig{})} },
	StepContext: func(ctx context.Context, state, input, output any) (bool, any) {
		if ctx.Err() != nil {
			return false, state
		}
		return kvStep(state.(*kvState), input.(Input), output.(Output))
	},
	Equal: func(a, b any) bool {
		return a.(*kvState).fingerprint() == b.(*kvState).fingerprint()
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(Input), output.(Output)
		if out.Failed {
			return fmt.Sprintf("%s -> failed(%v)", in.Req, out.Err)
		}
		if out.Err != nil {
			return fmt.Sprintf("%s -> %v", in.Req, out.Err)
		}
		return fmt.Sprintf("%s -> %s", in.Req, out.Resp)
	},
}

// kvState is an immutable model state: a store no one applies to again, and
// its fingerprint, computed once on first comparison.
type kvState struct {
	store *simkv.Store
	fp    string
}

func (s *kvState) fingerprint() string {
	if s.fp == "" {
		s.fp = s.store.Fingerprint()
	}
	return s.fp
}

func kvStep(s *kvState, in Input, out Output) (bool, any) {
	if !in.Req.IsWrite() && out.Failed {
		return true, s
	}
	store := s.store.Clone()
	resp, err := store.Apply(0, in.Req)
	next := &kvState{store: store}
	if out.Failed {
		// The request may have taken effect; linearizing it at the end of the
		// history is the same as it never having happened.
		if err != nil {
			return true, s
		}
		return true, next
	}
	if !sameError(err, out.Err) {
		return false, s
	}
	if err != nil {
		return true, s
	}
	if !reflect.DeepEqual(normalize(resp), normalize(out.Resp)) {
		return false, s
	}
	return true, next
}

func sameError(a, b error) bool {
	if a == nil || b == nil {
		return a == b
	}
	return errors.Is(a, b) || errors.Is(b, a) || a.Error() == b.Error()
}

// normalize drops what the model cannot know: the remaining TTL of a lease
// depends on when a request ran, which the history only bounds.
func normalize(r simkv.Response) simkv.Response {
	if r.LeaseTimeToLive != nil {
		c := *r.LeaseTimeToLive
		c.TTL = 0
		r.LeaseTimeToLive = &c
	}
	return r
}

// Recorder is a simkv.Observer that records a porcupine history of client
// calls and lease expiries.
type Recorder struct {
	ops     []porcupine.Operation
	refused map[int]bool   // ops refused before sending: certainly not applied
	open    map[uint64]int // call id -> index in ops while awaiting a return
	clients map[string]int
	names   []string
}

// NewRecorder returns an empty recorder.
func NewRecorder() *Recorder {
	return &Recorder{open: map[uint64]int{}, clients: map[string]int{}, refused: map[int]bool{}}
}

func (r *Recorder) clientID(name string) int {
	id, ok := r.clients[name]
	if !ok {
		id = len(r.names)
		r.clients[name] = id
		r.names = append(r.names, name)
	}
	return id
}

// OnInvoke records the start of a client call.
func (r *Recorder) OnInvoke(call uint64, client string, at simclock.Time, req simkv.Request) {
	r.open[call] = len(r.ops)
	r.ops = append(r.ops, porcupine.Operation{
		ClientId: r.clientID(client),
		Input:    Input{Req: req},
		Call:     int64(at),
		Output:   Output{Failed: true},
		Return:   math.MaxInt64,
		Metadata: fmt.Sprintf("%s call=%d", client, call), // for reports: who made the call, and its id in the trace
	})
}

// OnApply records lease expiries (internal applies with call id 0).
func (r *Recorder) OnApply(call uint64, at simclock.Time, req simkv.Request, resp simkv.Response, err error, before, after int64) {
	if call != 0 {
		return
	}
	r.ops = append(r.ops, porcupine.Operation{
		ClientId: r.clientID("lessor"),
		Input:    Input{Req: req},
		Call:     int64(at),
		Output:   Output{Resp: resp, Err: err},
		Return:   int64(at),
		Metadata: "lessor",
	})
}

// OnReturn records the end of a client call. A transport error keeps the
// operation open-ended: it may take effect at any time after its call.
func (r *Recorder) OnReturn(call uint64, at simclock.Time, resp simkv.Response, err error) {
	i, ok := r.open[call]
	if !ok {
		return
	}
	delete(r.open, call)
	if errors.Is(err, simkv.ErrUnavailable) {
		r.refused[i] = true
		return
	}
	if simkv.IsTransport(err) {
		return
	}
	r.ops[i].Output = Output{Resp: resp, Err: err}
	r.ops[i].Return = int64(at)
}

// History returns the recorded operations. Reads that failed are dropped:
// they constrain nothing; so are requests refused before they were sent.
// Calls still open (the client crashed or the run ended) count as failed.
func (r *Recorder) History() []porcupine.Operation {
	out := make([]porcupine.Operation, 0, len(r.ops))
	for i, op := range r.ops {
		if r.refused[i] || op.Output.(Output).Failed && !op.Input.(Input).Req.IsWrite() {
			continue
		}
		out = append(out, op)
	}
	return out
}

// Check checks a KV history for KV.Linearizable within timeout (wall
// time, whatever the run's virtual time). With VerdictOK the violation is
// nil; otherwise it names KV.Linearizable and says why: for a history
// with no linearization, the key and the operations where every order
// gets stuck (explain), its subject that key; or that porcupine ran out of
// time.
func Check(history []porcupine.Operation, timeout time.Duration) (property.Verdict, *property.Violation) {
	start := time.Now()
	verdict := checker.CheckWithin(Model, history, timeout)
	switch verdict {
	case property.VerdictViolation:
		// The verbose search repeats the check while noting partial
		// linearizations; it gets the time the first check left, and at
		// least a second, since a failing check usually ends early.
		return verdict, explain(history, max(timeout-time.Since(start), time.Second))
	case property.VerdictUnknown:
		return verdict, property.Violated(property.KVLinearizable, "porcupine ran out of time (%v)", timeout)
	}
	return verdict, nil
}
