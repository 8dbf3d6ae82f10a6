package simkv

// Code is the gRPC status code etcd attaches to an error. The values are
// gRPC's, so a test can compare them with a real server's codes.
type Code uint32

// The gRPC codes etcd's KV and lease errors use.
const (
	CodeInvalidArgument    Code = 3
	CodeNotFound           Code = 5
	CodeFailedPrecondition Code = 9
	CodeOutOfRange         Code = 11
	CodeInternal           Code = 13
)

// Error is a KV-semantics error, as etcd reports it to a client: its text is
// exactly the message a client sees.
type Error struct {
	code Code
	msg  string
}

// Error returns etcd's client-visible message.
func (e *Error) Error() string { return e.msg }

// Code returns the gRPC status code etcd sends with the error.
func (e *Error) Code() Code { return e.code }

func newError(c Code, msg string) *Error { return &Error{code: c, msg: msg} }

// Errors etcd returns for KV and lease requests, compare with errors.Is or ==.
var (
	// ErrEmptyKey: a request, op or compare has no key.
	ErrEmptyKey = newError(CodeInvalidArgument, "etcdserver: key is not provided")
	// ErrKeyNotFound: a put with ignore_value or ignore_lease on a missing
	// key; also etcd's answer to an empty RequestOp inside a txn.
	ErrKeyNotFound = newError(CodeInvalidArgument, "etcdserver: key not found")
	// ErrValueProvided: ignore_value set together with a value.
	ErrValueProvided = newError(CodeInvalidArgument, "etcdserver: value is provided")
	// ErrLeaseProvided: ignore_lease set together with a lease.
	ErrLeaseProvided = newError(CodeInvalidArgument, "etcdserver: lease is provided")
	// ErrTooManyOps: a txn list holds more ops than the store allows.
	ErrTooManyOps = newError(CodeInvalidArgument, "etcdserver: too many operations in txn request")
	// ErrDuplicateKey: a txn writes one key twice, or puts a key it deletes.
	ErrDuplicateKey = newError(CodeInvalidArgument, "etcdserver: duplicate key given in txn request")
	// ErrInvalidSortOption: an unknown sort order or target. etcd 3.5+ answers
	// so; etcd 3.4 has no check and its server panics on an unknown target.
	ErrInvalidSortOption = newError(CodeInvalidArgument, "etcdserver: invalid sort option")
	// ErrCompacted: the revision asked for has been compacted away.
	ErrCompacted = newError(CodeOutOfRange, "etcdserver: mvcc: required revision has been compacted")
	// ErrFutureRev: the revision asked for is above the current revision.
	ErrFutureRev = newError(CodeOutOfRange, "etcdserver: mvcc: required revision is a future revision")
	// ErrLeaseNotFound: the lease does not exist.
	ErrLeaseNotFound = newError(CodeNotFound, "etcdserver: requested lease not found")
	// ErrLeaseExist: a grant names an id already in use.
	ErrLeaseExist = newError(CodeFailedPrecondition, "etcdserver: lease already exists")
	// ErrLeaseTTLTooLarge: a grant's TTL is above MaxLeaseTTL.
	ErrLeaseTTLTooLarge = newError(CodeOutOfRange, "etcdserver: too large lease TTL")

	// ErrEmptyWatcherRange is the cancel reason of a watch whose range is
	// empty (key >= range end); etcd reports it in the watch response.
	ErrEmptyWatcherRange = newError(CodeInvalidArgument, "mvcc: watcher range is empty")

	// ErrInvalidRequest: a Request or RequestOp with more than one field set,
	// or a Request with none. etcd's protobuf unions cannot express these.
	ErrInvalidRequest = newError(CodeInvalidArgument, "simkv: request must set exactly one operation")
	// ErrTxnWouldCrash: a txn that etcd 3.4 accepts but then panics on while
	// applying (a put with ignore_value or ignore_lease on a key that an
	// earlier from-key delete of the same txn removed). The store answers
	// this error and changes nothing instead of modelling the crash.
	ErrTxnWouldCrash = newError(CodeInternal, "simkv: txn would crash etcd 3.4 (ignore_value/ignore_lease put on a key deleted earlier in the txn)")
)
