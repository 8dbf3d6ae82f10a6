package keymove

import "shardsim/simkv"

// mapBeforeCopy is keymove.map-before-copy: the key's map entry is switched
// to its target before the copy is made. It reports whether the executor
// may go on.
func (e *Executor) mapBeforeCopy(c Conn, i int) bool {
	mv := e.plan.Moves[i]
	err := e.retry(c, "map-before-copy", func() error {
		_, err := c.Meta().Txn(simkv.TxnRequest{
			Compare: []simkv.Compare{{Target: simkv.CompareValue, Result: simkv.CompareEqual, Key: e.keys.MapKey(mv.Key), Value: []byte(mv.Source)}},
			Success: []simkv.RequestOp{{Put: &simkv.PutRequest{Key: e.keys.MapKey(mv.Key), Value: []byte(mv.Target)}}},
		})
		return err
	})
	if err != nil {
		e.fail(i, "retries")
		return false
	}
	return true
}
