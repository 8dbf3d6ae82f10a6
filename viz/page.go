// Package viz renders one run as a self-contained HTML page: a timeline of
// every actor (nodes, workers, clients, the nemesis) with its requests,
// answers, faults and heals, the violation and the operations it names
// highlighted, the last records before it, and, for histories porcupine
// judges, porcupine's own visualisation annotated with the faults and the
// violation. Everything is inline (CSS, SVG, a few lines of JS, the
// porcupine pages as iframe srcdoc), so the page opens offline.
package viz

import (
	"fmt"
	"html/template"
	"io"
	"time"

	"github.com/anishathalye/porcupine"

	"shardsim/simclock"
	"shardsim/timeline"
)

// History is one history a porcupine check judges in the run.
type History struct {
	Label string
	Model porcupine.Model
	Ops   []porcupine.Operation
	// VirtualTime says the operations' call and return times are virtual
	// time (so faults can be annotated on them); otherwise they are
	// sequence numbers and only the violating operation is annotated.
	VirtualTime bool
}

// Page is what one report shows.
type Page struct {
	Scenario  string
	Source    string // "seed 7", "choices FILE (N bytes)"
	Bugs      string
	Swarm     string
	Verdict   string
	Property  string
	Detail    string
	Replay    string // the command that replays the run
	Digest    string
	Records   []simclock.Record // the whole trace, in order
	Histories []History
	// CheckTimeout bounds porcupine's search per history (0: 10s).
	CheckTimeout time.Duration
}

// geometry of the timeline, in SVG user units.
const (
	laneHeight = 22
	labelWidth = 110
	plotWidth  = 1400
	topMargin  = 24
)

// svgMark is a mark placed on the timeline.
type svgMark struct {
	X, Y, W float64
	Class   string
	Label   string
	Culprit bool
	Fault   bool
}

type pageData struct {
	Page
	Lanes     []svgLane
	Marks     []svgMark
	Height    int
	Width     int
	ViolX     float64
	HasViol   bool
	Ticks     []svgTick
	Tail      []tailRow
	Porcupine []porcupineView
	Faults    int
}

type svgLane struct {
	Name string
	Y    float64
	Odd  bool
}

type svgTick struct {
	X     float64
	Label string
}

type tailRow struct {
	At, Kind, Actor, Detail string
	Class                   string
}

// Write renders the page.
func Write(w io.Writer, p Page) error {
	d := layout(p)
	d.Porcupine = porcupineViews(p)
	return pageTemplate.Execute(w, d)
}

// layout places every mark.
func layout(p Page) pageData {
	culprits := culpritsOf(p.Detail)
	names, marks := lanes(p.Records, culprits)
	var end simclock.Time = 1
	for _, r := range p.Records {
		end = max(end, r.At)
	}
	x := func(t simclock.Time) float64 { return labelWidth + float64(t)/float64(end)*plotWidth }
	d := pageData{Page: p, Width: labelWidth + plotWidth + 20, Height: topMargin + laneHeight*len(names) + 10}
	for i, n := range names {
		d.Lanes = append(d.Lanes, svgLane{Name: n, Y: float64(topMargin + laneHeight*i), Odd: i%2 == 1})
	}
	for _, m := range marks {
		sm := svgMark{X: x(m.At), Y: float64(topMargin+laneHeight*m.Lane) + laneHeight/2, Class: m.Cat.String(), Label: m.Label, Culprit: m.Culprit}
		if m.Cat == timeline.Fault {
			d.Faults++
			sm.Fault = true
			if m.Until > m.At {
				sm.W = x(m.Until) - sm.X
			}
		}
		if m.Cat == timeline.Violation {
			d.HasViol, d.ViolX = true, sm.X
		}
		d.Marks = append(d.Marks, sm)
	}
	for i := 0; i <= 10; i++ {
		t := simclock.Time(int64(end) * int64(i) / 10)
		d.Ticks = append(d.Ticks, svgTick{X: x(t), Label: fmt.Sprintf("%.2fs", float64(t)/1e9)})
	}
	d.Tail = tail(p.Records, culprits, 60)
	return d
}

// tail is the last n records up to and including the violation.
func tail(records []simclock.Record, culprits []string, n int) []tailRow {
	endAt := len(records)
	for i, r := range records {
		if r.Kind == "violation" {
			endAt = i + 1
			break
		}
	}
	start := max(0, endAt-n)
	rows := make([]tailRow, 0, endAt-start)
	step := violationStep(records)
	for i, r := range records[start:endAt] {
		row := tailRow{At: fmtTime(r.At), Kind: r.Kind, Actor: r.Actor, Detail: r.Detail, Class: timeline.Classify(r).String()}
		if step[start+i] || names2culprit(r.Detail, culprits) {
			row.Class += " culprit"
		}
		rows = append(rows, row)
	}
	return rows
}

var pageTemplate = template.Must(template.New("page").Parse(pageHTML))
