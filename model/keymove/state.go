package keymove

import "fmt"

// State is a key's place in the seed's state machine:
// Planned -> Copying -> Copied -> Verifying -> Verified -> Swapping -> Done,
// or Failed.
type State uint8

// The states, in the seed's order.
const (
	Planned State = iota
	Copying
	Copied
	Verifying
	Verified
	Swapping
	Done
	Failed
)

var stateNames = [...]string{"Planned", "Copying", "Copied", "Verifying", "Verified", "Swapping", "Done", "Failed"}

// String names the state as the seed does.
func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// Terminal reports whether s is Done or Failed.
func (s State) Terminal() bool { return s == Done || s == Failed }

// transitions lists every legal move of the state machine. Besides the
// seed's happy path and failure paths it holds what the careful executor
// adds: a copy whose source moved (a racing client write, seen by Verifying
// or by the fence at Swapping) goes back to Copying; a swap batch that
// cannot land rolls back to Copied; and any key the shard map already
// assigns to its target is Done (a resumed run finds a swap it did not
// record).
var transitions = map[State][]State{
	Planned:   {Copying, Failed, Done},
	Copying:   {Copied, Failed, Done},
	Copied:    {Verifying, Copying, Failed, Done},
	Verifying: {Verified, Copying, Failed, Done},
	Verified:  {Swapping, Copying, Failed, Done},
	Swapping:  {Done, Copied, Copying, Failed},
}

// CanMove reports whether from -> to is a transition of the state machine.
// Staying in a state (a retry) is always allowed.
func CanMove(from, to State) bool {
	if from == to {
		return true
	}
	for _, s := range transitions[from] {
		if s == to {
			return true
		}
	}
	return false
}
