package main

import (
	"os"
	"sync"
	"time"

	"shardsim/property"
	"shardsim/scenarios"
)

// sweeper runs a range of seeds on parallel workers and hands the results
// to commit in seed order, whatever order they finish in. Each run is its
// own world, so parallelism changes no run's outcome; committing in order
// makes everything built on the results (the summary, -first, the runs an
// interruption covers) the same on any number of workers or machines.
type sweeper struct {
	name     string
	base     scenarios.Config
	seeds    seedRange
	parallel int
	first    bool // stop at the lowest failing seed

	// commit receives each run in ascending seed order; an error (bad
	// usage that only this seed's options revealed) stops the sweep.
	commit func(seed uint64, res scenarios.Result) error
	// tick is called about once a second and at the end, for progress.
	tick func(done uint64)
	// signals stops the sweep: no new seed starts, the runs under way
	// finish and are committed. The signal is returned.
	signals <-chan os.Signal
	// stopped, if set, is called at the first signal (to let a second one
	// kill the process).
	stopped func()
}

type sweepOutcome struct {
	seed uint64
	res  scenarios.Result
	err  error
}

// dispatcher hands out the seeds of a range in ascending order without
// ever computing past its end (which may be 2^64-1).
type dispatcher struct {
	mu      sync.Mutex
	r       seedRange
	next    uint64 // offset of the next seed from r.lo
	done    bool   // every seed has been handed out, or the sweep stops
	stopped bool
}

func (d *dispatcher) take() (uint64, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.done || d.stopped {
		return 0, false
	}
	seed := d.r.lo + d.next
	if d.next == d.r.span() {
		d.done = true
	} else {
		d.next++
	}
	return seed, true
}

func (d *dispatcher) stop() {
	d.mu.Lock()
	d.stopped = true
	d.mu.Unlock()
}

// run sweeps the range; head is the first seed's result, already run. It
// returns the signal that stopped it early, if any, and the first commit
// error.
func (s *sweeper) run(head scenarios.Result) (os.Signal, error) {
	d := &dispatcher{r: s.seeds}
	d.take() // the head seed
	results := make(chan sweepOutcome, s.parallel)
	var wg sync.WaitGroup
	for w := 0; w < s.parallel; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				seed, ok := d.take()
				if !ok {
					return
				}
				cfg := s.base
				cfg.Seed = seed
				res, err := scenarios.Run(s.name, cfg)
				results <- sweepOutcome{seed, res, err}
			}
		}()
	}
	go func() { wg.Wait(); close(results) }()
	return s.collect(d, head, results)
}

// collect commits results in seed order until the workers are done.
func (s *sweeper) collect(d *dispatcher, head scenarios.Result, results <-chan sweepOutcome) (os.Signal, error) {
	pending := map[uint64]sweepOutcome{s.seeds.lo: {seed: s.seeds.lo, res: head}}
	next, finished := s.seeds.lo, false // the next seed to commit; finished once the last (or -first's) is committed
	var done uint64
	var sig os.Signal
	var firstErr error
	ticker := time.NewTicker(time.Second)
	defer ticker.Stop()
	commitReady := func() {
		for !finished && firstErr == nil {
			o, ok := pending[next]
			if !ok {
				return
			}
			delete(pending, next)
			done++
			if o.err != nil {
				firstErr = usagef("seed %d: %v", o.seed, o.err)
				d.stop()
				return
			}
			if err := s.commit(o.seed, o.res); err != nil {
				firstErr = err
				d.stop()
				return
			}
			if next == s.seeds.hi || s.first && o.res.Verdict == property.VerdictViolation {
				finished = true
				d.stop()
				return
			}
			next++
		}
	}
	commitReady()
	for results != nil {
		select {
		case o, ok := <-results:
			if !ok {
				results = nil
				break
			}
			if s.first && o.res.Verdict == property.VerdictViolation {
				d.stop() // seeds above a failure are not needed; those below were handed out already
			}
			pending[o.seed] = o
			commitReady()
		case got := <-s.signals:
			if sig == nil {
				sig = got
				d.stop()
				if s.stopped != nil {
					s.stopped()
				}
			}
		case <-ticker.C:
			if s.tick != nil {
				s.tick(done)
			}
		}
	}
	if s.tick != nil {
		s.tick(done)
	}
	return sig, firstErr
}
