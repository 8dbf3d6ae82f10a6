package simkv

import (
	"strconv"
	"strings"
)

// String renders the request briefly and deterministically, for traces.
func (r Request) String() string {
	var b strings.Builder
	switch {
	case r.Range != nil:
		writeRange(&b, r.Range)
	case r.Put != nil:
		writePut(&b, r.Put)
	case r.DeleteRange != nil:
		writeDelete(&b, r.DeleteRange)
	case r.Txn != nil:
		writeTxn(&b, r.Txn)
	case r.Compact != nil:
		b.WriteString("compact(" + itoa(r.Compact.Revision) + ")")
	case r.LeaseGrant != nil:
		b.WriteString("grant(id=" + itoa(r.LeaseGrant.ID) + " ttl=" + itoa(r.LeaseGrant.TTL) + ")")
	case r.LeaseRevoke != nil:
		b.WriteString("revoke(" + itoa(r.LeaseRevoke.ID) + ")")
	case r.LeaseKeepAlive != nil:
		b.WriteString("keepalive(" + itoa(r.LeaseKeepAlive.ID) + ")")
	case r.LeaseTimeToLive != nil:
		b.WriteString("ttl(" + itoa(r.LeaseTimeToLive.ID) + ")")
	case r.LeaseLeases != nil:
		b.WriteString("leases()")
	default:
		b.WriteString("empty()")
	}
	return b.String()
}

// String renders the response briefly and deterministically, for traces.
func (r Response) String() string {
	var b strings.Builder
	b.WriteString("rev=" + itoa(r.Header().Revision))
	switch {
	case r.Range != nil:
		writeRangeResp(&b, r.Range)
	case r.Put != nil:
		if r.Put.PrevKv != nil {
			b.WriteString(" prev=")
			writeKV(&b, r.Put.PrevKv)
		}
	case r.DeleteRange != nil:
		b.WriteString(" deleted=" + itoa(r.DeleteRange.Deleted))
	case r.Txn != nil:
		writeTxnResp(&b, r.Txn)
	case r.LeaseGrant != nil:
		b.WriteString(" id=" + itoa(r.LeaseGrant.ID) + " ttl=" + itoa(r.LeaseGrant.TTL))
	case r.LeaseKeepAlive != nil:
		b.WriteString(" id=" + itoa(r.LeaseKeepAlive.ID) + " ttl=" + itoa(r.LeaseKeepAlive.TTL))
	case r.LeaseTimeToLive != nil:
		t := r.LeaseTimeToLive
		b.WriteString(" id=" + itoa(t.ID) + " ttl=" + itoa(t.TTL) + "/" + itoa(t.GrantedTTL) + " keys=" + strconv.Itoa(len(t.Keys)))
	case r.LeaseLeases != nil:
		b.WriteString(" leases=" + strconv.Itoa(len(r.LeaseLeases.Leases)))
	}
	return b.String()
}

func itoa(i int64) string { return strconv.FormatInt(i, 10) }

func quote(b []byte) string { return strconv.Quote(string(b)) }

func writeSpan(b *strings.Builder, key, end []byte) {
	b.WriteString(quote(key))
	switch {
	case len(end) == 1 && end[0] == 0:
		b.WriteString("..")
	case len(end) > 0:
		b.WriteString(".." + quote(end))
	}
}

func writeRange(b *strings.Builder, r *RangeRequest) {
	b.WriteString("range(")
	writeSpan(b, r.Key, r.RangeEnd)
	opt := func(name string, v int64) {
		if v != 0 {
			b.WriteString(" " + name + "=" + itoa(v))
		}
	}
	opt("rev", r.Revision)
	opt("limit", r.Limit)
	opt("order", int64(r.SortOrder))
	opt("target", int64(r.SortTarget))
	opt("minmod", r.MinModRevision)
	opt("maxmod", r.MaxModRevision)
	opt("mincreate", r.MinCreateRevision)
	opt("maxcreate", r.MaxCreateRevision)
	if r.KeysOnly {
		b.WriteString(" keys")
	}
	if r.CountOnly {
		b.WriteString(" count")
	}
	b.WriteString(")")
}

func writePut(b *strings.Builder, p *PutRequest) {
	b.WriteString("put(" + quote(p.Key) + "=" + quote(p.Value))
	if p.Lease != 0 {
		b.WriteString(" lease=" + itoa(p.Lease))
	}
	if p.PrevKv {
		b.WriteString(" prev")
	}
	if p.IgnoreValue {
		b.WriteString(" ignore-value")
	}
	if p.IgnoreLease {
		b.WriteString(" ignore-lease")
	}
	b.WriteString(")")
}

func writeDelete(b *strings.Builder, d *DeleteRangeRequest) {
	b.WriteString("delete(")
	writeSpan(b, d.Key, d.RangeEnd)
	if d.PrevKv {
		b.WriteString(" prev")
	}
	b.WriteString(")")
}

var compareOps = [...]string{"=", ">", "<", "!="}
var compareTargets = [...]string{"version", "create", "mod", "value", "lease"}

func writeTxn(b *strings.Builder, t *TxnRequest) {
	b.WriteString("txn(if")
	for _, c := range t.Compare {
		b.WriteString(" ")
		if int(c.Target) < len(compareTargets) {
			b.WriteString(compareTargets[c.Target])
		}
		b.WriteString("(")
		writeSpan(b, c.Key, c.RangeEnd)
		b.WriteString(")")
		if int(c.Result) < len(compareOps) {
			b.WriteString(compareOps[c.Result])
		}
		switch c.Target {
		case CompareVersion:
			b.WriteString(itoa(c.Version))
		case CompareCreate:
			b.WriteString(itoa(c.CreateRevision))
		case CompareMod:
			b.WriteString(itoa(c.ModRevision))
		case CompareValue:
			b.WriteString(quote(c.Value))
		case CompareLease:
			b.WriteString(itoa(c.Lease))
		}
	}
	writeOps(b, " then", t.Success)
	writeOps(b, " else", t.Failure)
	b.WriteString(")")
}

func writeOps(b *strings.Builder, label string, ops []RequestOp) {
	b.WriteString(label)
	for _, op := range ops {
		b.WriteString(" ")
		b.WriteString(Request{Range: op.Range, Put: op.Put, DeleteRange: op.DeleteRange, Txn: op.Txn}.String())
	}
}

func writeKV(b *strings.Builder, kv *KeyValue) {
	b.WriteString(quote(kv.Key) + "=" + quote(kv.Value) + "@" + itoa(kv.CreateRevision) + "/" + itoa(kv.ModRevision) + "/v" + itoa(kv.Version))
	if kv.Lease != 0 {
		b.WriteString("/l" + itoa(kv.Lease))
	}
}

func writeRangeResp(b *strings.Builder, r *RangeResponse) {
	b.WriteString(" count=" + itoa(r.Count))
	if r.More {
		b.WriteString(" more")
	}
	b.WriteString(" [")
	for i := range r.Kvs {
		if i > 0 {
			b.WriteString(" ")
		}
		writeKV(b, &r.Kvs[i])
	}
	b.WriteString("]")
}

func writeTxnResp(b *strings.Builder, t *TxnResponse) {
	if t.Succeeded {
		b.WriteString(" then[")
	} else {
		b.WriteString(" else[")
	}
	for i, op := range t.Responses {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(Response{Range: op.Range, Put: op.Put, DeleteRange: op.DeleteRange, Txn: op.Txn}.String())
	}
	b.WriteString("]")
}
