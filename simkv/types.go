package simkv

// KeyValue mirrors mvccpb.KeyValue: one version of a key.
type KeyValue struct {
	Key            []byte
	Value          []byte
	CreateRevision int64 // revision of the put that created the key's current life
	ModRevision    int64 // revision of the last write
	Version        int64 // writes since creation, 1 for a new key; a delete resets it
	Lease          int64 // attached lease id, 0 for none
}

// ResponseHeader mirrors etcdserverpb.ResponseHeader. Only the revision is
// modelled; cluster id, member id and raft term are not.
type ResponseHeader struct {
	Revision int64
}

// SortOrder mirrors RangeRequest.SortOrder.
type SortOrder int32

// Sort orders, with etcd's numeric values.
const (
	SortNone SortOrder = iota
	SortAscend
	SortDescend
)

// SortTarget mirrors RangeRequest.SortTarget.
type SortTarget int32

// Sort targets, with etcd's numeric values.
const (
	SortByKey SortTarget = iota
	SortByVersion
	SortByCreateRevision
	SortByModRevision
	SortByValue
)

// RangeRequest mirrors etcdserverpb.RangeRequest. RangeEnd empty means the
// single key Key; "\x00" means every key >= Key; otherwise [Key, RangeEnd).
type RangeRequest struct {
	Key, RangeEnd     []byte
	Limit             int64 // <= 0: no limit
	Revision          int64 // <= 0: current revision
	SortOrder         SortOrder
	SortTarget        SortTarget
	Serializable      bool // accepted; a single store has no stale replicas
	KeysOnly          bool
	CountOnly         bool
	MinModRevision    int64
	MaxModRevision    int64
	MinCreateRevision int64
	MaxCreateRevision int64
}

// RangeResponse mirrors etcdserverpb.RangeResponse.
type RangeResponse struct {
	Header ResponseHeader
	Kvs    []KeyValue
	More   bool
	Count  int64
}

// PutRequest mirrors etcdserverpb.PutRequest.
type PutRequest struct {
	Key, Value  []byte
	Lease       int64
	PrevKv      bool
	IgnoreValue bool
	IgnoreLease bool
}

// PutResponse mirrors etcdserverpb.PutResponse.
type PutResponse struct {
	Header ResponseHeader
	PrevKv *KeyValue
}

// DeleteRangeRequest mirrors etcdserverpb.DeleteRangeRequest; the key range
// is read as in RangeRequest.
type DeleteRangeRequest struct {
	Key, RangeEnd []byte
	PrevKv        bool
}

// DeleteRangeResponse mirrors etcdserverpb.DeleteRangeResponse.
type DeleteRangeResponse struct {
	Header  ResponseHeader
	Deleted int64
	PrevKvs []KeyValue
}

// CompareResult mirrors Compare.CompareResult.
type CompareResult int32

// Compare results, with etcd's numeric values.
const (
	CompareEqual CompareResult = iota
	CompareGreater
	CompareLess
	CompareNotEqual
)

// CompareTarget mirrors Compare.CompareTarget.
type CompareTarget int32

// Compare targets, with etcd's numeric values.
const (
	CompareVersion CompareTarget = iota
	CompareCreate
	CompareMod
	CompareValue
	CompareLease
)

// Compare mirrors etcdserverpb.Compare. Of Version, CreateRevision,
// ModRevision, Lease and Value only the one named by Target is read. With a
// RangeEnd, every key in the range must satisfy the comparison.
type Compare struct {
	Result         CompareResult
	Target         CompareTarget
	Key, RangeEnd  []byte
	Version        int64
	CreateRevision int64
	ModRevision    int64
	Lease          int64
	Value          []byte
}

// RequestOp mirrors etcdserverpb.RequestOp: exactly one field is set. A
// RequestOp with no field set is what etcd calls an empty union.
type RequestOp struct {
	Range       *RangeRequest
	Put         *PutRequest
	DeleteRange *DeleteRangeRequest
	Txn         *TxnRequest
}

// ResponseOp mirrors etcdserverpb.ResponseOp: the field of the request's
// kind is set.
type ResponseOp struct {
	Range       *RangeResponse
	Put         *PutResponse
	DeleteRange *DeleteRangeResponse
	Txn         *TxnResponse
}

// TxnRequest mirrors etcdserverpb.TxnRequest.
type TxnRequest struct {
	Compare []Compare
	Success []RequestOp
	Failure []RequestOp
}

// TxnResponse mirrors etcdserverpb.TxnResponse. A nested transaction's
// header revision is 0, as in etcd.
type TxnResponse struct {
	Header    ResponseHeader
	Succeeded bool
	Responses []ResponseOp
}

// CompactRequest mirrors etcdserverpb.CompactionRequest. Physical is
// accepted; the model compacts at once either way.
type CompactRequest struct {
	Revision int64
	Physical bool
}

// CompactResponse mirrors etcdserverpb.CompactionResponse.
type CompactResponse struct {
	Header ResponseHeader
}

// LeaseGrantRequest mirrors etcdserverpb.LeaseGrantRequest; ID 0 asks the
// store to choose one.
type LeaseGrantRequest struct {
	TTL int64 // seconds
	ID  int64
}

// LeaseGrantResponse mirrors etcdserverpb.LeaseGrantResponse.
type LeaseGrantResponse struct {
	Header ResponseHeader
	ID     int64
	TTL    int64 // granted TTL in seconds, after clamping to the minimum
}

// LeaseRevokeRequest mirrors etcdserverpb.LeaseRevokeRequest.
type LeaseRevokeRequest struct {
	ID int64
}

// LeaseRevokeResponse mirrors etcdserverpb.LeaseRevokeResponse.
type LeaseRevokeResponse struct {
	Header ResponseHeader
}

// LeaseKeepAliveRequest mirrors etcdserverpb.LeaseKeepAliveRequest.
type LeaseKeepAliveRequest struct {
	ID int64
}

// LeaseKeepAliveResponse mirrors etcdserverpb.LeaseKeepAliveResponse. TTL is
// 0 when the lease does not exist (etcd answers so rather than failing).
type LeaseKeepAliveResponse struct {
	Header ResponseHeader
	ID     int64
	TTL    int64
}

// LeaseTimeToLiveRequest mirrors etcdserverpb.LeaseTimeToLiveRequest.
type LeaseTimeToLiveRequest struct {
	ID   int64
	Keys bool
}

// LeaseTimeToLiveResponse mirrors etcdserverpb.LeaseTimeToLiveResponse. TTL
// is the remaining whole seconds (truncated), -1 when the lease does not
// exist. Keys are sorted (etcd returns them in no particular order).
type LeaseTimeToLiveResponse struct {
	Header     ResponseHeader
	ID         int64
	TTL        int64
	GrantedTTL int64
	Keys       [][]byte
}

// LeaseLeasesRequest mirrors etcdserverpb.LeaseLeasesRequest.
type LeaseLeasesRequest struct{}

// LeaseLeasesResponse mirrors etcdserverpb.LeaseLeasesResponse, listing
// lease ids by deadline, then id (etcd sorts by expiry only, so the order of
// equal expiries is not defined there).
type LeaseLeasesResponse struct {
	Header ResponseHeader
	Leases []int64
}

// Request is the tagged union of every request the store applies: exactly
// one field is set.
type Request struct {
	Range           *RangeRequest
	Put             *PutRequest
	DeleteRange     *DeleteRangeRequest
	Txn             *TxnRequest
	Compact         *CompactRequest
	LeaseGrant      *LeaseGrantRequest
	LeaseRevoke     *LeaseRevokeRequest
	LeaseKeepAlive  *LeaseKeepAliveRequest
	LeaseTimeToLive *LeaseTimeToLiveRequest
	LeaseLeases     *LeaseLeasesRequest

	// rangeRoom, when set, is room for the answer to Range made in the
	// same allocation as the request (see typed.Range).
	rangeRoom *rangeRoom
	// txnRoom, when set, is room for the answer to a one-op Txn made in
	// the same allocation as the request (see typed.Txn).
	txnRoom *txnRoom
}

// Response is the tagged union of answers: the field named like the
// request's is set.
type Response struct {
	Range           *RangeResponse
	Put             *PutResponse
	DeleteRange     *DeleteRangeResponse
	Txn             *TxnResponse
	Compact         *CompactResponse
	LeaseGrant      *LeaseGrantResponse
	LeaseRevoke     *LeaseRevokeResponse
	LeaseKeepAlive  *LeaseKeepAliveResponse
	LeaseTimeToLive *LeaseTimeToLiveResponse
	LeaseLeases     *LeaseLeasesResponse
}

// IsWrite reports whether r may change the store: puts, deletes, compaction,
// lease grant, revoke and keep-alive, and transactions with a put or delete
// in either branch at any depth.
func (r Request) IsWrite() bool {
	switch {
	case r.Put != nil, r.DeleteRange != nil, r.Compact != nil,
		r.LeaseGrant != nil, r.LeaseRevoke != nil, r.LeaseKeepAlive != nil:
		return true
	case r.Txn != nil:
		return txnWrites(r.Txn)
	}
	return false
}

// txnWrites reports whether t holds a put or delete anywhere.
func txnWrites(t *TxnRequest) bool {
	for _, ops := range [][]RequestOp{t.Success, t.Failure} {
		for _, op := range ops {
			if op.Put != nil || op.DeleteRange != nil || (op.Txn != nil && txnWrites(op.Txn)) {
				return true
			}
		}
	}
	return false
}

// Header returns the header of whichever response is set, or a zero header.
func (r Response) Header() ResponseHeader {
	switch {
	case r.Range != nil:
		return r.Range.Header
	case r.Put != nil:
		return r.Put.Header
	case r.DeleteRange != nil:
		return r.DeleteRange.Header
	case r.Txn != nil:
		return r.Txn.Header
	case r.Compact != nil:
		return r.Compact.Header
	case r.LeaseGrant != nil:
		return r.LeaseGrant.Header
	case r.LeaseRevoke != nil:
		return r.LeaseRevoke.Header
	case r.LeaseKeepAlive != nil:
		return r.LeaseKeepAlive.Header
	case r.LeaseTimeToLive != nil:
		return r.LeaseTimeToLive.Header
	case r.LeaseLeases != nil:
		return r.LeaseLeases.Header
	}
	return ResponseHeader{}
}
