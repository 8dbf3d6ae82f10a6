package keymovecheck

import (
	"shardsim/property"
	"testing"

	"shardsim/model/keymove"
)

func TestGoodMovePassesEveryCheck(t *testing.T) {
	h := newHarness(t, false)
	h.shardPut("s1", "client", "d/a", "c0.1") // a client write before the copy
	h.goodMove(true)
	h.shardPut("s2", "client", "d/a", "c0.2")
	if v := h.d.Err(); v != nil {
		t.Fatal(v)
	}
	sum := keymove.Summary{PlanID: "p1", Total: 1, Done: 1, Complete: true}
	for _, v := range []*property.Violation{h.d.CheckNoLoss(), h.d.CheckCompletes(&sum)} {
		if v != nil {
			t.Fatal(v)
		}
	}
}

func TestSingleSwapCatchesASecondChange(t *testing.T) {
	h := newHarness(t, false)
	h.goodMove(true)
	h.setMap("a", "s1")
	wantViolation(t, h.d.Err(), property.KMSingleSwap)
}

func TestSingleSwapCatchesAnUnplannedKey(t *testing.T) {
	h := newHarness(t, false)
	h.setMap("b", "s2")
	wantViolation(t, h.d.Err(), property.KMSingleSwap)
}

func TestNoDualMappingCatchesAnUnfencedSource(t *testing.T) {
	h := newHarness(t, false)
	h.goodMove(true)
	h.shardPut("s1", "executor", "c/a", keymove.CtlOpen) // the source reopens after the swap
	wantViolation(t, h.d.Err(), property.KMNoDualMapping)
}

func TestNoDualMappingCatchesAMissingKey(t *testing.T) {
	h := newHarness(t, false)
	h.checkpoint(keymove.Verifying, 1, false)
	h.checkpoint(keymove.Verified, 1, false)
	h.shardPut("s1", "executor", "c/a", keymove.CtlMoved("p1"))
	h.setMap("a", "s2") // s2 holds nothing
	wantViolation(t, h.d.Err(), property.KMNoDualMapping)
}

func TestVerifiedBeforeSwapCatchesAnUnverifiedSwap(t *testing.T) {
	h := newHarness(t, false)
	rev := h.shards["s1"].Revision()
	h.shardPut("s2", "executor", "d/a", "v0-a")
	h.checkpoint(keymove.Copied, rev, false)
	h.checkpoint(keymove.Verified, rev, false) // no Verifying recorded
	h.shardPut("s1", "executor", "c/a", keymove.CtlMoved("p1"))
	h.setMap("a", "s2")
	wantViolation(t, h.d.Err(), property.KMVerifiedBeforeSwap)
}

func TestVerifiedBeforeSwapCatchesATornCopy(t *testing.T) {
	h := newHarness(t, false)
	h.checkpoint(keymove.Copying, 0, false)
	rev := h.shards["s1"].Revision()
	h.shardPut("s2", "executor", "d/a", "v0") // torn
	h.checkpoint(keymove.Copied, rev, false)
	h.checkpoint(keymove.Verifying, rev, false)
	h.checkpoint(keymove.Verified, rev, false)
	h.shardPut("s1", "executor", "c/a", keymove.CtlMoved("p1"))
	h.setMap("a", "s2")
	wantViolation(t, h.d.Err(), property.KMVerifiedBeforeSwap)
}

func TestVerifiedBeforeSwapAllowsAForcedSwapOnlyUnderForce(t *testing.T) {
	for _, force := range []bool{true, false} {
		h := newHarness(t, force)
		rev := h.shards["s1"].Revision()
		h.shardPut("s2", "executor", "d/a", "v0")
		h.checkpoint(keymove.Copied, rev, false)
		h.checkpoint(keymove.Verified, rev, true)
		h.shardPut("s1", "executor", "c/a", keymove.CtlMoved("p1"))
		h.setMap("a", "s2")
		if force && h.d.Err() != nil {
			t.Fatalf("force set: %v", h.d.Err())
		}
		if !force {
			wantViolation(t, h.d.Err(), property.KMVerifiedBeforeSwap)
		}
	}
}

func TestNoLossCatchesAWriteBetweenCopyAndSwap(t *testing.T) {
	h := newHarness(t, false)
	h.checkpoint(keymove.Copying, 0, false)
	rev := h.shards["s1"].Revision()
	h.shardPut("s2", "executor", "d/a", "v0-a")
	h.shardPut("s2", "executor", "c/a", keymove.CtlOpen)
	h.checkpoint(keymove.Copied, rev, false)
	h.checkpoint(keymove.Verifying, rev, false)
	h.checkpoint(keymove.Verified, rev, false)
	h.shardPut("s1", "client", "d/a", "c0.7") // after verification, before the fence
	h.shardPut("s1", "executor", "c/a", keymove.CtlMoved("p1"))
	h.setMap("a", "s2")
	if v := h.d.Err(); v != nil {
		t.Fatalf("step checks: %v", v)
	}
	wantViolation(t, h.d.CheckNoLoss(), property.KMNoLoss)
}

func TestCompletesCatchesAnUnfinishedPlan(t *testing.T) {
	h := newHarness(t, false)
	h.goodMove(false)
	wantViolation(t, h.d.CheckCompletes(nil), property.KMCompletes)
}

func TestCompletesCatchesDoneWithoutSwap(t *testing.T) {
	h := newHarness(t, false)
	h.goodMove(false)
	h.checkpoint(keymove.Done, 1, false)
	sum := keymove.Summary{Total: 1, Done: 1, Complete: true}
	wantViolation(t, h.d.CheckCompletes(&sum), property.KMCompletes)
}

func TestCompletesCatchesAWrongSummary(t *testing.T) {
	h := newHarness(t, false)
	h.goodMove(true)
	sum := keymove.Summary{Total: 1, Done: 0, Complete: true}
	wantViolation(t, h.d.CheckCompletes(&sum), property.KMCompletes)
	wantViolation(t, h.d.CheckCompletes(nil), property.KMCompletes)
}

// TestIdempotentCatchesASkippedSwap: the run recorded the key Done
// without swapping it (a checkpoint written before its step, then a
// crash). Re-running from the checkpoint before that swaps it: the ends
// differ.
func TestIdempotentCatchesASkippedSwap(t *testing.T) {
	h := newHarness(t, false)
	h.goodMove(false)
	h.checkpoint(keymove.Done, h.ck.Keys[0].CopiedRev, false)
	v := h.d.CheckIdempotent(Rerun{Config: keymove.Config{Options: keymove.DefaultOptions(), Keys: h.ks}})
	wantViolation(t, v, property.KMIdempotent)
}

func TestIdempotentPassesAGoodRun(t *testing.T) {
	h := newHarness(t, false)
	h.goodMove(true)
	if v := h.d.CheckIdempotent(Rerun{Config: keymove.Config{Options: keymove.DefaultOptions(), Keys: h.ks}}); v != nil {
		t.Fatal(v)
	}
}
