package scenarios

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"

	"shardsim/property"
	"shardsim/simclock"
)

// Run runs the world's loop until it stops. A panic inside the world (an
// actor, a task, a checker run on a step) becomes an H.Panic violation
// naming the panic and where it happened, and the loop counts as stopped:
// a sweep records the seed like any other finding instead of dying.
func (w *World) Run() (stop simclock.StopReason) {
	defer func() {
		if p := recover(); p != nil {
			w.Fail(panicViolation(p, w.Loop.Now()))
			stop = simclock.Stopped
		}
	}()
	return w.Loop.Run()
}

// panicViolation describes a recovered panic. The description goes into
// the trace, so it holds only what is the same on every machine: the
// panic's value and the innermost frames of the project's code, by
// function and file base name (never addresses or absolute paths). A
// panic whose value is a *property.Violation is an assertion that named
// the property it guards (a backend's commit-time self-check, say): the
// verdict names that property; any other panic is H.Panic.
func panicViolation(p any, at simclock.Time) *property.Violation {
	if v, ok := p.(*property.Violation); ok && v != nil && property.Known(v.Property) {
		return property.Violated(v.Property, "assertion failed at %v: %s (in %s)", at, v.Detail, panicSite())
	}
	return property.Violated(property.HPanic, "panic at %v: %v (in %s)", at, p, panicSite())
}

// panicSite names up to three innermost frames of shardsim code that were
// unwinding when the panic was recovered.
func panicSite() string {
	pcs := make([]uintptr, 64)
	n := runtime.Callers(3, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	var sites []string
	for len(sites) < 3 {
		f, more := frames.Next()
		if strings.HasPrefix(f.Function, "shardsim/") && !strings.Contains(f.Function, "scenarios.panic") &&
			!strings.Contains(f.Function, "scenarios.(*World).Run") {
			sites = append(sites, fmt.Sprintf("%s %s:%d", f.Function, filepath.Base(f.File), f.Line))
		}
		if !more {
			break
		}
	}
	if len(sites) == 0 {
		return "unknown site"
	}
	return strings.Join(sites, " < ")
}
