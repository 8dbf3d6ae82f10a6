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
		{CoordNoFenceBumpOnAcquire, "coord", "acquire grants a lease without raising the fence", []string{"C.ZombieRejection", "C.MutualExclusion", "C.FenceMonotonicity"}, "coord-zombie", 500},
		{CoordNoFenceCheck, "coord", "lease-gated operations skip the fence comparison", []string{"C.ZombieRejection", "C.MutualExclusion"}, "coord-zombie", 500},
		{CoordAcquireLiveLease, "coord", "acquire ignores an unexpired lease held by someone else", []string{"C.MutualExclusion"}, "coord", 500},
		{CoordAcquireTerminal, "coord", "acquire does not require the shard to be Active", []string{"C.TerminalUnleased", "C.TerminalIrreversibility"}, "coord", 500},
		{CoordCompleteKeepsLease, "coord", "complete leaves the lease in place", []string{"C.TerminalUnleased"}, "coord", 500},
		{CoordSplitTwoTxns, "coord", "split_replace marks the parent Split and writes the children in a second transaction", []string{"C.SplitAtomicity"}, "coord", 500},
		{CoordSplitGap, "coord", "split coverage is not validated", []string{"C.SplitCoverage"}, "coord", 500},
		{CoordUnparkDone, "coord", "unpark accepts a Done shard", []string{"C.TerminalIrreversibility"}, "coord", 500},
		{CoordCursorRegression, "coord", "checkpoint accepts a smaller last_key", []string{"C.CursorMonotonicity"}, "coord", 500},
		{CoordCursorOutOfBounds, "coord", "checkpoint skips the cursor bounds check", []string{"C.CursorBounds"}, "coord", 500},
		{CoordOpIDConflictIgnored, "coord", "the same op id with a different payload executes again", []string{"C.Idempotency"}, "coord", 500},
		{CoordNoTenantCheck, "coord", "lease validation skips the tenant comparison", []string{"C.TenantIsolation"}, "coord", 500},
		{CoordEtcdBlindWrite, "coord", "the etcd backend writes the shard record without comparing its mod revision", []string{"C.MutualExclusion", "C.FenceMonotonicity", "C.ZombieRejection"}, "coord", 500},
		{CoordRunReopen, "coord", "a terminal run accepts complete_run", []string{"C.RunTerminalIrreversibility"}, "coord", 500},
	} {
		register(b)
	}
}
