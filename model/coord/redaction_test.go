package coord

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// TestErrorRedaction drives every error path that concerns another
// tenant, another worker or a payload hash and checks that no rendering of
// the error reveals them.
func TestErrorRedaction(t *testing.T) {
	forBackends(t, func(t *testing.T, b backend) {
		c := b.make(t, DefaultConfig())
		secretKey := "SECRETKEY-0001"
		for _, tn := range []TenantID{tenantA, tenantB} {
			if _, _, err := createRunWithShards(c, 1, tn, run1, RunConfig{LeaseDuration: 100},
				[]InitialShard{{1, spec("", "")}, {2, spec("", "")}}, 1); err != nil {
				t.Fatal(err)
			}
		}
		resB, _, err := c.AcquireAndRestore(1, tenantB, ShardKey{run1, 1}, w1)
		wantCode(t, err, codeNone)
		leaseB := resB.Lease
		resA, _, err := c.AcquireAndRestore(1, tenantA, ShardKey{run1, 1}, w1)
		wantCode(t, err, codeNone)
		leaseA := resA.Lease
		_, _, err = c.Checkpoint(1, tenantA, leaseA, cur(secretKey), 5)
		wantCode(t, err, codeNone)

		otherOwner := leaseA
		otherOwner.Owner = w2
		var errs []error
		collect := func(_ any, _ []Event, err error) {
			t.Helper()
			if err == nil {
				t.Fatal("expected an error")
			}
			errs = append(errs, err)
		}
		collect(c.Checkpoint(2, tenantA, leaseB, cur("x"), 6))                // foreign lease
		collect(c.Renew(2, tenantA, leaseB))                                  // foreign lease
		collect(c.SplitReplace(2, tenantA, leaseB, SplitReplacePlan{}, 6))    // foreign lease
		collect(c.AcquireAndRestore(2, tenantA, ShardKey{run1, 1}, w2))       // already leased by w1
		collect(c.Checkpoint(2, tenantA, otherOwner, cur("y"), 7))            // owner mismatch
		collect(c.Checkpoint(2, tenantA, leaseA, cur(secretKey+"-other"), 5)) // op id conflict
		collect(c.Checkpoint(2, tenantA, leaseA, cur("A"), 8))                // regression
		collect(c.Complete(2, tenantA, leaseA, cur("A"), 9))                  // regression
		collect(c.UnparkShard(2, tenantA, ShardKey{run1, 1}, 10))             // not parked
		if _, _, err := c.FailRun(2, tenantA, run1, 11); err != nil {
			t.Fatal(err)
		}
		collect(c.UnparkShard(2, tenantA, ShardKey{run1, 2}, 12)) // the run ended

		firstHash := hashCheckpoint(cur(secretKey))
		otherHash := hashCheckpoint(cur(secretKey + "-other"))
		forbidden := []string{
			tenantB.String(), tenantB.String()[:8],
			w1.String(), strconv.FormatUint(uint64(w1), 10), strconv.FormatUint(uint64(w1), 16),
			secretKey,
		}
		for _, h := range []uint64{firstHash, otherHash} {
			forbidden = append(forbidden, strconv.FormatUint(h, 10), strconv.FormatUint(h, 16), fmt.Sprintf("%#x", h))
		}
		for _, err := range errs {
			for _, form := range []string{err.Error(), fmt.Sprintf("%v", err), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err)} {
				for _, f := range forbidden {
					if strings.Contains(form, f) {
						t.Errorf("error %q reveals %q", form, f)
					}
				}
			}
			if ce := coordErrorOf(err); ce.Tenant != (TenantID{}) && ce.Tenant != tenantA {
				t.Errorf("error carries another tenant: %+v", ce)
			}
		}
	})
}

func coordErrorOf(err error) CoordError {
	switch e := err.(type) {
	case *AcquireError:
		return e.CoordError
	case *RenewError:
		return e.CoordError
	case *CheckpointError:
		return e.CoordError
	case *CompleteError:
		return e.CoordError
	case *ParkError:
		return e.CoordError
	case *SplitError:
		return e.CoordError
	case *UnparkError:
		return e.CoordError
	case *RunError:
		return e.CoordError
	case *ClaimError:
		return e.CoordError
	}
	return CoordError{}
}

func TestEventKeyRedaction(t *testing.T) {
	ev := Event{Kind: EventShardCheckpointed, LastKey: newRedactedKey([]byte("SECRETKEY"))}
	for _, form := range []string{ev.String(), fmt.Sprintf("%v", ev), fmt.Sprintf("%+v", ev), fmt.Sprintf("%#v", ev), fmt.Sprintf("%s", ev.LastKey), fmt.Sprintf("%x", ev.LastKey)} {
		if strings.Contains(form, "SECRETKEY") || strings.Contains(form, fmt.Sprintf("%x", "SECRETKEY")) {
			t.Errorf("event rendering reveals the key: %s", form)
		}
	}
	if string(ev.LastKey.Bytes()) != "SECRETKEY" {
		t.Fatal("checkers lost the key")
	}
}

func TestErrorCodesPerOperation(t *testing.T) {
	// Every code is allowed somewhere, and a disallowed one panics.
	used := map[Code]bool{}
	for op := Operation(0); op < operationEnd; op++ {
		for _, c := range allowedCodes(op) {
			used[c] = true
		}
	}
	for c := codeNone + 1; c < codeEnd; c++ {
		if !used[c] {
			t.Errorf("code %q is allowed for no operation", c)
		}
	}
	defer func() {
		if recover() == nil {
			t.Fatal("newError accepted a code its operation cannot return")
		}
	}()
	_ = newError(OpRenew, CoordError{Code: CodeSplitInvalid})
}

func TestCodeOf(t *testing.T) {
	err := newError(OpCheckpoint, CoordError{Code: CodeStaleFence})
	if CodeOf(err) != CodeStaleFence || CodeOf(fmt.Errorf("wrapped: %w", err)) != CodeStaleFence || CodeOf(nil) != codeNone {
		t.Fatal("CodeOf")
	}
	infra := BackendError(OpAcquire, &InfraError{Transient: true, Operation: "acquire.load_shard", Message: "timeout"})
	if CodeOf(infra) != CodeBackendTransient || !strings.Contains(infra.Error(), "acquire.load_shard") {
		t.Fatalf("backend error %v", infra)
	}
}
