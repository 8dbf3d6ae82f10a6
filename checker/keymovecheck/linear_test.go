package keymovecheck

import (
	"shardsim/property"
	"testing"
	"time"
)

func TestLinearizableCatchesAStaleRead(t *testing.T) {
	h := newHarness(t, false)
	h.shardPut("s1", "client", "d/a", "c0.1")
	ops := []Op{
		{Client: 0, Key: "a", Call: 1, Return: 2, Write: true, Value: "c0.1"},
		{Client: 1, Key: "a", Call: 3, Return: 4, Value: "v0-a", Found: true}, // older than an acknowledged write
	}
	_, v := h.d.CheckLinearizable(ops, 5*time.Second)
	wantViolation(t, v, property.KMLinearizable)
}

func TestLinearizableResolvesAmbiguousWrites(t *testing.T) {
	h := newHarness(t, false)
	h.shardPut("s1", "client", "d/a", "c0.1")
	ops := []Op{
		{Client: 0, Key: "a", Call: 1, Write: true, Value: "c0.1", Ambiguous: true}, // applied: takes effect
		{Client: 0, Key: "a", Call: 1, Write: true, Value: "c0.9", Ambiguous: true}, // never applied: dropped
		{Client: 1, Key: "a", Call: 999999, Return: 1000000, Value: "c0.1", Found: true},
	}
	if verdict, v := h.d.CheckLinearizable(ops, 5*time.Second); verdict != property.VerdictOK {
		t.Fatalf("%s %v", verdict, v)
	}
	ops = append(ops, Op{Client: 2, Key: "a", Call: 2000000, Return: 2000001, Value: "c0.9", Found: true})
	_, v := h.d.CheckLinearizable(ops, 5*time.Second)
	wantViolation(t, v, property.KMLinearizable)
}
