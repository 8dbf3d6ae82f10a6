package shrink

import (
	"slices"
)

// passes run in this order each round: the cheap, large cuts first. The
// costly ones replay candidates that are not themselves smaller, so they
// run only once the cheap ones have stopped finding anything.
var passes = []struct {
	name   string
	run    func(*shrinker)
	costly bool
}{
	{"truncate", truncate, false},
	{"zero", zeroSpans, false},
	{"delete", deleteSpans, false},
	{"slide-delete", slideDelete, false},
	{"minimise", minimiseDraws, false},
	{"move-earlier", moveEarlier, true},
	{"lower-raise", lowerRaise, true},
	{"lower-delete", lowerAndDelete, false},
	{"tail", minimiseTail, false},
	{"lower-pair", lowerPairs, false},
	{"sort", sortRuns, false},
	{"redistribute", redistribute, false},
}

// edited returns a copy of the best draws with fn applied.
func (s *shrinker) edited(fn func([]Draw) []Draw) []Draw {
	return fn(slices.Clone(s.best))
}

// truncate tries short prefixes of the stream: the rest then reads as zeros.
func truncate(s *shrinker) {
	for _, frac := range []int{0, 1, 2, 4, 8, 12} {
		k := len(s.best) * frac / 16
		if k >= len(s.best) {
			break
		}
		if s.try(s.best[:k]) {
			return
		}
	}
}

// spanSizes returns the chunk sizes tried by the span passes, largest first.
func spanSizes(n int) []int {
	var out []int
	for size := 64; size >= 1; size /= 2 {
		if size <= n {
			out = append(out, size)
		}
	}
	return out
}

// deleteSpans removes aligned chunks of draws, from the end backwards (so a
// success leaves the chunks still to try where they were), halving the
// chunk size down to single draws.
func deleteSpans(s *shrinker) {
	for _, size := range spanSizes(len(s.best)) {
		for i := (len(s.best) - 1) / size * size; i >= 0 && !s.exhausted(); i -= size {
			if i >= len(s.best) {
				continue
			}
			end := min(i+size, len(s.best))
			s.try(s.edited(func(d []Draw) []Draw { return append(d[:i], d[end:]...) }))
		}
	}
}

// zeroSpans sets aligned chunks of draws to zero, largest chunks first.
func zeroSpans(s *shrinker) {
	for _, size := range spanSizes(len(s.best)) {
		for i := 0; i < len(s.best) && !s.exhausted(); i += size {
			end := min(i+size, len(s.best))
			if allZero(s.best[i:end]) {
				continue
			}
			s.try(s.edited(func(d []Draw) []Draw {
				for j := i; j < end; j++ {
					d[j].Value = 0
				}
				return d
			}))
		}
	}
}

func allZero(ds []Draw) bool {
	for _, d := range ds {
		if d.Value != 0 {
			return false
		}
	}
	return true
}

// minimiseDraws lowers each draw on its own: zero, else a binary search
// for the least value that keeps the failure (assuming, as Hypothesis does,
// that smaller values that fail lie below the ones that do not). The
// search follows the draw while the stream keeps its shape before it.
func minimiseDraws(s *shrinker) {
	for i := len(s.best) - 1; i >= 0 && !s.exhausted(); i-- {
		if i >= len(s.best) || s.best[i].Value == 0 {
			continue
		}
		bound := s.best[i].Bound
		setTo := func(v uint64) bool {
			return s.try(s.edited(func(d []Draw) []Draw { d[i].Value = v; return d }))
		}
		if setTo(0) {
			continue
		}
		lo, hi := uint64(0), s.best[i].Value // lo fails to keep, hi keeps
		for lo+1 < hi && !s.exhausted() {
			mid := lo + (hi-lo)/2
			if setTo(mid) {
				if i >= len(s.best) || s.best[i].Bound != bound {
					break
				}
				hi = s.best[i].Value
			} else {
				lo = mid
			}
		}
	}
}

// sortRuns sorts each run of neighbouring draws with one bound: the order
// of interchangeable draws (several clients' think times, say) stops
// depending on which seed found the failure.
func sortRuns(s *shrinker) {
	for i := 0; i < len(s.best) && !s.exhausted(); {
		j := i + 1
		for j < len(s.best) && s.best[j].Bound == s.best[i].Bound {
			j++
		}
		if j-i > 1 {
			s.try(s.edited(func(d []Draw) []Draw {
				slices.SortStableFunc(d[i:j], func(a, b Draw) int {
					switch {
					case a.Value < b.Value:
						return -1
					case a.Value > b.Value:
						return 1
					}
					return 0
				})
				return d
			}))
		}
		i = j
	}
}

// redistribute moves value from a draw to a later one with the same bound
// (within a few draws): swapping the two, or moving all of the first's
// value onto the second. The sum stays, the stream sorts earlier.
func redistribute(s *shrinker) {
	const reach = 4
	for i := 0; i < len(s.best) && !s.exhausted(); i++ {
		for j := i + 1; j < len(s.best) && j <= i+reach && !s.exhausted(); j++ {
			a, b := s.best[i], s.best[j]
			if a.Bound != b.Bound || a.Value == 0 {
				continue
			}
			if b.Value < a.Value && s.try(s.edited(func(d []Draw) []Draw {
				d[i].Value, d[j].Value = b.Value, a.Value
				return d
			})) {
				continue
			}
			if sum := a.Value + b.Value; sum < a.Bound {
				s.try(s.edited(func(d []Draw) []Draw {
					d[i].Value, d[j].Value = 0, sum
					return d
				}))
			}
		}
	}
}

// lowerAndDelete handles counts: a draw that says how many draws follow
// ("n clients", "k retries") cannot be lowered without the stream losing
// its alignment, nor can the draws it governs be deleted while it stands.
// Lowering it by d while deleting d draws soon after does both at once.
func lowerAndDelete(s *shrinker) {
	const reach = 8
	for j := 0; j < len(s.best) && !s.exhausted(); j++ {
		v := s.best[j].Value
		if v == 0 || s.best[j].Bound > maxCountBound {
			continue
		}
		if lowerAndDeleteAt(s, j, v, reach) {
			j-- // the count may go lower still
		}
	}
}

// maxCountBound is the largest bound of a draw lowerAndDelete treats as a
// count: counts are small, and trying every large draw would cost replays
// for nothing.
const maxCountBound = 64

// lowerAndDeleteAt tries, for draw j holding v, lowering it by d in
// {v, v-1, 1} while deleting d draws at one of the next reach positions.
func lowerAndDeleteAt(s *shrinker, j int, v uint64, reach int) bool {
	for _, d := range []uint64{v, v - 1, 1} {
		if d == 0 || d > uint64(reach) {
			continue
		}
		for i := j + 1; i <= j+reach && i+int(d) <= len(s.best); i++ {
			if s.try(s.edited(func(ds []Draw) []Draw {
				ds[j].Value -= d
				return append(ds[:i], ds[i+int(d):]...)
			})) {
				return true
			}
			if s.exhausted() {
				return false
			}
		}
	}
	return false
}

// minimiseTail works on the last bytes of the stream. Draws are lowered by
// value, but the stream's last draw also sorts by length: its trailing zero
// bytes are dropped, so 0xeb00 (one byte, 0xeb) beats 0xea60 (two). It
// tries rounding the end up to one byte fewer, then a binary search over
// each of the last few bytes.
func minimiseTail(s *shrinker) {
	const tail = 4
	// Rounding up: ...ea 60 becomes ...eb, one byte shorter.
	for n := len(s.bestBytes); n >= 2 && s.bestBytes[n-2] < 0xff && !s.exhausted(); n = len(s.bestBytes) {
		cand := slices.Clone(s.bestBytes[:n-1])
		cand[n-2]++
		if !s.tryBytes(cand) {
			break
		}
	}
	for k := 1; k <= tail && k <= len(s.bestBytes) && !s.exhausted(); k++ {
		p := len(s.bestBytes) - k
		lo, hi := -1, int(s.bestBytes[p]) // lo fails to keep (or is not smaller), hi keeps
		for lo+1 < hi && !s.exhausted() {
			mid := lo + (hi-lo)/2
			cand := slices.Clone(s.bestBytes)
			cand[p] = byte(mid)
			if s.tryBytes(cand) {
				if p >= len(s.bestBytes) {
					return
				}
				hi = int(s.bestBytes[p])
			} else {
				lo = mid
			}
		}
	}
}

// slideDelete deletes small spans at every position, not only aligned
// ones: the draws that matter seldom sit on a chunk boundary.
func slideDelete(s *shrinker) {
	for size := 4; size >= 1; size-- {
		for i := len(s.best) - size; i >= 0 && !s.exhausted(); i-- {
			if i+size > len(s.best) {
				continue
			}
			s.try(s.edited(func(d []Draw) []Draw { return append(d[:i], d[i+size:]...) }))
		}
	}
}

// moveEarlier moves a draw's value onto an earlier draw of the same bound
// that is zero: a fault or a decision taken at the first opportunity
// instead of a later one. The candidate is not itself smaller, but a run
// that fails sooner ends with a shorter stream, and that is what is kept.
// It tries the earliest opportunities first, a bounded number per draw.
func moveEarlier(s *shrinker) {
	const perDraw, perLast = 24, 256
	last := true // the last chosen draw sets the stream's length: try harder
	for j := len(s.best) - 1; j > 0 && !s.exhausted(); j-- {
		if j >= len(s.best) || s.best[j].Value == 0 {
			continue
		}
		limit := perDraw
		if last {
			limit, last = perLast, false
		}
		tries := 0
		for i := 0; i < j && tries < limit && !s.exhausted(); i++ {
			if s.best[i].Bound != s.best[j].Bound || s.best[i].Value != 0 {
				continue
			}
			tries++
			if s.tryAny(Encode(s.edited(func(d []Draw) []Draw {
				d[i].Value, d[j].Value = d[j].Value, 0
				return d
			}))) {
				break
			}
		}
	}
}

// lowerRaise lowers a draw (to zero, or half) while raising a later chosen
// draw to its largest value. Draws are often coupled: a drawn fault rate
// sets the threshold a later chance draw must pass, so neither can be
// lowered alone. With the later draw at its top, the earlier one can fall;
// the next round's minimise pass then brings the later one down to the new
// threshold, and seeds that chose different rates meet at the same stream.
func lowerRaise(s *shrinker) {
	const later = 4
	for i := 0; i < len(s.best) && !s.exhausted(); i++ {
		if s.best[i].Value == 0 {
			continue
		}
		js := make([]int, 0, later)
		for j := i + 1; j < len(s.best) && len(js) < later; j++ {
			if s.best[j].Value != 0 && s.best[j].Value < s.best[j].Bound-1 {
				js = append(js, j)
			}
		}
	candidates:
		for _, v := range []uint64{0, s.best[i].Value / 2} {
			for _, j := range js {
				if v >= s.best[i].Value {
					continue
				}
				if s.tryAny(Encode(s.edited(func(d []Draw) []Draw {
					d[i].Value, d[j].Value = v, d[j].Bound-1
					return d
				}))) {
					break candidates
				}
			}
		}
	}
}

// lowerPairs lowers two chosen draws of one bound by the same amount,
// keeping their difference: two delays that must race the same way (a
// checkpoint landing between a split's two transactions) cannot be lowered
// one at a time, but can together. It tries the largest common step (the
// smaller value) first, then half of it.
func lowerPairs(s *shrinker) {
	const reach = 16
	for i := 0; i < len(s.best) && !s.exhausted(); i++ {
		for j := i + 1; j < len(s.best) && j <= i+reach && !s.exhausted(); j++ {
			a, b := s.best[i], s.best[j]
			if a.Bound != b.Bound || a.Value == 0 || b.Value == 0 {
				continue
			}
			step := min(a.Value, b.Value)
			for _, d := range []uint64{step, step / 2} {
				if d == 0 {
					continue
				}
				if s.try(s.edited(func(ds []Draw) []Draw {
					ds[i].Value -= d
					ds[j].Value -= d
					return ds
				})) {
					break
				}
			}
		}
	}
}
