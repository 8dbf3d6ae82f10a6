package keymove

import (
	"encoding/json"
	"fmt"
)

// KeyState is one key's durable state.
type KeyState struct {
	State State `json:"s"`
	// CopiedRev is the mod revision of the source's data the current copy
	// was taken from (0: no copy). The fence compares it.
	CopiedRev int64 `json:"rev,omitempty"`
	// Forced marks a key verified by ForceSwapOnVerificationFailure after a
	// persistent mismatch.
	Forced bool `json:"forced,omitempty"`
	// Reason says why a key Failed ("not-found", "retries", "verify",
	// "races", "swap", "owner").
	Reason string `json:"why,omitempty"`
	// Budgets spent so far; they survive a crash so that a resumed run
	// cannot retry a key without bound.
	VerifyFailures int `json:"vf,omitempty"`
	Races          int `json:"races,omitempty"`
	Rollbacks      int `json:"rb,omitempty"`
}

// Checkpoint is the seed's {PlanId, UpdatedAtUtc, KeyStates,
// LastProcessedIndex}, plus a write sequence number and whether the plan
// has ended.
type Checkpoint struct {
	PlanID string `json:"plan"`
	Seq    uint64 `json:"seq"`
	// UpdatedAt is the writer's clock, in virtual nanoseconds.
	UpdatedAt int64      `json:"at"`
	Keys      []KeyState `json:"keys"`
	// LastProcessedIndex: every key before it is Done or Failed, so a
	// resumed run starts its work there.
	LastProcessedIndex int  `json:"last"`
	Complete           bool `json:"complete,omitempty"`
}

// Encode renders the checkpoint as stored (JSON: encoding/json writes
// struct fields in declaration order, so the bytes are deterministic).
func (c Checkpoint) Encode() []byte {
	b, err := json.Marshal(c)
	if err != nil {
		panic(err) // plain data: cannot fail
	}
	return b
}

// DecodeCheckpoint parses a stored checkpoint and checks its shape against
// the plan (nPlan moves).
func DecodeCheckpoint(b []byte, planID string, nPlan int) (Checkpoint, error) {
	var c Checkpoint
	if err := json.Unmarshal(b, &c); err != nil {
		return Checkpoint{}, fmt.Errorf("keymove: undecodable checkpoint: %v", err)
	}
	if c.PlanID != planID || len(c.Keys) != nPlan || c.LastProcessedIndex < 0 || c.LastProcessedIndex > nPlan {
		return Checkpoint{}, fmt.Errorf("keymove: checkpoint does not belong to plan %s", planID)
	}
	for _, k := range c.Keys {
		if k.State > Failed {
			return Checkpoint{}, fmt.Errorf("keymove: checkpoint holds unknown state %d", k.State)
		}
	}
	return c, nil
}

// Clone returns a deep copy.
func (c Checkpoint) Clone() Checkpoint {
	c.Keys = append([]KeyState(nil), c.Keys...)
	return c
}

// encodePlan renders the plan for its etcd record.
func encodePlan(p Plan) []byte {
	b, err := json.Marshal(p)
	if err != nil {
		panic(err)
	}
	return b
}
