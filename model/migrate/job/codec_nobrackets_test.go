package job

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/keys"
)

// TestDecodeWithoutBracketsAgrees: on encoded records with random fields
// and brackets, and on those bytes cut short, with a byte changed, one
// inserted or one dropped, DecodeWithoutBrackets fails exactly when Decode
// fails (with the same message) and otherwise returns Decode's record with
// Brackets nil.
func TestDecodeWithoutBracketsAgrees(t *testing.T) {
	var decoded, failed int
	rapid.Check(t, func(t *rapid.T) {
		b := damage(t, randomJob(t).Encode())
		want, wantErr := Decode(b)
		got, gotErr := DecodeWithoutBrackets(b)
		if (wantErr == nil) != (gotErr == nil) || wantErr != nil && wantErr.Error() != gotErr.Error() {
			t.Fatalf("errors differ: Decode %v, DecodeWithoutBrackets %v", wantErr, gotErr)
		}
		if wantErr != nil {
			failed++
			return
		}
		decoded++
		want.Brackets = nil
		if !cmp.Equal(want, got) {
			t.Fatalf("records differ: %s", cmp.Diff(want, got))
		}
	})
	if decoded == 0 || failed == 0 {
		t.Fatalf("the rig decoded %d and failed %d records: both cases must occur", decoded, failed)
	}
}

// randomJob draws a record whose every field may be set, with up to a
// dozen brackets of random cursors.
func randomJob(t *rapid.T) SplitJob {
	u := func(name string) uint64 { return rapid.Uint64Range(0, 1<<40).Draw(t, name) }
	s := func(name string) string { return rapid.StringN(0, 6, -1).Draw(t, name) }
	j := SplitJob{ID: u("id"), SourceRouteID: u("src_route"), SourceGroup: rapid.IntRange(-2, 9).Draw(t, "src"),
		TargetGroup: rapid.IntRange(-2, 9).Draw(t, "tgt"), SplitKey: s("split"), SourceStart: s("start"), MovingEnd: s("end"),
		MovingRouteID: u("moving_route"), Phase: Phase(rapid.IntRange(0, int(Abandoned)+1).Draw(t, "phase")),
		SnapshotTS: hlc.TS(u("snap")), FenceTS: hlc.TS(u("fence")), CutoverVersion: u("cutover"), MaxImportedTS: hlc.TS(u("maxi")),
		Pass: rapid.Uint8().Draw(t, "pass"), StagedCleared: rapid.Bool().Draw(t, "staged_cleared"),
		SourceCleaned: rapid.Bool().Draw(t, "source_cleaned"), RetryPhase: Phase(rapid.IntRange(0, int(Abandoned)).Draw(t, "retry")),
		AbandonFromPhase: Phase(rapid.IntRange(0, int(Abandoned)).Draw(t, "from")), LastError: s("error"),
		Retries: rapid.Uint32().Draw(t, "retries"), CreatedAtMs: rapid.Int64().Draw(t, "created"), TerminalAtMs: rapid.Int64().Draw(t, "terminal"),
		Writes: u("writes"), TrackerArmed: rapid.Bool().Draw(t, "armed"), MinReadTS: hlc.TS(u("min_read")), FenceVersion: u("fence_version"),
		DeltaFloor: hlc.TS(u("delta_floor")), ReadFence: FenceState(rapid.IntRange(0, int(FenceClearing)+1).Draw(t, "read_fence")),
		ExpectedCutover: u("expected"), CutoverFloor: hlc.TS(u("cutover_floor")), Disarmed: rapid.Bool().Draw(t, "disarmed")}
	for range rapid.IntRange(0, 12).Draw(t, "brackets") {
		j.Brackets = append(j.Brackets, Bracket{Family: keys.Family(rapid.IntRange(0, 9).Draw(t, "family")),
			Cursor: rapid.SliceOfN(rapid.Byte(), 0, 8).Draw(t, "cursor"), Done: rapid.Bool().Draw(t, "done"), Seq: u("seq")})
	}
	return j
}
