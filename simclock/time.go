package simclock

import (
	"strconv"
	"time"
)

// Time is a point in virtual time, in nanoseconds since the world started.
// It never comes from the wall clock.
type Time int64

// Add returns t shifted by d.
func (t Time) Add(d time.Duration) Time { return t + Time(d) }

// Sub returns the duration t-u.
func (t Time) Sub(u Time) time.Duration { return time.Duration(t - u) }

// Before reports whether t is strictly earlier than u.
func (t Time) Before(u Time) bool { return t < u }

// String renders t as a duration since the start, for example "1.5s".
func (t Time) String() string { return time.Duration(t).String() }

// Nanos returns t as a plain integer, for encodings.
func (t Time) Nanos() int64 { return int64(t) }

// FormatNanos renders t as its integer nanoseconds, the form used in traces.
func (t Time) FormatNanos() string { return strconv.FormatInt(int64(t), 10) }
