package coord

import "shardsim/model/bugs"

// checkClaimCooldown decides whether a worker whose last successful claim
// (in this tenant) was at last may claim again at now. With a zero
// cooldown, or no earlier claim, it always may.
func checkClaimCooldown(last Opt[LogicalTime], now LogicalTime, cooldown LogicalDuration) (CoordError, bool) {
	return checkClaimCooldownUnder(last, now, cooldown, bugs.None)
}

// checkClaimCooldownUnder is checkClaimCooldown with bugs: bug
// coord.claim-ignores-cooldown skips the check.
func checkClaimCooldownUnder(last Opt[LogicalTime], now LogicalTime, cooldown LogicalDuration, b bugs.Set) (CoordError, bool) {
	if cooldown == 0 || !last.Set || b.Has(bugs.CoordClaimIgnoresCooldown) {
		return CoordError{}, true
	}
	if retry := last.Val.Add(cooldown); now < retry {
		return CoordError{Code: CodeClaimCooldown, At: retry}, false
	}
	return CoordError{}, true
}

// claimable reports whether claim_next_available may take r at now: it is
// available (Active, no live lease). Bug coord.claim-skips-expired tests
// only that a lease is set, so a shard whose holder died is never claimed.
func claimable(r *ShardRecord, now LogicalTime, b bugs.Set) bool {
	if b.Has(bugs.CoordClaimSkipsExpired) {
		return r.Status == ShardActive && !r.Lease.Set
	}
	return r.Available(now)
}
