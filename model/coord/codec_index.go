package coord

// tagActiveRun marks an active-run index entry.
const tagActiveRun byte = 'A'

// ActiveRunEntry is the value of an active-run index key: the etcd backend
// keeps one per Active run so that claims visit only Active runs. The run
// id repeats the key's, so a value stored under the wrong key is caught.
type ActiveRunEntry struct {
	Run RunID
}

// appendActiveRunEntry appends the encoding of a to dst.
func appendActiveRunEntry(dst []byte, a *ActiveRunEntry) []byte {
	e := encoder{b: dst}
	e.header(tagActiveRun)
	e.u64(uint64(a.Run))
	return e.b
}

// EncodeActiveRunEntry returns the encoding of a.
func EncodeActiveRunEntry(a *ActiveRunEntry) []byte { return appendActiveRunEntry(nil, a) }

// DecodeActiveRunEntry decodes an active-run index entry.
func DecodeActiveRunEntry(b []byte) (ActiveRunEntry, error) {
	d := decoder{b: b, record: "active-run entry"}
	var a ActiveRunEntry
	d.header(tagActiveRun)
	a.Run = RunID(d.u64("run id"))
	d.finish()
	if d.err != nil {
		return ActiveRunEntry{}, d.err
	}
	return a, nil
}
