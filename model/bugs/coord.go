package bugs

// Names of the shard coordination bugs (seed 004).
const (
	CoordNoFenceBumpOnAcquire = "coord.no-fence-bump-on-acquire"
	CoordNoFenceCheck         = "coord.no-fence-check"
	CoordAcquireLiveLease     = "coord.acquire-live-lease"
	CoordAcquireTerminal      = "coord.acquire-terminal"
	CoordCompleteKeepsLease   = "coord.complete-keeps-lease"
	CoordSplitTwoTxns         = "coord.split-two-txns"
	CoordSplitGap             = "coord.split-gap"
	CoordUnparkDone           = "coord.unpark-done"
	CoordCursorRegression     = "coord.cursor-regression"
	CoordCursorOutOfBounds    = "coord.cursor-out-of-bounds"
	CoordOpIDConflictIgnored  = "coord.opid-conflict-ignored"
	CoordNoTenantCheck        = "coord.no-tenant-check"
	CoordEtcdBlindWrite       = "coord.etcd-blind-write"
	CoordRunReopen            = "coord.run-reopen"
)

func init() {
	for _, b := range []Bug{
		{CoordNoFenceBumpOnAcquire, "coord", "acquire grants a lease without raising the fence", []string{"C.FenceMonotonicity", "C.ZombieRejection", "C.MutualExclusion"}, "coord-zombie", 20},
		{CoordNoFenceCheck, "coord", "lease-gated operations skip the fence comparison", []string{"C.ZombieRejection", "C.MutualExclusion"}, "coord-zombie", 150},
		{CoordAcquireLiveLease, "coord", "acquire ignores an unexpired lease held by someone else", []string{"C.MutualExclusion"}, "coord", 60},
		{CoordAcquireTerminal, "coord", "acquire does not require the shard to be Active", []string{"C.TerminalUnleased", "C.TerminalIrreversibility"}, "coord", 40},
		{CoordCompleteKeepsLease, "coord", "complete leaves the lease in place", []string{"C.TerminalUnleased"}, "coord", 20},
		{CoordSplitTwoTxns, "coord", "split_replace marks the parent Split and writes the children in a second transaction", []string{"C.SplitAtomicity"}, "coord", 40},
		{CoordSplitGap, "coord", "split coverage is not validated", []string{"C.SplitCoverage"}, "coord", 300},
		{CoordUnparkDone, "coord", "unpark accepts a Done shard", []string{"C.TerminalIrreversibility"}, "coord", 250},
		{CoordCursorRegression, "coord", "checkpoint accepts a smaller last_key", []string{"C.CursorMonotonicity"}, "coord", 150},
		{CoordCursorOutOfBounds, "coord", "checkpoint skips the cursor bounds check", []string{"C.CursorBounds"}, "coord", 120},
		{CoordOpIDConflictIgnored, "coord", "the same op id with a different payload executes again", []string{"C.Idempotency"}, "coord", 150},
		{CoordNoTenantCheck, "coord", "lease validation skips the tenant comparison", []string{"C.TenantIsolation"}, "coord", 60},
		{CoordEtcdBlindWrite, "coord", "the etcd backend writes the shard record without comparing its mod revision", []string{"C.MutualExclusion", "C.FenceMonotonicity", "C.ZombieRejection", "C.CursorMonotonicity", "C.TerminalIrreversibility", "C.SplitAtomicity"}, "coord", 60},
		{CoordRunReopen, "coord", "a terminal run accepts complete_run", []string{"C.RunTerminalIrreversibility"}, "coord", 300},
	} {
		register(b)
	}
}
