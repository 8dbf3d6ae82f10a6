package job

import (
	"fmt"

	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/keys"
	"shardsim/model/migrate/wire"
)

const (
	codecTag     = 'J'
	codecVersion = 2
	// presizeMax bounds the brackets Decode allocates room for up front (a
	// malformed count is only caught as the brackets run out).
	presizeMax = 64

	// encodedFixedSize is about the bytes of a record's fields other than
	// its strings and brackets: the header and 32 fields and string
	// length prefixes of a byte each when small, and room for the six
	// timestamps (six bytes each in a run) and the times in ms to be
	// longer. Records of migrate seeds 1-30 have 34 to 66 such bytes. A
	// guess too small costs a buffer growth, not a wrong record; one too
	// large a bigger allocation size class for every record (128 made the
	// buffer of an average 201-byte record 331 bytes; 72 makes it 256).
	encodedFixedSize = 72
	// encodedBracketSize is the same for a bracket without its cursor:
	// family, cursor length and flag of a byte each, and the sequence
	// number (one or two bytes in a run).
	encodedBracketSize = 6
)

// Encode returns the stored form.
func (j SplitJob) Encode() []byte {
	w := wire.NewWriterSize(codecTag, codecVersion, j.sizeHint()) // written in one buffer
	w.Uint(j.ID)
	w.Uint(j.SourceRouteID)
	w.Int(int64(j.SourceGroup))
	w.Int(int64(j.TargetGroup))
	w.String(j.SplitKey)
	w.String(j.SourceStart)
	w.String(j.MovingEnd)
	w.Uint(j.MovingRouteID)
	w.Uint(uint64(j.Phase))
	w.Uint(uint64(j.SnapshotTS))
	w.Uint(uint64(j.FenceTS))
	w.Uint(j.CutoverVersion)
	w.Uint(uint64(j.MaxImportedTS))
	w.Uint(uint64(j.Pass))
	w.Uint(uint64(len(j.Brackets)))
	for _, b := range j.Brackets {
		w.Uint(uint64(b.Family))
		w.Bytes(b.Cursor)
		w.Bool(b.Done)
		w.Uint(b.Seq)
	}
	w.Bool(j.StagedCleared)
	w.Bool(j.SourceCleaned)
	w.Uint(uint64(j.RetryPhase))
	w.Uint(uint64(j.AbandonFromPhase))
	w.String(j.LastError)
	w.Uint(uint64(j.Retries))
	w.Int(j.CreatedAtMs)
	w.Int(j.TerminalAtMs)
	w.Uint(j.Writes)
	w.Bool(j.TrackerArmed)
	w.Uint(uint64(j.MinReadTS))
	w.Uint(j.FenceVersion)
	w.Uint(uint64(j.DeltaFloor))
	w.Uint(uint64(j.ReadFence))
	w.Uint(j.ExpectedCutover)
	w.Uint(uint64(j.CutoverFloor))
	w.Bool(j.Disarmed)
	return w.Done()
}

// sizeHint is about the size of j's record, so that Encode writes it in
// one buffer of a size class close to it.
func (j SplitJob) sizeHint() int {
	size := encodedFixedSize + len(j.SplitKey) + len(j.SourceStart) + len(j.MovingEnd) + len(j.LastError)
	for _, b := range j.Brackets {
		size += encodedBracketSize + len(b.Cursor)
	}
	return size
}

// Decode parses a stored job.
func Decode(b []byte) (SplitJob, error) { return decode(b, true) }

// DecodeWithoutBrackets parses a stored job as Decode does, and fails
// exactly when Decode fails, but leaves Brackets nil: the brackets' bytes
// are read and checked as Decode reads them, none is kept. For a reader
// that never looks at copy progress (the migration checkers see every job
// record the metadata store applies): the brackets and their cursors were
// most of what decoding a record allocated.
func DecodeWithoutBrackets(b []byte) (SplitJob, error) { return decode(b, false) }

// decode is Decode, keeping the brackets or not.
func decode(b []byte, brackets bool) (SplitJob, error) {
	r := wire.MakeReader(b, codecTag, codecVersion)
	j := SplitJob{ID: r.Uint(), SourceRouteID: r.Uint(), SourceGroup: int(r.Int()), TargetGroup: int(r.Int()),
		SplitKey: r.String(), SourceStart: r.String(), MovingEnd: r.String(), MovingRouteID: r.Uint()}
	j.Phase = Phase(r.Uint())
	j.SnapshotTS = hlc.TS(r.Uint())
	j.FenceTS = hlc.TS(r.Uint())
	j.CutoverVersion = r.Uint()
	j.MaxImportedTS = hlc.TS(r.Uint())
	j.Pass = uint8(r.Uint())
	n := r.Count()
	if brackets {
		if n > 0 && n <= presizeMax {
			j.Brackets = make([]Bracket, 0, n)
		}
		for i := 0; i < n; i++ {
			j.Brackets = append(j.Brackets, Bracket{Family: keys.Family(r.Uint()), Cursor: r.BytesInPlace(), Done: r.Bool(), Seq: r.Uint()})
		}
		ownCursors(j.Brackets) // off b, all in one allocation
	} else {
		for i := 0; i < n; i++ { // the reads above, in their order (so the same errors), kept nowhere
			r.Uint()
			r.BytesInPlace()
			r.Bool()
			r.Uint()
		}
	}
	j.StagedCleared = r.Bool()
	j.SourceCleaned = r.Bool()
	j.RetryPhase = Phase(r.Uint())
	j.AbandonFromPhase = Phase(r.Uint())
	j.LastError = r.String()
	j.Retries = uint32(r.Uint())
	j.CreatedAtMs = r.Int()
	j.TerminalAtMs = r.Int()
	j.Writes = r.Uint()
	j.TrackerArmed = r.Bool()
	j.MinReadTS = hlc.TS(r.Uint())
	j.FenceVersion = r.Uint()
	j.DeltaFloor = hlc.TS(r.Uint())
	j.ReadFence = FenceState(r.Uint())
	j.ExpectedCutover = r.Uint()
	j.CutoverFloor = hlc.TS(r.Uint())
	j.Disarmed = r.Bool()
	if err := r.Close(); err != nil {
		return SplitJob{}, fmt.Errorf("job: decode: %w", err)
	}
	if j.ReadFence > FenceClearing {
		return SplitJob{}, fmt.Errorf("job: decode: %w: read fence state %d", wire.ErrMalformed, j.ReadFence)
	}
	if !j.Phase.valid() {
		return SplitJob{}, fmt.Errorf("job: decode: %w: phase %d", wire.ErrMalformed, j.Phase)
	}
	return j, nil
}
