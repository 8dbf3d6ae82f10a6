package timeline

import (
	"bytes"
	"encoding/json"
	"fmt"

	"shardsim/simclock"
)

// Collector is an io.Writer for a run's JSON-lines trace (scenarios.Config's
// TraceOut) that keeps every record, decoded.
type Collector struct {
	records []simclock.Record
	partial []byte
	err     error
}

// Write decodes the complete lines in p and keeps any trailing part for
// the next call.
func (c *Collector) Write(p []byte) (int, error) {
	c.partial = append(c.partial, p...)
	for {
		i := bytes.IndexByte(c.partial, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := c.partial[:i]
		if len(bytes.TrimSpace(line)) > 0 {
			var r simclock.Record
			if err := json.Unmarshal(line, &r); err != nil && c.err == nil {
				c.err = fmt.Errorf("timeline: trace line %d: %v", len(c.records)+1, err)
			}
			c.records = append(c.records, r)
		}
		c.partial = c.partial[i+1:]
	}
}

// Records returns the records collected so far, in trace order.
func (c *Collector) Records() []simclock.Record { return c.records }

// Err returns the first line that did not decode, if any.
func (c *Collector) Err() error { return c.err }

// Faults counts the records that are faults.
func Faults(records []simclock.Record) int {
	n := 0
	for _, r := range records {
		if Classify(r) == Fault {
			n++
		}
	}
	return n
}
