package simkv

import "shardsim/simclock"

// String renders the request briefly and deterministically (its trace
// detail as text).
func (r Request) String() string {
	d := simclock.NewDetail()
	r.AppendDetail(d)
	return d.String()
}

// String renders the response briefly and deterministically (its trace
// detail as text).
func (r Response) String() string {
	d := simclock.NewDetail()
	r.AppendDetail(d)
	return d.String()
}

// AppendDetail adds the request to a trace detail as one group named after
// its kind: range(...), put(...), delete(...), txn(...), compact(...), and
// the lease calls. Keys and values go in as bytes, unformatted.
func (r Request) AppendDetail(d *simclock.Detail) {
	switch {
	case r.Range != nil:
		appendRange(d, r.Range)
	case r.Put != nil:
		appendPut(d, r.Put)
	case r.DeleteRange != nil:
		appendDelete(d, r.DeleteRange)
	case r.Txn != nil:
		appendTxn(d, r.Txn)
	case r.Compact != nil:
		d.Open("compact").Int("", r.Compact.Revision).Close()
	case r.LeaseGrant != nil:
		d.Open("grant").Int("id", r.LeaseGrant.ID).Int("ttl", r.LeaseGrant.TTL).Close()
	case r.LeaseRevoke != nil:
		d.Open("revoke").Int("", r.LeaseRevoke.ID).Close()
	case r.LeaseKeepAlive != nil:
		d.Open("keepalive").Int("", r.LeaseKeepAlive.ID).Close()
	case r.LeaseTimeToLive != nil:
		d.Open("ttl").Int("", r.LeaseTimeToLive.ID).Close()
	case r.LeaseLeases != nil:
		d.Open("leases").Close()
	default:
		d.Open("empty").Close()
	}
}

// AppendDetail adds the response to a trace detail: its revision, then what
// its kind returned (key-values, counts, a txn's branch and answers).
func (r Response) AppendDetail(d *simclock.Detail) {
	d.Int("rev", r.Header().Revision)
	switch {
	case r.Range != nil:
		appendRangeResp(d, r.Range)
	case r.Put != nil:
		if r.Put.PrevKv != nil {
			d.Open("prev")
			appendKV(d, r.Put.PrevKv)
			d.Close()
		}
	case r.DeleteRange != nil:
		d.Int("deleted", r.DeleteRange.Deleted)
	case r.Txn != nil:
		appendTxnResp(d, r.Txn)
	case r.LeaseGrant != nil:
		d.Int("id", r.LeaseGrant.ID).Int("ttl", r.LeaseGrant.TTL)
	case r.LeaseKeepAlive != nil:
		d.Int("id", r.LeaseKeepAlive.ID).Int("ttl", r.LeaseKeepAlive.TTL)
	case r.LeaseTimeToLive != nil:
		t := r.LeaseTimeToLive
		d.Int("id", t.ID).Int("ttl", t.TTL).Int("granted", t.GrantedTTL).Uint("keys", uint64(len(t.Keys)))
	case r.LeaseLeases != nil:
		d.Uint("leases", uint64(len(r.LeaseLeases.Leases)))
	}
}

// appendSpan adds a key range: the key, and its end when there is one
// (0x00 for "every key from here on").
func appendSpan(d *simclock.Detail, key, end []byte) {
	d.Bytes("", key)
	if len(end) > 0 {
		d.Bytes("end", end)
	}
}

// intIf adds a named integer when it is not zero.
func intIf(d *simclock.Detail, name string, v int64) {
	if v != 0 {
		d.Int(name, v)
	}
}

func appendRange(d *simclock.Detail, r *RangeRequest) {
	d.Open("range")
	appendSpan(d, r.Key, r.RangeEnd)
	intIf(d, "rev", r.Revision)
	intIf(d, "limit", r.Limit)
	intIf(d, "order", int64(r.SortOrder))
	intIf(d, "target", int64(r.SortTarget))
	intIf(d, "minmod", r.MinModRevision)
	intIf(d, "maxmod", r.MaxModRevision)
	intIf(d, "mincreate", r.MinCreateRevision)
	intIf(d, "maxcreate", r.MaxCreateRevision)
	d.FlagIf("keys", r.KeysOnly).FlagIf("count", r.CountOnly).Close()
}

func appendPut(d *simclock.Detail, p *PutRequest) {
	d.Open("put").Bytes("", p.Key).Bytes("", p.Value)
	intIf(d, "lease", p.Lease)
	d.FlagIf("prev", p.PrevKv).FlagIf("ignore-value", p.IgnoreValue).FlagIf("ignore-lease", p.IgnoreLease).Close()
}

func appendDelete(d *simclock.Detail, r *DeleteRangeRequest) {
	d.Open("delete")
	appendSpan(d, r.Key, r.RangeEnd)
	d.FlagIf("prev", r.PrevKv).Close()
}

var compareOps = [...]string{"=", ">", "<", "!="}
var compareTargets = [...]string{"version", "create", "mod", "value", "lease"}

// appendTxn adds txn(if(cmp(...)...) then(...) else(...)); each compare is
// cmp(target key [end=...] op operand).
func appendTxn(d *simclock.Detail, t *TxnRequest) {
	d.Open("txn").Open("if")
	for _, c := range t.Compare {
		d.Open("cmp")
		if int(c.Target) < len(compareTargets) {
			d.Str("", compareTargets[c.Target])
		} else {
			d.Int("target", int64(c.Target))
		}
		appendSpan(d, c.Key, c.RangeEnd)
		if int(c.Result) < len(compareOps) {
			d.Text(compareOps[c.Result])
		} else {
			d.Int("result", int64(c.Result))
		}
		switch c.Target {
		case CompareVersion:
			d.Int("", c.Version)
		case CompareCreate:
			d.Int("", c.CreateRevision)
		case CompareMod:
			d.Int("", c.ModRevision)
		case CompareValue:
			d.Bytes("", c.Value)
		case CompareLease:
			d.Int("", c.Lease)
		}
		d.Close()
	}
	d.Close()
	appendOps(d, "then", t.Success)
	appendOps(d, "else", t.Failure)
	d.Close()
}

func appendOps(d *simclock.Detail, label string, ops []RequestOp) {
	d.Open(label)
	for _, op := range ops {
		Request{Range: op.Range, Put: op.Put, DeleteRange: op.DeleteRange, Txn: op.Txn}.AppendDetail(d)
	}
	d.Close()
}

// appendKV adds one key-value as key value create=.. mod=.. ver=.. [lease=..].
func appendKV(d *simclock.Detail, kv *KeyValue) {
	d.Bytes("", kv.Key).Bytes("", kv.Value).Int("create", kv.CreateRevision).Int("mod", kv.ModRevision).Int("ver", kv.Version)
	intIf(d, "lease", kv.Lease)
}

func appendRangeResp(d *simclock.Detail, r *RangeResponse) {
	d.Int("count", r.Count).FlagIf("more", r.More)
	for i := range r.Kvs {
		d.Open("kv")
		appendKV(d, &r.Kvs[i])
		d.Close()
	}
}

func appendTxnResp(d *simclock.Detail, t *TxnResponse) {
	branch := "else"
	if t.Succeeded {
		branch = "then"
	}
	d.Open(branch)
	for _, op := range t.Responses {
		d.Open("resp")
		Response{Range: op.Range, Put: op.Put, DeleteRange: op.DeleteRange, Txn: op.Txn}.AppendDetail(d)
		d.Close()
	}
	d.Close()
}
