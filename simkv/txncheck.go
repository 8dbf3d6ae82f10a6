package simkv

// checkTxn is etcd's API-layer validation of a TxnRequest (checkTxnRequest):
// the longest of the compare, success and failure lists must fit in
// maxOps, and a nested txn gets what its parent left over (maxOps minus the
// parent's longest list). Then every compare needs a key, then every op of
// success and then failure is checked in order.
func checkTxn(t *TxnRequest, maxOps int) error {
	opc := max(len(t.Compare), len(t.Success), len(t.Failure))
	if opc > maxOps {
		return ErrTooManyOps
	}
	for i := range t.Compare {
		if len(t.Compare[i].Key) == 0 {
			return ErrEmptyKey
		}
	}
	for _, ops := range [][]RequestOp{t.Success, t.Failure} {
		for i := range ops {
			if err := checkOp(&ops[i], maxOps-opc); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkOp validates one op of a txn (etcd's checkRequestOp). An op with no
// field set is what etcd's protobuf calls an empty union; etcd answers
// ErrKeyNotFound for it.
func checkOp(op *RequestOp, maxOps int) error {
	switch one(op.Range != nil) + one(op.Put != nil) + one(op.DeleteRange != nil) + one(op.Txn != nil) {
	case 0:
		return ErrKeyNotFound
	case 1:
	default:
		return ErrInvalidRequest
	}
	switch {
	case op.Range != nil:
		return checkRange(op.Range)
	case op.Put != nil:
		return checkPut(op.Put)
	case op.DeleteRange != nil:
		if len(op.DeleteRange.Key) == 0 {
			return ErrEmptyKey
		}
		return nil
	}
	return checkTxn(op.Txn, maxOps)
}

// interval is a delete's key range as etcd's checkIntervals sees it:
// [begin, end), or the single key begin when point is set. etcd does not
// translate a "\x00" range end here, so a from-key delete is the inverted
// interval [key, "\x00") and conflicts with nothing.
type interval struct {
	begin, end string
	point      bool
}

func (iv interval) contains(k string) bool {
	if iv.point {
		return k == iv.begin
	}
	return iv.begin <= k && k < iv.end
}

func anyContains(ivs []interval, k string) bool {
	for _, iv := range ivs {
		if iv.contains(k) {
			return true
		}
	}
	return false
}

// checkListIntervals is checkIntervals on a top-level list of ops. A list
// without nested txns (what clients send) is checked in place: a put
// conflicts with an earlier put of its key or with any delete of the list
// that covers it, exactly the conflicts checkIntervals finds for such a
// list, without building its map.
func checkListIntervals(ops []RequestOp) error {
	for i := range ops {
		if ops[i].Txn != nil {
			_, _, err := checkIntervals(ops)
			return err
		}
	}
	for i := range ops {
		p := ops[i].Put
		if p == nil {
			continue
		}
		for j := range ops {
			if d := ops[j].DeleteRange; d != nil && deleteCovers(d, p.Key) {
				return ErrDuplicateKey
			}
			if q := ops[j].Put; j < i && q != nil && string(q.Key) == string(p.Key) {
				return ErrDuplicateKey
			}
		}
	}
	return nil
}

// deleteCovers is interval.contains for a delete's interval, on bytes.
func deleteCovers(d *DeleteRangeRequest, k []byte) bool {
	if len(d.RangeEnd) == 0 {
		return string(k) == string(d.Key)
	}
	return string(d.Key) <= string(k) && string(k) < string(d.RangeEnd)
}

// checkIntervals is etcd's check that one list of txn ops never writes a
// key twice: no two puts of one key, and no put of a key a delete of the
// same list covers, counting nested txns. Its order of checks is etcd's,
// including what it lets through: a put in an earlier nested txn followed
// by a delete in a later one, and a key put in both branches of one nested
// txn (the branches exclude each other). It returns the puts and deletes
// of the list for the parent's check.
func checkIntervals(ops []RequestOp) (map[string]bool, []interval, error) {
	var dels []interval
	for i := range ops {
		if d := ops[i].DeleteRange; d != nil {
			if len(d.RangeEnd) != 0 {
				dels = append(dels, interval{begin: string(d.Key), end: string(d.RangeEnd)})
			} else {
				dels = append(dels, interval{begin: string(d.Key), point: true})
			}
		}
	}
	puts := map[string]bool{}
	for i := range ops {
		t := ops[i].Txn
		if t == nil {
			continue
		}
		putsThen, delsThen, err := checkIntervals(t.Success)
		if err != nil {
			return nil, nil, err
		}
		putsElse, delsElse, err := checkIntervals(t.Failure)
		if err != nil {
			return nil, nil, err
		}
		// Map order does not matter here: any conflict yields the same error.
		for k := range putsThen {
			if puts[k] || anyContains(dels, k) {
				return nil, nil, ErrDuplicateKey
			}
			puts[k] = true
		}
		for k := range putsElse {
			if puts[k] && !putsThen[k] {
				return nil, nil, ErrDuplicateKey
			}
			if anyContains(dels, k) {
				return nil, nil, ErrDuplicateKey
			}
			puts[k] = true
		}
		dels = append(dels, delsThen...)
		dels = append(dels, delsElse...)
	}
	for i := range ops {
		p := ops[i].Put
		if p == nil {
			continue
		}
		k := string(p.Key)
		if puts[k] || anyContains(dels, k) {
			return nil, nil, ErrDuplicateKey
		}
		puts[k] = true
	}
	return puts, dels, nil
}
