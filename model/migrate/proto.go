package migrate

import (
	"shardsim/model/migrate/catalog"
	"shardsim/model/migrate/hlc"
	"shardsim/model/migrate/keys"
	"shardsim/model/migrate/mvcc"
)

// The requests a group leader serves, and their answers.

// ReadReq reads one raw key at TS (0: the latest).
type ReadReq struct {
	Key string
	TS  hlc.TS
}

// ReadResp is a read's answer; TS is the timestamp it was served at.
type ReadResp struct {
	Read mvcc.Read
	TS   hlc.TS
}

// ScanReq scans family Family over route keys in Span at TS (0: latest).
type ScanReq struct {
	Family keys.Family
	Span   keys.Span
	TS     hlc.TS
	Limit  int
}

// ScanResp is a scan's answer.
type ScanResp struct {
	Rows []mvcc.ScanRow
	TS   hlc.TS
}

// WriteReq writes (or deletes) one raw key. HasVersion says whether the
// coordinator stamped Observed, the catalog version it routed by.
type WriteReq struct {
	Key        string
	Value      string
	Tombstone  bool
	TTLms      uint64
	HasVersion bool
	Observed   uint64
	Op         string
}

// WriteResp carries the commit timestamp.
type WriteResp struct{ TS hlc.TS }

// PushReq installs a catalog snapshot into the group's view through its log.
type PushReq struct{ Catalog catalog.Catalog }

// PushResp is the group's view version, last commit ts and timestamp
// horizon at the entry.
type PushResp struct {
	Version    uint64
	LastCommit hlc.TS
	Horizon    hlc.TS
}

// BarrierReq appends an empty entry; the answer is the last commit ts there.
type BarrierReq struct{}

// ExportReq asks for one export chunk from the source's applied state.
type ExportReq struct{ Export mvcc.ExportRequest }

// ExportResp is the chunk.
type ExportResp struct{ Result mvcc.ExportResult }

// ImportReq appends one import batch.
type ImportReq struct {
	Job     uint64
	Bracket uint32
	Seq     uint64
	Rows    []mvcc.Row
	Cursor  []byte
	Moving  keys.Span
}

// ImportResp is the stored sequence number and cursor after the batch.
type ImportResp struct {
	Seq       uint64
	Cursor    []byte
	Duplicate bool
}

// FloorReq raises the group's last commit ts and clock to Floor.
type FloorReq struct{ Floor hlc.TS }

// StatusReq asks the target about a job's staged rows.
type StatusReq struct{ Job uint64 }

// StatusResp says whether promotion is complete (durably: applied).
type StatusResp struct {
	Promoted bool
	Staged   int
}

// DrainReq asks how many admitted reads on Span are still in flight.
type DrainReq struct{ Span keys.Span }

// DrainResp is that count.
type DrainResp struct{ Open int }

// CleanupReq deletes a moved span's source versions up to FenceTS.
type CleanupReq struct {
	Job     uint64
	Moving  keys.Span
	FenceTS hlc.TS
}

// AbandonStagedReq deletes a job's staged rows on the target.
type AbandonStagedReq struct{ Job uint64 }

// AccessReq collects (and resets) the leader's access counters.
type AccessReq struct{}

// AccessResp is one window's counters per route.
type AccessResp struct{ Routes []RouteAccess }

// RouteAccess is what a leader saw on one route during a window.
type RouteAccess struct {
	RouteID uint64
	Reads   int
	Writes  int
	Keys    []KeyCount // sampled route keys, sorted by key
}

// KeyCount is one sampled key and how often it was accessed.
type KeyCount struct {
	Key   string
	Count int
}
