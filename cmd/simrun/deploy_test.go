package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

var deployDir = filepath.Join("..", "..", "deploy")

// checkSweepArgs parses a deploy file's simrun sweep arguments exactly as
// simrun would, as shard i of a run with the given environment.
func checkSweepArgs(t *testing.T, args []string, vars map[string]string) *sweepPlan {
	t.Helper()
	if len(args) == 0 || args[0] != "sweep" {
		t.Fatalf("not a sweep: %v", args)
	}
	fs := newFlagSet("sweep")
	var f sweepFlags
	f.world.register(fs)
	f.register(fs)
	if err := parseFlags(fs, args[1:]); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	var stderr bytes.Buffer
	plan, err := planSweep(&env{stdout: &bytes.Buffer{}, stderr: &stderr, getenv: func(k string) string { return vars[k] }}, &f)
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return plan
}

// indexedJob is the part of a batch/v1 Job the sweep manifest relies on.
type indexedJob struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Spec struct {
		CompletionMode       string `yaml:"completionMode"`
		Completions          int    `yaml:"completions"`
		Parallelism          int    `yaml:"parallelism"`
		BackoffLimitPerIndex *int   `yaml:"backoffLimitPerIndex"`
		PodFailurePolicy     struct {
			Rules []struct {
				Action      string `yaml:"action"`
				OnExitCodes struct {
					ContainerName string `yaml:"containerName"`
					Operator      string `yaml:"operator"`
					Values        []int  `yaml:"values"`
				} `yaml:"onExitCodes"`
			} `yaml:"rules"`
		} `yaml:"podFailurePolicy"`
		Template struct {
			Spec struct {
				RestartPolicy string `yaml:"restartPolicy"`
				Containers    []struct {
					Name  string   `yaml:"name"`
					Image string   `yaml:"image"`
					Args  []string `yaml:"args"`
				} `yaml:"containers"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

// The Kubernetes Indexed Job manifest is a valid Job (kubectl parses it
// where kubectl is installed; the schema check below runs everywhere) whose
// pods each run a valid sweep shard, with -shards equal to the Job's
// completions, printing only the JSON result.
func TestKubernetesManifest(t *testing.T) {
	path := filepath.Join(deployDir, "kubernetes", "sweep-indexed-job.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	kubectlValidate(t, path)
	var job indexedJob
	if err := yaml.Unmarshal(data, &job); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	s := job.Spec
	if job.APIVersion != "batch/v1" || job.Kind != "Job" || job.Metadata.Name == "" || s.CompletionMode != "Indexed" ||
		s.Completions < 2 || s.Parallelism < 1 || s.Parallelism > s.Completions || s.Template.Spec.RestartPolicy != "Never" ||
		len(s.Template.Spec.Containers) != 1 {
		t.Fatalf("not an Indexed Job of sweep shards: %+v", job)
	}
	c := s.Template.Spec.Containers[0]
	if s.BackoffLimitPerIndex == nil || len(s.PodFailurePolicy.Rules) != 1 {
		t.Fatal("a failed index must not be retried (backoffLimitPerIndex with a FailIndex rule)")
	}
	rule := s.PodFailurePolicy.Rules[0]
	if rule.Action != "FailIndex" || rule.OnExitCodes.ContainerName != c.Name || rule.OnExitCodes.Operator != "In" ||
		!slices.Equal(rule.OnExitCodes.Values, []int{exitViolation, exitUnknown}) {
		t.Fatalf("pod failure policy %+v", rule)
	}
	i := slices.Index(c.Args, "-shards")
	if i < 0 || i+1 >= len(c.Args) || c.Args[i+1] != strconv.Itoa(s.Completions) {
		t.Fatalf("-shards must equal completions (%d): %v", s.Completions, c.Args)
	}
	if !slices.Contains(c.Args, "-json") || !slices.Contains(c.Args, "-quiet") {
		t.Fatalf("the pods' logs must hold only the JSON result: %v", c.Args)
	}
	var next uint64
	for idx := 0; idx < s.Completions; idx++ {
		plan := checkSweepArgs(t, c.Args, map[string]string{"JOB_COMPLETION_INDEX": strconv.Itoa(idx)})
		if plan.shard.index != idx || plan.shard.count != s.Completions || plan.empty {
			t.Fatalf("index %d runs shard %+v", idx, plan.shard)
		}
		if idx == 0 {
			next = plan.all.lo
		}
		if plan.mine.lo != next || idx == s.Completions-1 && plan.mine.hi != plan.all.hi {
			t.Fatalf("index %d runs seeds %v: the shards do not tile %v", idx, plan.mine, plan.all)
		}
		next = plan.mine.hi + 1
	}
}

// kubectlValidate asks kubectl to parse the manifest: a client-side dry run
// where an API server answers (it needs one for discovery), else kubectl's
// offline parse (label --local). Without kubectl it logs and returns.
func kubectlValidate(t *testing.T, path string) {
	t.Helper()
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Logf("kubectl not installed: the schema check in Go stands alone")
		return
	}
	out, err := exec.Command(kubectl, "create", "--dry-run=client", "--validate=false", "-f", path, "-o", "json").CombinedOutput()
	if err == nil {
		checkKubectlJSON(t, out)
		return
	}
	if !regexp.MustCompile(`connection refused|unable to recognize|no configuration|the server`).Match(out) {
		t.Fatalf("kubectl create --dry-run=client: %v\n%s", err, out)
	}
	t.Logf("kubectl create --dry-run=client needs an API server (%s); parsing offline instead", firstLine(string(out)))
	out, err = exec.Command(kubectl, "label", "--local", "-f", path, "validated=true", "-o", "json").Output()
	if err != nil {
		t.Fatalf("kubectl label --local: %v\n%s", err, out)
	}
	checkKubectlJSON(t, out)
}

func checkKubectlJSON(t *testing.T, out []byte) {
	t.Helper()
	var obj struct {
		Kind string `json:"kind"`
		Spec struct {
			CompletionMode string `json:"completionMode"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(out, &obj); err != nil || obj.Kind != "Job" || obj.Spec.CompletionMode != "Indexed" {
		t.Fatalf("kubectl read the manifest as %+v (%v)", obj, err)
	}
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return l
}

// githubWorkflow is the part of a workflow the sweep example relies on.
type githubWorkflow struct {
	On struct {
		WorkflowDispatch struct {
			Inputs map[string]struct {
				Default string `yaml:"default"`
			} `yaml:"inputs"`
		} `yaml:"workflow_dispatch"`
	} `yaml:"on"`
	Jobs map[string]struct {
		Needs    any    `yaml:"needs"`
		If       string `yaml:"if"`
		Strategy struct {
			FailFast *bool `yaml:"fail-fast"`
			Matrix   struct {
				Shard []int `yaml:"shard"`
			} `yaml:"matrix"`
		} `yaml:"strategy"`
		Steps []struct {
			Uses string `yaml:"uses"`
			Run  string `yaml:"run"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

// The GitHub Actions example runs one valid sweep shard per matrix entry,
// the matrix and -shard agreeing, and merges every shard's result.
func TestGitHubActionsExample(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(deployDir, "github", "sweep.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var wf githubWorkflow
	if err := yaml.Unmarshal(data, &wf); err != nil {
		t.Fatal(err)
	}
	sweep, merge := wf.Jobs["sweep"], wf.Jobs["merge"]
	shards := sweep.Strategy.Matrix.Shard
	if len(shards) < 2 || sweep.Strategy.FailFast == nil || *sweep.Strategy.FailFast {
		t.Fatalf("the sweep job needs a shard matrix and fail-fast: false: %+v", sweep.Strategy)
	}
	for i, s := range shards {
		if s != i {
			t.Fatalf("matrix shards %v: want 0..n-1", shards)
		}
	}
	var script string
	for _, st := range sweep.Steps {
		if strings.Contains(st.Run, "simrun sweep") {
			script = st.Run
		}
	}
	inputs := wf.On.WorkflowDispatch.Inputs
	for i := range shards {
		line := strings.NewReplacer(`"${{ inputs.scenario }}"`, inputs["scenario"].Default, `"${{ inputs.seeds }}"`, inputs["seeds"].Default,
			"${{ matrix.shard }}", strconv.Itoa(i), "\\\n", " ").Replace(script)
		line, _, _ = strings.Cut(line, "\n")
		fields := strings.Fields(line)
		k := slices.Index(fields, "sweep")
		if k < 0 {
			t.Fatalf("no sweep in %q", line)
		}
		plan := checkSweepArgs(t, fields[k:], nil)
		if plan.shard.index != i || plan.shard.count != len(shards) || plan.flags.out == "" {
			t.Fatalf("matrix entry %d runs shard %+v, -out %q", i, plan.shard, plan.flags.out)
		}
	}
	if merge.Needs != "sweep" || merge.If != "always()" {
		t.Fatalf("the merge job must follow every shard: needs %v if %q", merge.Needs, merge.If)
	}
	var merges bool
	for _, st := range merge.Steps {
		merges = merges || strings.Contains(st.Run, "simrun merge shards/*/result.json")
	}
	if !merges {
		t.Fatal("the merge job does not merge the shards' results")
	}
}

// make help lists every target that has a ## comment, with its text.
func TestMakeHelp(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	out, err := exec.Command("make", "-s", "-C", filepath.Join("..", ".."), "help").Output()
	if err != nil {
		t.Fatalf("make help: %v", err)
	}
	makefile, err := os.ReadFile(filepath.Join("..", "..", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	documented := regexp.MustCompile(`(?m)^## ([A-Za-z0-9_-]+): (.{0,30})`).FindAllStringSubmatch(string(makefile), -1)
	if len(documented) < 10 {
		t.Fatalf("only %d documented targets", len(documented))
	}
	for _, d := range documented {
		if !regexp.MustCompile(`(?m)^` + d[1] + `:`).Match(makefile) {
			continue // a continuation line that happens to look like a target
		}
		if !strings.Contains(string(out), "  "+d[1]+" ") || !strings.Contains(string(out), d[2]) {
			t.Errorf("make help lacks %s (%q):\n%s", d[1], d[2], out)
		}
	}
}
