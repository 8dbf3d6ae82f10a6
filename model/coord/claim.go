package coord

// checkClaimCooldown decides whether a worker whose last successful claim
// (in this tenant) was at last may claim again at now. With a zero
// cooldown, or no earlier claim, it always may.
func checkClaimCooldown(last Opt[LogicalTime], now LogicalTime, cooldown LogicalDuration) (CoordError, bool) {
	if cooldown == 0 || !last.Set {
		return CoordError{}, true
	}
	if retry := last.Val.Add(cooldown); now < retry {
		return CoordError{Code: CodeClaimCooldown, At: retry}, false
	}
	return CoordError{}, true
}
