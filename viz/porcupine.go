package viz

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"

	"shardsim/timeline"
)

// porcupineView is one history's porcupine visualisation, ready to embed.
type porcupineView struct {
	Label   string
	Result  string // porcupine's verdict on the history
	Open    bool   // shown unfolded: the history the violation is about
	Ops     int
	SrcDoc  string // porcupine's page, embedded as an iframe's srcdoc
	Problem string // why there is no visualisation, if there is none
}

// porcupineViews checks every history again with porcupine's verbose
// checker (the run's own check is not verbose) and renders its page with
// annotations: faults on their own row (virtual-time histories only) and
// the operations the violation names.
func porcupineViews(p Page) []porcupineView {
	timeout := p.CheckTimeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	culprits := culpritsOf(p.Detail)
	var out []porcupineView
	for _, h := range p.Histories {
		v := porcupineView{Label: h.Label, Ops: len(h.Ops)}
		res, info := porcupine.CheckOperationsVerbose(h.Model, h.Ops, timeout)
		v.Result = map[porcupine.CheckResult]string{porcupine.Ok: "linearizable", porcupine.Illegal: "NOT linearizable", porcupine.Unknown: "undecided (timed out)"}[res]
		notes, named := annotations(p, h, culprits)
		info.AddAnnotations(notes)
		v.Open = res == porcupine.Illegal || named || strings.Contains(p.Detail, h.Label)
		var buf bytes.Buffer
		if err := porcupine.Visualize(h.Model, info, &buf); err != nil {
			v.Problem = err.Error()
		} else {
			v.SrcDoc = buf.String()
		}
		out = append(out, v)
	}
	return out
}

// annotations marks faults and the violation on a history's time axis and
// the operations the violation names on their own client rows. named says
// whether any operation of the history is one of them.
func annotations(p Page, h History, culprits []string) ([]porcupine.Annotation, bool) {
	var notes []porcupine.Annotation
	named := false
	describe := h.Model.DescribeOperation
	for _, op := range h.Ops {
		if describe == nil {
			break
		}
		d := describe(op.Input, op.Output)
		if names2culprit(d, culprits) {
			named = true
			end := op.Return
			if end > 1<<61 {
				end = op.Call
			}
			notes = append(notes, porcupine.Annotation{ClientId: op.ClientId, Start: op.Call, End: end,
				Description: "violation: " + p.Property, Details: d, BackgroundColor: "#ff8a80"})
		}
	}
	if !h.VirtualTime {
		return notes, named
	}
	names, marks := lanes(p.Records, nil)
	for _, m := range marks {
		switch m.Cat {
		case timeline.Fault:
			end := int64(m.Until)
			if end < int64(m.At) {
				end = int64(m.At)
			}
			notes = append(notes, porcupine.Annotation{Tag: "faults", Start: int64(m.At), End: end,
				Description: m.Kind + " " + names[m.Lane], Details: m.Label, BackgroundColor: "#ffcc80"})
		case timeline.Violation:
			notes = append(notes, porcupine.Annotation{Tag: "violation", Start: int64(m.At),
				Description: p.Property, Details: fmt.Sprintf("%s: %s", p.Property, p.Detail), BackgroundColor: "#ff8a80"})
		}
	}
	return notes, named
}
