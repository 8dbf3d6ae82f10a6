package coord

import (
	"fmt"
	"strings"
)

// EventKind is the kind of a state-transition event. Events are inert data
// returned alongside an operation's result; the coordinator never acts on
// them.
type EventKind uint8

const (
	EventShardAcquired        EventKind = iota // Shard, Worker, Fence, Deadline
	EventShardCheckpointed                     // Shard, LastKey
	EventShardResidualCreated                  // Shard (the parent), Residual
	EventShardUnparked                         // Shard, Fence (the new epoch)
	EventShardLeaseRenewed                     // Shard, Deadline (the new one)
	EventShardCompleted                        // Shard
	EventShardParked                           // Shard, Reason
	EventShardSplit                            // Shard (the parent), Children
	EventRunCreated                            // -
	EventRunActivated                          // ShardCount
	EventRunCompleted                          // -
	EventRunFailed                             // -
	EventRunCancelled                          // -
	eventKindEnd
)

var eventKindNames = [eventKindEnd]string{
	"ShardAcquired", "ShardCheckpointed", "ShardResidualCreated", "ShardUnparked",
	"ShardLeaseRenewed", "ShardCompleted", "ShardParked", "ShardSplit",
	"RunCreated", "RunActivated", "RunCompleted", "RunFailed", "RunCancelled",
}

// String names the kind.
func (k EventKind) String() string {
	if k < eventKindEnd {
		return eventKindNames[k]
	}
	return "event-kind(?)"
}

// IsShardEvent reports whether k concerns a shard.
func (k EventKind) IsShardEvent() bool { return k <= EventShardSplit }

// IsRunEvent reports whether k concerns a run.
func (k EventKind) IsRunEvent() bool { return k >= EventRunCreated && k < eventKindEnd }

// IsTerminal reports whether k moves a shard or run into a terminal state.
func (k EventKind) IsTerminal() bool {
	switch k {
	case EventShardCompleted, EventShardParked, EventShardSplit,
		EventRunCompleted, EventRunFailed, EventRunCancelled:
		return true
	}
	return false
}

// allEventKinds returns every event kind, in discriminant order.
func allEventKinds() []EventKind {
	out := make([]EventKind, eventKindEnd)
	for i := range out {
		out[i] = EventKind(i)
	}
	return out
}

// RedactedKey holds a key whose bytes must not reach logs or traces:
// every fmt verb prints only its length. Bytes gives checkers the key.
type RedactedKey struct{ b []byte }

// newRedactedKey wraps a copy of key.
func newRedactedKey(key []byte) RedactedKey { return RedactedKey{b: cloneBytes(key)} }

// Bytes returns the key.
func (k RedactedKey) Bytes() []byte { return k.b }

// Format prints the key's length, never its bytes.
func (k RedactedKey) Format(f fmt.State, _ rune) {
	if len(k.b) == 0 {
		fmt.Fprint(f, "<none>")
		return
	}
	fmt.Fprintf(f, "<%d bytes>", len(k.b))
}

// Event is one state transition: the envelope (tenant, run, logical time,
// kind) plus the fields its kind uses (see EventKind); unused fields are
// zero.
type Event struct {
	Tenant TenantID
	Run    RunID
	At     LogicalTime
	Kind   EventKind

	Shard      ShardID
	Worker     WorkerID
	Fence      FenceEpoch
	Deadline   LogicalTime
	LastKey    RedactedKey
	Reason     ParkReason
	Residual   ShardID
	Children   []ShardID
	ShardCount int
}

// String renders the event deterministically, for traces. It never
// prints key bytes.
func (e Event) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s@%d", e.Kind, e.Run, e.At)
	switch e.Kind {
	case EventShardAcquired:
		fmt.Fprintf(&b, " %s by %s fence=%d until=%d", e.Shard, e.Worker, e.Fence, e.Deadline)
	case EventShardCheckpointed:
		fmt.Fprintf(&b, " %s last_key=%v", e.Shard, e.LastKey)
	case EventShardResidualCreated:
		fmt.Fprintf(&b, " %s residual=%s", e.Shard, e.Residual)
	case EventShardUnparked:
		fmt.Fprintf(&b, " %s fence=%d", e.Shard, e.Fence)
	case EventShardLeaseRenewed:
		fmt.Fprintf(&b, " %s until=%d", e.Shard, e.Deadline)
	case EventShardCompleted:
		fmt.Fprintf(&b, " %s", e.Shard)
	case EventShardParked:
		fmt.Fprintf(&b, " %s reason=%s", e.Shard, e.Reason)
	case EventShardSplit:
		fmt.Fprintf(&b, " %s children=%v", e.Shard, e.Children)
	case EventRunActivated:
		fmt.Fprintf(&b, " shards=%d", e.ShardCount)
	}
	return b.String()
}

// shardEvent starts an event about rec at now.
func shardEvent(rec *ShardRecord, now LogicalTime, kind EventKind) Event {
	return Event{Tenant: rec.Tenant, Run: rec.Run, At: now, Kind: kind, Shard: rec.Shard}
}

// runEvent starts an event about run at now.
func runEvent(rec *RunRecord, now LogicalTime, kind EventKind) Event {
	return Event{Tenant: rec.Tenant, Run: rec.Run, At: now, Kind: kind}
}
