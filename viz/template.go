package viz

// pageHTML is the report. It loads nothing: styles, the SVG timeline, the
// zoom script and the porcupine pages are all inline.
const pageHTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>shardsim {{.Scenario}} {{.Verdict}}{{if .Property}} {{.Property}}{{end}}</title>
<style>
body { font: 13px/1.4 system-ui, sans-serif; margin: 16px; color: #222; }
h1 { font-size: 18px; margin: 0 0 8px; }
.summary td { padding: 1px 10px 1px 0; vertical-align: top; }
.summary td:first-child { color: #666; }
#verdict { padding: 8px 12px; margin: 10px 0; border-radius: 4px; font-weight: 600; }
#verdict.violation { background: #ffebee; border: 2px solid #c62828; color: #b71c1c; }
#verdict.ok { background: #e8f5e9; border: 2px solid #2e7d32; color: #1b5e20; }
#verdict.unknown { background: #fff8e1; border: 2px solid #f9a825; }
#verdict .detail { font-weight: 400; color: #333; margin-top: 4px; font-family: ui-monospace, monospace; font-size: 12px; }
.timeline { overflow-x: auto; border: 1px solid #ddd; }
svg text { font: 11px ui-monospace, monospace; }
.lane-bg { fill: #ffffff; }
.lane-bg.odd { fill: #f3f3f3; }
.lane-name { fill: #333; }
.request { fill: #1e88e5; }
.answer { fill: #43a047; }
.heal { fill: #00897b; }
.step { fill: #8e24aa; }
.fault { fill: #e53935; }
.fault-span { fill: #e53935; opacity: 0.18; }
.culprit { stroke: #000; stroke-width: 2.5; }
.violation-line { stroke: #c62828; stroke-width: 2; stroke-dasharray: 4 3; }
.legend span { margin-right: 14px; }
.legend i { display: inline-block; width: 10px; height: 10px; margin-right: 4px; }
table.tail { border-collapse: collapse; font: 12px ui-monospace, monospace; }
table.tail td { padding: 1px 8px 1px 0; white-space: nowrap; }
table.tail td:last-child { max-width: 900px; overflow: hidden; text-overflow: ellipsis; }
table.tail tr.fault td { color: #c62828; }
table.tail tr.heal td { color: #00695c; }
table.tail tr.culprit td { background: #fff3e0; font-weight: 600; }
table.tail tr.violation td { background: #ffebee; color: #b71c1c; font-weight: 700; }
details { margin: 6px 0; }
iframe { width: 100%; height: 520px; border: 1px solid #ddd; }
</style>
</head>
<body>
<h1>shardsim · {{.Scenario}}</h1>
<table class="summary">
<tr><td>run</td><td>{{.Source}}</td></tr>
<tr><td>bugs</td><td>{{.Bugs}}</td></tr>
<tr><td>swarm</td><td>{{.Swarm}}</td></tr>
<tr><td>digest</td><td>{{.Digest}}</td></tr>
{{if .Replay}}<tr><td>replay</td><td><code>{{.Replay}}</code></td></tr>{{end}}
</table>
<div id="verdict" class="{{.Verdict}}" data-property="{{.Property}}">verdict: {{.Verdict}}{{if .Property}} · {{.Property}}{{end}}
{{if .Detail}}<div class="detail">{{.Detail}}</div>{{end}}</div>

<h2>Timeline</h2>
<div class="legend"><span><i class="request" style="background:#1e88e5"></i>request</span><span><i style="background:#43a047"></i>answer</span><span><i style="background:#e53935"></i>fault ({{.Faults}})</span><span><i style="background:#00897b"></i>heal</span><span><i style="background:#8e24aa"></i>protocol step</span><span><i style="background:#fff;border:2px solid #000"></i>the violating step, or named by the violation</span>
<label>zoom <input id="zoom" type="range" min="1" max="12" value="1"></label></div>
<div class="timeline"><svg id="timeline" width="100%" height="{{.Height}}" viewBox="0 0 {{.Width}} {{.Height}}" preserveAspectRatio="none" xmlns="http://www.w3.org/2000/svg">
{{range .Lanes}}<rect class="lane-bg{{if .Odd}} odd{{end}}" x="0" y="{{.Y}}" width="100%" height="22"/>
{{end}}{{range .Lanes}}<text class="lane-name" x="4" y="{{.Y}}" dy="15">{{.Name}}</text>
{{end}}{{range .Ticks}}<line x1="{{.X}}" y1="14" x2="{{.X}}" y2="100%" stroke="#eee"/><text x="{{.X}}" y="11" text-anchor="middle">{{.Label}}</text>
{{end}}{{range .Marks}}{{if .Fault}}{{if .W}}<rect class="fault-span" x="{{.X}}" y="{{.Y}}" transform="translate(0,-9)" width="{{.W}}" height="18"><title>{{.Label}}</title></rect>{{end}}<path class="fault{{if .Culprit}} culprit{{end}}" d="M{{.X}} {{.Y}} m-5 6 l5 -11 l5 11 z"><title>{{.Label}}</title></path>
{{else if eq .Class "violation"}}{{else if or (eq .Class "step") (eq .Class "other")}}<rect class="step{{if .Culprit}} culprit{{end}}" x="{{.X}}" y="{{.Y}}" transform="translate(-3,-3)" width="6" height="6"><title>{{.Label}}</title></rect>
{{else}}<circle class="{{.Class}}{{if .Culprit}} culprit{{end}}" cx="{{.X}}" cy="{{.Y}}" r="{{if .Culprit}}5{{else}}3{{end}}"><title>{{.Label}}</title></circle>
{{end}}{{end}}{{if .HasViol}}<line id="violation-line" class="violation-line" x1="{{.ViolX}}" y1="14" x2="{{.ViolX}}" y2="100%"><title>{{.Property}}: {{.Detail}}</title></line>{{end}}
</svg></div>

<h2>Last records{{if .HasViol}} before the violation{{end}}</h2>
<table class="tail">
{{range .Tail}}<tr class="{{.Class}}"{{if eq .Class "violation"}} id="violation-row"{{end}}><td>{{.At}}</td><td>{{.Kind}}</td><td>{{.Actor}}</td><td>{{.Detail}}</td></tr>
{{end}}</table>

{{if .Porcupine}}<h2>Histories (porcupine)</h2>
{{range .Porcupine}}<details{{if .Open}} open{{end}} class="porcupine"><summary>{{.Label}}: {{.Ops}} operations, {{.Result}}</summary>
{{if .Problem}}<p>no visualisation: {{.Problem}}</p>{{else}}<iframe title="porcupine {{.Label}}" srcdoc="{{.SrcDoc}}"></iframe>{{end}}
</details>
{{end}}{{end}}
<script>
(function () {
  var svg = document.getElementById("timeline");
  var v = document.getElementById("violation-line");
  document.getElementById("zoom").addEventListener("input", function (e) {
    svg.setAttribute("width", (100 * e.target.value) + "%");
    if (v) { // keep the violation in view
      var x = parseFloat(v.getAttribute("x1")) / {{.Width}} * svg.parentNode.clientWidth * e.target.value;
      svg.parentNode.scrollLeft = Math.max(0, x - svg.parentNode.clientWidth / 2);
    }
  });
  var row = document.getElementById("violation-row");
  document.body.setAttribute("data-rendered", row ? "violation" : "no-violation");
})();
</script>
</body>
</html>
`
