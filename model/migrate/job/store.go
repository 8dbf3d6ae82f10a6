package job

import (
	"encoding/binary"
	"time"

	"shardsim/model/migrate/keys"
)

// Metadata store keys.
const (
	CatalogKey   = "!dist|catalog"
	LiveJobKey   = "!dist|meta|live_job"
	NextJobIDKey = "!dist|meta|next_job_id"
	jobPrefix    = "!dist|job|"
	histPrefix   = "!dist|jobhist|"
)

// Key returns the live record key of job id.
func Key(id uint64) string {
	var b [len(jobPrefix) + 16]byte
	return string(keys.AppendHex16(append(b[:0], jobPrefix...), id)) // built for every save and load: no fmt
}

// JobPrefix is the prefix of every live job record.
func JobPrefix() string { return jobPrefix }

// HistPrefix is the prefix of every history record.
func HistPrefix() string { return histPrefix }

// HistKey returns the history key of a job that ended at terminalMs: keys
// sort by end time, so the oldest history entries come first.
func HistKey(terminalMs int64, id uint64) string {
	var b [len(histPrefix) + 16 + 1 + 16]byte
	k := keys.AppendHex16(append(b[:0], histPrefix...), uint64(terminalMs))
	return string(keys.AppendHex16(append(k, '|'), id))
}

// HistoryBound limits the job history by count and by age.
type HistoryBound struct {
	MaxEntries int
	MaxAge     time.Duration
}

// DefaultHistoryBound keeps 16 entries for at most a day.
var DefaultHistoryBound = HistoryBound{MaxEntries: 16, MaxAge: 24 * time.Hour}

// HistEntry is one history key with its end time.
type HistEntry struct {
	Key        string
	TerminalMs int64
}

// Evict returns which history entries (sorted oldest first) to delete when
// one more entry ending at nowMs is added: the oldest beyond the count
// bound, and all older than the age bound.
func (b HistoryBound) Evict(entries []HistEntry, nowMs int64) []string {
	var out []string
	keep := len(entries) + 1 // with the new one
	for _, e := range entries {
		tooMany := b.MaxEntries > 0 && keep > b.MaxEntries
		tooOld := b.MaxAge > 0 && nowMs-e.TerminalMs > b.MaxAge.Milliseconds()
		if !tooMany && !tooOld {
			continue
		}
		out = append(out, e.Key)
		keep--
	}
	return out
}

// ParseHistKey returns the end time encoded in a history key.
func ParseHistKey(k string) (int64, bool) {
	if len(k) != len(histPrefix)+16+1+16 || k[:len(histPrefix)] != histPrefix {
		return 0, false
	}
	var v uint64
	for _, c := range k[len(histPrefix) : len(histPrefix)+16] {
		d, ok := hexDigit(byte(c))
		if !ok {
			return 0, false
		}
		v = v<<4 | uint64(d)
	}
	return int64(v), true
}

func hexDigit(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}

// EncodeID renders an id counter value.
func EncodeID(id uint64) []byte { return binary.BigEndian.AppendUint64(nil, id) }

// DecodeID parses an id counter value (missing: 0).
func DecodeID(b []byte) uint64 {
	if len(b) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(b)
}
