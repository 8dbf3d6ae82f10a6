package coord

import (
	"fmt"
	"strings"
	"testing"
)

// fmtCoordError is CoordError.Error as it was written with fmt: the
// reference the piecewise builder must match byte for byte (messages reach
// traces and the answer checks).
func fmtCoordError(e CoordError) string {
	var b strings.Builder
	fmt.Fprintf(&b, "coord: %s: %s", e.Op, e.Code)
	switch e.Code {
	case CodeTenantMismatch:
		fmt.Fprintf(&b, " (caller tenant %s)", e.Tenant)
	case CodeShardTerminal, CodeShardNotParked:
		fmt.Fprintf(&b, " (%s %s is %s)", e.Shard.Run, e.Shard.Shard, e.ShardStatus)
	case CodeStaleFence:
		fmt.Fprintf(&b, " (lease epoch %d, shard epoch %d)", e.Presented, e.Current)
	case CodeLeaseExpired:
		fmt.Fprintf(&b, " (deadline %d)", e.At)
	case CodeAlreadyLeased, CodeClaimCooldown:
		fmt.Fprintf(&b, " (retry at %d)", e.At)
	case CodeRunState:
		fmt.Fprintf(&b, " (run is %s)", e.RunStatus)
	case CodeSplitInvalid:
		fmt.Fprintf(&b, " (%s)", e.Split)
	case CodeManifestInvalid:
		fmt.Fprintf(&b, " (%s)", e.Manifest)
	case CodeShardLimit:
		fmt.Fprintf(&b, " (%s)", e.Limit)
	case CodeShardNotFound, CodeSpawnCapExceeded, CodeIDCollision, CodeFenceExhausted:
		fmt.Fprintf(&b, " (%s %s)", e.Shard.Run, e.Shard.Shard)
	case CodeBackendTransient, CodeBackendCorruption:
		if e.Infra != nil {
			fmt.Fprintf(&b, ": %s", e.Infra.Error())
		}
	}
	if e.Detail != "" {
		fmt.Fprintf(&b, ": %s", e.Detail)
	}
	return b.String()
}

// TestCoordErrorTextMatchesFmt checks the message of every code (and some
// out of range), with every detail field set and with none, against the
// fmt-built reference.
func TestCoordErrorTextMatchesFmt(t *testing.T) {
	full := CoordError{
		Tenant: TenantID{1, 2, 0xfe}, Shard: ShardKey{Run: 0x2a, Shard: 0xbeef},
		ShardStatus: ShardParked, RunStatus: RunCancelled,
		Presented: 7, Current: 1 << 63, At: 12345,
		Split: SplitGap, Manifest: ManifestViolation(1),
		Limit:  ShardLimitViolation{Scope: LimitGlobal, Max: 4, Requested: 9},
		Detail: "a detail", Infra: &InfraError{Transient: true, Operation: "renew.read", Message: "timeout"},
	}
	for code := Code(0); code < codeEnd+2; code++ {
		for op := Operation(0); op < operationEnd+2; op++ {
			for _, e := range []CoordError{{}, full} {
				e.Op, e.Code = op, code
				if got, want := e.Error(), fmtCoordError(e); got != want {
					t.Fatalf("%d/%d: got %q, want %q", op, code, got, want)
				}
			}
		}
	}
}
