package bugs

import "shardsim/property"

// Names of the delta and claim collection bugs (seed 001). Each is a draft
// of the design that a review round of the thread (or a later review of its
// implementation) found wrong; the description in the registry names the
// round. Budgets are what `simrun sweep -scenario lists -seeds 1-300`
// measured (catch rate p), with margin: (1-p)^B < 1e-6. Measured p:
// no-truncation-check 0.21, delete-meta-at-zero 0.053, shared-commit-ts
// 0.23, pop-no-claim 0.90, nul-separator 0.99, push-keeps-stale-claim 1.0,
// compact-deletes-members 0.037, exec-stale-snapshot 0.78,
// exec-keeps-deltas 0.96, no-boundary-read 0.91, range-torn-snapshot 0.78,
// pop-retry-ambiguous 0.25 (150 seeds), push-one-end 0.54.
const (
	ListdeltaNoTruncationCheck    = "listdelta.no-truncation-check"
	ListdeltaDeleteMetaAtZero     = "listdelta.delete-meta-at-zero"
	ListdeltaSharedCommitTS       = "listdelta.shared-commit-ts"
	ListdeltaPopNoClaim           = "listdelta.pop-no-claim"
	ListdeltaNulSeparator         = "listdelta.nul-separator"
	ListdeltaPushKeepsStaleClaim  = "listdelta.push-keeps-stale-claim"
	ListdeltaCompactDeletesMember = "listdelta.compact-deletes-members"
	ListdeltaExecStaleSnapshot    = "listdelta.exec-stale-snapshot"
	ListdeltaExecKeepsDeltas      = "listdelta.exec-keeps-deltas"
	ListdeltaNoBoundaryRead       = "listdelta.no-boundary-read"
	ListdeltaRangeTornSnapshot    = "listdelta.range-torn-snapshot"
	ListdeltaPopRetryAmbiguous    = "listdelta.pop-retry-ambiguous"
	ListdeltaPushOneEnd           = "listdelta.push-one-end"
)

func init() {
	for _, b := range []Bug{
		{ListdeltaNoTruncationCheck, "listdelta", "metadata resolution sums a truncated delta scan as if it were complete: wrong length and head, and pushes land on taken positions [BUGS.md; seed 001 round 1 (gemini: 'maxDeltaScanLimit overflow ... must return an error') and round 4 (truncation check missing in resolveListMeta)]",
			[]property.Name{property.LMetaConsistent, property.LLinearizable, property.LNoLostItem}, "lists", 150},
		{ListdeltaDeleteMetaAtZero, "listdelta", "compaction deletes the base metadata when a list empties: positions restart at zero under pushes that resolved the old metadata [BUGS.md; seed 001 round 4 (gemini: 'update the baseMeta to reflect Len=0 rather than deleting') and round 8 (lazy tombstone cleanup races writers)]",
			[]property.Name{property.LNoLostItem, property.LMetaConsistent, property.LLinearizable}, "lists", 500},
		{ListdeltaSharedCommitTS, "listdelta", "the delta key carries the writer's own clock instead of the commit timestamp the group leader issues: two writers produce the same delta key and the later one overwrites the earlier delta [BUGS.md; seed 001 round 5 ('commitTS must be globally unique per transaction') and round 9 (HLC above every commitTS across leader changes)]",
			[]property.Name{property.LMetaConsistent, property.LLinearizable, property.LNoLostItem, property.LCountConsistent}, "lists", 150},
		{ListdeltaPopNoClaim, "listdelta", "a pop takes the head (or tail) item without writing a claim row: two concurrent pops return the same item [BUGS.md; seed 001, the claim keys of the first draft ('CAS-based claim keys for item removal')]",
			[]property.Name{property.LNoDoublePop, property.LNoLostItem, property.LLinearizable, property.LMetaConsistent}, "lists", 25},
		{ListdeltaNulSeparator, "listdelta", "delta, claim and item keys separate the user key from their suffix with a NUL byte: a binary list key holding a NUL shares another key's prefix, and one list's resolution sums the other's deltas [seed 001 round 1 (gemini: prefix collision, 'add a separator') and round 4 (gemini: 'a null byte is insufficient for binary-safe keys', length prefix)]",
			[]property.Name{property.LMetaConsistent, property.LLinearizable, property.LCountConsistent}, "lists", 25},
		{ListdeltaPushKeepsStaleClaim, "listdelta", "a push that reuses a position a pop claimed leaves the stale claim row: the new item counts as popped [seed 001 round 3 (gemini: 'PUSH should delete the claim key for the sequence being occupied')]",
			[]property.Name{property.LMetaConsistent, property.LLinearizable, property.LNoLostItem}, "lists", 25},
		{ListdeltaCompactDeletesMember, "listdelta", "when a hash, set or sorted set's folded count reaches zero, the compactor deletes the members it sees, though unfolded deltas may still count them [seed 001 round 6 (gemini: 'bulk deletion of data keys for Hash, Set, and ZSet during background compaction introduces a race')]",
			[]property.Name{property.LCountConsistent}, "lists", 500},
		{ListdeltaExecStaleSnapshot, "listdelta", "a MULTI/EXEC resolves the base metadata at its snapshot but lists the deltas to delete, and takes the timestamp its conflicts are judged from, at the latest timestamp, with no read-set guard on the delta range: a standalone push's delta is deleted without being folded [seed 001, the last commits: Jepsen G0-realtime, 'maxLatestCommitTS only checked base metadata keys']",
			[]property.Name{property.LMetaConsistent, property.LNoLostItem, property.LLinearizable, property.LNoDoublePop}, "lists", 25},
		{ListdeltaExecKeepsDeltas, "listdelta", "a MULTI/EXEC writes the aggregated base metadata but leaves the deltas it folded in place: they count twice [seed 001, claude Data Loss review: 'listDeltaKeys ignores the scan error: orphaned deltas double-count']",
			[]property.Name{property.LMetaConsistent, property.LLinearizable, property.LNoLostItem}, "lists", 25},
		{ListdeltaNoBoundaryRead, "listdelta", "pushes and pops register no boundary row in their read set (the seed's final flows): a concurrent RPUSH and RPOP both commit, the pushed item falls outside the list and the popped one stays in it [this project's finding on seed 001's final RPUSH/RPOP flows]",
			[]property.Name{property.LMetaConsistent, property.LLinearizable, property.LNoLostItem, property.LNoDoublePop}, "lists", 25},
		{ListdeltaRangeTornSnapshot, "listdelta", "LRANGE and LINDEX resolve the metadata at their snapshot but read the items and claims at the latest timestamp [seed 001, claude Consistency review: 'both reads of resolveListMeta must use one MVCC snapshot']",
			[]property.Name{property.LLinearizable, property.LMetaConsistent}, "lists", 25},
		{ListdeltaPopRetryAmbiguous, "listdelta", "a pop whose commit answer was lost is retried as a new pop: the first may have taken an item no client ever receives [client retry of a non-idempotent command; the seed's Jepsen runs retry only reads]",
			[]property.Name{property.LNoLostItem, property.LLinearizable}, "lists", 150},
		{ListdeltaPushOneEnd, "listdelta", "a push, or an LSET, registers only the boundary rows of one end: an RPUSH and an LPUSH (or a pop at the other end) commit side by side and each answers a length that leaves out the other, and an LSET of a negative index writes a position an RPUSH just moved [this project's finding on seed 001's final flows: deltas never conflict, so the answered length is the snapshot's]",
			[]property.Name{property.LLinearizable, property.LMetaConsistent}, "lists", 50},
	} {
		register(b)
	}
}
