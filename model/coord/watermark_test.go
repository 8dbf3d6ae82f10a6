package coord

import "testing"

// The progress watermark follows the processed prefix of the run's key
// space: cursors, Done shards and splits, stopping at the first gap.
func TestProgressWatermark(t *testing.T) {
	forBackends(t, func(t *testing.T, b backend) {
		w := newWorld(t, b.make(t, DefaultConfig()))
		mark := func() Watermark {
			p, err := w.c.GetRunProgress(w.now, tenantA, run1)
			if err != nil {
				t.Fatal(err)
			}
			return p.Watermark
		}
		if m := mark(); string(m.Key) != "a" || m.Complete {
			t.Fatalf("fresh run: %+v", m)
		}
		l1, l2 := w.acquire(1, w1), w.acquire(2, w2)
		// Progress in the second root alone does not move the mark.
		if _, _, err := w.c.Checkpoint(w.now, tenantA, l2, cur("p"), 1); err != nil {
			t.Fatal(err)
		}
		if m := mark(); string(m.Key) != "a" {
			t.Fatalf("after a checkpoint past a gap: %+v", m)
		}
		if _, _, err := w.c.Checkpoint(w.now, tenantA, l1, cur("c"), 2); err != nil {
			t.Fatal(err)
		}
		if m := mark(); string(m.Key) != "c\x00" {
			t.Fatalf("after a checkpoint at c: %q", m.Key)
		}
		// A residual split keeps the processed prefix; completing the
		// parent covers its shrunk range, up to the residual's start.
		res, _, err := w.c.SplitResidual(w.now, tenantA, l1, SplitResidualPlan{spec("a", "f"), spec("f", "m")}, 3)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := w.c.Complete(w.now, tenantA, l1, cur("e"), 4); err != nil {
			t.Fatal(err)
		}
		if m := mark(); string(m.Key) != "f" {
			t.Fatalf("after completing [a, f): %q", m.Key)
		}
		l3 := w.acquire(res.Residual, w1)
		if _, _, err := w.c.Complete(w.now, tenantA, l3, Cursor{}, 5); err != nil {
			t.Fatal(err)
		}
		// [a, m) is done; the second root [m, ∞) has progress up to p.
		if m := mark(); string(m.Key) != "p\x00" {
			t.Fatalf("after completing [f, m): %q", m.Key)
		}
		if _, _, err := w.c.Complete(w.now, tenantA, l2, cur("p"), 6); err != nil {
			t.Fatal(err)
		}
		if m := mark(); !m.Complete {
			t.Fatalf("after completing everything: %+v", m)
		}
	})
}
