package simclock

import (
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"time"

	"github.com/zeebo/blake3"
)

// Source produces raw draws. Draw(n) returns a value in [0, n) for n >= 1.
// Fork returns the named sub-stream of this source.
type Source interface {
	Draw(n uint64) uint64
	Fork(name string) Source
}

// DrawKind says what a draw decides, for drivers that treat draws
// differently: the model checker tries both outcomes of a chance, the
// extremes of an amount and the first few values of a pick.
type DrawKind uint8

const (
	// KindInt is a draw whose every value is its own outcome (Intn, Pick,
	// Shuffle, Bytes, Uint64n).
	KindInt DrawKind = iota
	// KindChance is a Chance: every value below the threshold means "no",
	// and the largest value always means "yes".
	KindChance
	// KindRange is an amount (Between, Duration): zero is the smallest, the
	// largest value the largest.
	KindRange
)

// KindSource is a Source that is told what each draw is for. Choices calls
// DrawKind instead of Draw when its source implements it; the value must be
// the one Draw would return, so a run replays through any driver.
type KindSource interface {
	Source
	DrawKind(n uint64, kind DrawKind) uint64
}

// Choices is the single source of nondeterminism of a world. Everything that
// could go more than one way (a message delay, a fault, the next workload
// step) is drawn from a Choices, so a run is a pure function of its scenario,
// options and choice stream.
//
// Draws are designed so that an all-zero stream picks the quiet outcome: the
// smallest value, no fault (Chance returns false), the shortest delay. The
// fuzzer's minimiser therefore shrinks a failing schedule towards "nothing
// unusual happens" and what remains is the essence of the failure.
type Choices struct {
	src   Source
	kinds KindSource  // src, when it wants to know each draw's kind
	prng  *prngSource // src, when it is the seeded generator: called directly
	draws *uint64     // shared by a root and all its forks
	// seeded is the generator of a seeded root or of a fork of one, kept in
	// the Choices itself (prng and src then point at it): a world forks a
	// stream for every actor and task, about a hundred per migrate world,
	// and each was three allocations (the Choices, its source and the
	// source's PCG) where it is now one.
	seeded prngSource
	count  uint64 // the draw counter of a root (draws points at it)
}

// NewSeeded returns a Choices driven by a PRNG seeded from seed. Named forks
// derive independent PRNGs (blake3 of the parent key and the name), so one
// consumer's draws never shift another's.
func NewSeeded(seed uint64) *Choices {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], seed)
	c := &Choices{}
	c.draws = &c.count
	c.initSeeded(deriveKey([]byte("shardsim/choices/seed/v1"), b[:]))
	return c
}

// initSeeded makes c's source its own generator keyed by key.
func (c *Choices) initSeeded(key [32]byte) {
	c.seeded.init(key)
	c.src, c.prng = &c.seeded, &c.seeded
}

// NewBytes returns a Choices that reads its draws from data, the way a fuzzer
// drives a run. An exhausted stream reads as zeros. All forks share one tape
// (a fork of a byte stream is a name, not a new stream), so a recording of a
// run replays exactly through NewBytes.
func NewBytes(data []byte) *Choices {
	return newChoices(&byteSource{tape: &byteTape{data: data}})
}

// NewFromSource returns a Choices driven by src, for drivers other than a
// seed or a byte string: a shrinker that watches every draw, or a model
// checker that enumerates them. src.Fork decides whether forks share one
// stream (as bytes do) or get their own.
func NewFromSource(src Source) *Choices { return newChoices(src) }

// DrawWidth returns how many bytes of a byte stream one draw below n reads
// (none for n == 1), so a driver can write streams that NewBytes replays.
func DrawWidth(n uint64) int { return widthFor(n) }

func newChoices(src Source) *Choices {
	c := &Choices{}
	c.setSource(src, &c.count)
	return c
}

// withSource returns a Choices over src sharing the draw counter draws.
func withSource(src Source, draws *uint64) *Choices {
	c := &Choices{}
	c.setSource(src, draws)
	return c
}

// setSource makes c draw from src and count its draws in draws.
func (c *Choices) setSource(src Source, draws *uint64) {
	c.src, c.draws = src, draws
	c.kinds, _ = src.(KindSource)
	c.prng, _ = src.(*prngSource)
}

// Fork returns the named sub-stream. Use distinct names for distinct
// consumers ("nemesis", "worker/3"); forking the same name twice yields the
// same stream for seeded choices.
func (c *Choices) Fork(name string) *Choices {
	if c.prng != nil { // the generator prngSource.Fork would make, kept inline
		f := &Choices{draws: c.draws}
		f.initSeeded(c.prng.forkKey(name))
		return f
	}
	return withSource(c.src.Fork(name), c.draws)
}

// Draws returns how many draws the root and all its forks have made.
func (c *Choices) Draws() uint64 { return *c.draws }

// Uint64n returns a value in [0, n). n must be at least 1.
func (c *Choices) Uint64n(n uint64) uint64 {
	return c.draw(n, KindInt)
}

// draw makes one draw below n of the given kind.
func (c *Choices) draw(n uint64, kind DrawKind) uint64 {
	if n == 0 {
		panic("simclock: Uint64n(0)")
	}
	*c.draws++
	if c.prng != nil { // a seeded run's every draw: no interface call
		return c.prng.Draw(n)
	}
	if c.kinds != nil {
		return c.kinds.DrawKind(n, kind)
	}
	return c.src.Draw(n)
}

// Intn returns a value in [0, n). n must be at least 1.
func (c *Choices) Intn(n int) int {
	if n <= 0 {
		panic("simclock: Intn with n <= 0")
	}
	return int(c.Uint64n(uint64(n)))
}

// Between returns a value in [lo, hi], inclusive; zeros pick lo.
func (c *Choices) Between(lo, hi int64) int64 {
	if hi < lo {
		panic("simclock: Between with hi < lo")
	}
	return lo + int64(c.draw(uint64(hi-lo)+1, KindRange))
}

// Duration returns a duration in [lo, hi], inclusive; zeros pick lo.
func (c *Choices) Duration(lo, hi time.Duration) time.Duration {
	return time.Duration(c.Between(int64(lo), int64(hi)))
}

// chanceScale is the resolution of Chance: probabilities are rounded to
// multiples of 1/65536 and one draw reads two bytes of a byte stream.
const chanceScale = 1 << 16

// Chance returns true with probability p. Zeros give false unless p >= 1, so
// a quiet stream injects no faults.
func (c *Choices) Chance(p float64) bool {
	if p <= 0 {
		return false
	}
	if p >= 1 {
		return true
	}
	threshold := uint64(p * chanceScale)
	if threshold == 0 {
		threshold = 1
	}
	return c.draw(chanceScale, KindChance) >= chanceScale-threshold
}

// Pick returns one element of xs; zeros pick the first. xs must not be empty.
func Pick[T any](c *Choices, xs []T) T {
	return xs[c.Intn(len(xs))]
}

// Shuffle permutes xs in place (Fisher-Yates); zeros leave it unchanged.
func Shuffle[T any](c *Choices, xs []T) {
	for i := len(xs) - 1; i > 0; i-- {
		j := i - c.Intn(i+1)
		xs[i], xs[j] = xs[j], xs[i]
	}
}

// Bytes returns n drawn bytes (each a separate draw).
func (c *Choices) Bytes(n int) []byte {
	out := make([]byte, n)
	for i := range out {
		out[i] = byte(c.Uint64n(256))
	}
	return out
}

// deriveKey returns blake3(domain || 0x00 || parts...) as a 32-byte key,
// each part preceded by its length (8 bytes, big-endian). The input is laid
// out in one buffer and hashed in one call: a fork is made for every actor
// and task, and a streaming hasher would be a heap allocation each time.
func deriveKey(domain []byte, parts ...[]byte) [32]byte {
	var buf [160]byte
	in := append(buf[:0], domain...)
	in = append(in, 0)
	for _, p := range parts {
		in = binary.BigEndian.AppendUint64(in, uint64(len(p)))
		in = append(in, p...)
	}
	return blake3.Sum256(in)
}

// prngSource is a PCG generator keyed by a 32-byte derivation key. The
// generator's state is held by value: one allocation less per stream.
type prngSource struct {
	key [32]byte
	rng rand.PCG
}

func newPRNGSource(key [32]byte) *prngSource {
	p := &prngSource{}
	p.init(key)
	return p
}

// init keys p by key, seeding its PCG as rand.NewPCG would.
func (p *prngSource) init(key [32]byte) {
	p.key = key
	p.rng.Seed(binary.BigEndian.Uint64(key[0:8]), binary.BigEndian.Uint64(key[8:16]))
}

// forkKey returns the key of the named sub-stream of p.
func (p *prngSource) forkKey(name string) [32]byte {
	return deriveKey([]byte("shardsim/choices/fork/v1"), p.key[:], []byte(name))
}

// Draw returns an unbiased value in [0, n) (Lemire's method).
func (p *prngSource) Draw(n uint64) uint64 {
	if n&(n-1) == 0 {
		return p.rng.Uint64() & (n - 1)
	}
	hi, lo := bits.Mul64(p.rng.Uint64(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(p.rng.Uint64(), n)
		}
	}
	return hi
}

func (p *prngSource) Fork(name string) Source {
	return newPRNGSource(p.forkKey(name))
}

// byteTape is the shared input of a byte-driven run.
type byteTape struct {
	data []byte
	pos  int
}

// widthFor returns how many bytes encode a draw below n: none for n == 1.
func widthFor(n uint64) int {
	return (bits.Len64(n-1) + 7) / 8
}

// next reads width big-endian bytes, zeros past the end.
func (t *byteTape) next(width int) uint64 {
	var v uint64
	for i := 0; i < width; i++ {
		v <<= 8
		if t.pos < len(t.data) {
			v |= uint64(t.data[t.pos])
		}
		t.pos++
	}
	return v
}

type byteSource struct{ tape *byteTape }

func (b *byteSource) Draw(n uint64) uint64 {
	return b.tape.next(widthFor(n)) % n
}

func (b *byteSource) Fork(string) Source { return b }

// Exhausted reports whether a byte-driven Choices has read past its input.
// It is false for other sources.
func (c *Choices) Exhausted() bool {
	switch s := c.src.(type) {
	case *byteSource:
		return s.tape.pos >= len(s.tape.data)
	case *recordingSource:
		return false
	}
	return false
}
