# shardsim — make targets. `make test` is what CI runs (see .ci/run).

GO        ?= go
SEEDS     ?= 1-500
SCENARIO  ?= kv
FUZZTIME  ?= 30s
BUG       ?= coord.no-fence-check
SEED      ?= 15
MINTIME   ?= 3000x
COORD_SCENARIO ?= coord-zombie
BENCHTIME ?= 1s
TEST_TIMEOUT ?= 20m
TLA2TOOLS ?= ../shared/tools/tla2tools.jar

.PHONY: help test test-long vet install bench bench-etcd fuzz sweep etcd-conformance etcd-oracle etcd36 corpus determinism bugtable sweep-coord fuzz-coord shrink-coord sweep-keymove shrink check-small tlc trace-validate pgo

## help: list these targets with what each does (from the Makefile's ## comments)
help:
	@awk 'NR == FNR { if (match($$0, /^[A-Za-z0-9_-]+:/)) target[substr($$0, 1, RLENGTH - 1)] = 1; next } \
	     /^## / { text = substr($$0, 4); name = text; sub(/:.*/, "", name); \
	              if (index(text, name ":") == 1 && (name in target)) printf "\n  %-16s%s", name, substr(text, length(name) + 2); \
	              else printf "\n  %-16s %s", "", text } \
	     END { print "" }' $(firstword $(MAKEFILE_LIST)) $(firstword $(MAKEFILE_LIST))

## test: vet, then every test (the real-etcd conformance test runs when etcd is installed); the clean sweeps run
## their CI sizes; each package's tests are bounded by TEST_TIMEOUT (a hang guard, generous for a loaded 2-core machine)
test: vet
	$(GO) test -count=1 -timeout $(TEST_TIMEOUT) ./...

## test-long: every test with the long clean sweeps (SHARDSIM_LONG=1: 1000-4000 seeds each) and 1000 real-etcd
## conformance sequences; for before a release or after a protocol change, not for every push
test-long: vet
	SHARDSIM_LONG=1 SHARDSIM_CONF_SEQS=1000 $(GO) test -count=1 -timeout 180m ./...

## vet: gofmt and go vet over the module
vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1)
	$(GO) vet ./...

## install: build simrun into GOBIN (default: `go env GOPATH`/bin), its VCS revision linked in for simrun version
install:
	$(GO) install -ldflags "-X main.linkRevision=$$(git rev-parse HEAD 2>/dev/null)$$(test -z "$$(git status --porcelain 2>/dev/null)" || echo +dirty)" ./cmd/simrun

## bench: micro-benchmarks in benchstat-friendly form (pipe to a file, compare with benchstat)
bench:
	$(GO) test -run '^$$' -bench . -benchtime $(BENCHTIME) -count 5 ./simclock/ ./simkv/ ./model/... ./scenarios/

## pgo: re-record cmd/simrun/default.pgo, the CPU profile `go build` optimises simrun with (profile-guided
## optimisation: hot calls inlined, interface calls devirtualised): every scenario's benchmark under the profiler;
## rerun after large changes to hot code (a stale profile still builds, it only helps less)
pgo:
	@dir=$$(mktemp -d) && trap 'rm -rf "$$dir"' EXIT && \
	$(GO) test -run '^$$' -bench 'BenchmarkScenario' -benchtime 20x -cpuprofile "$$dir/cpu.prof" -o "$$dir/scenarios.test" ./scenarios/ >/dev/null && \
	cp "$$dir/cpu.prof" cmd/simrun/default.pgo && echo "wrote cmd/simrun/default.pgo"

## bench-etcd: the same operation mix against simkv and a real etcd on loopback, with the ratio
bench-etcd:
	SHARDSIM_BENCH_RATIO=1 $(GO) test -count=1 -run 'TestOpMixRatio' -v ./realetcd/etcdconf/
	$(GO) test -run '^$$' -bench 'BenchmarkOpMix' -benchtime $(BENCHTIME) ./realetcd/etcdconf/

## fuzz: run every fuzz target for FUZZTIME each
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

## sweep: SCENARIO over SEEDS (make sweep SCENARIO=kv SEEDS=1-2000); failing runs are saved under a new directory
## in the OS temp dir, which the summary names
sweep:
	$(GO) run ./cmd/simrun sweep -scenario $(SCENARIO) -seeds $(SEEDS)

## etcd-conformance: simkv against a real etcd, failing (not skipping) without one
etcd-conformance:
	SHARDSIM_REQUIRE_ETCD=1 $(GO) test -count=1 -v -run 'Conformance' ./realetcd/etcdconf/

## etcd-oracle: the coordination differential oracle over a real etcd (the same model/coord code over etcd's client), failing without one
etcd-oracle:
	SHARDSIM_REQUIRE_ETCD=1 $(GO) test -count=1 -v -run 'TestDifferentialOracleRealEtcd' ./model/coord/

## etcd36: the simkv conformance suite and the coordination oracle against etcd 3.6 (embedded, built from tools/etcd36)
etcd36:
	$(GO) build -C tools/etcd36 -o $(CURDIR)/.etcd36 .
	SHARDSIM_ETCD=$(CURDIR)/.etcd36 SHARDSIM_REQUIRE_ETCD=1 $(GO) test -count=1 -v -run 'TestConformance|TestLeaseExpiryConformance' ./realetcd/etcdconf/
	SHARDSIM_ETCD=$(CURDIR)/.etcd36 SHARDSIM_REQUIRE_ETCD=1 $(GO) test -count=1 -v -run 'TestDifferentialOracleRealEtcd' ./model/coord/

## determinism: run seeds twice and at GOMAXPROCS 1 and 2, compare digests
determinism:
	$(GO) test -count=1 -run 'Determinism' -v ./scenarios/

## corpus: re-record corpus digests and golden trace excerpts deliberately (after an intended behaviour
## change); entries whose verdict or property changed are refused. Prints what moved per entry, then the
## files it rewrote (git status); review them with git diff corpus/.
corpus:
	@log=$$(mktemp); SHARDSIM_UPDATE_CORPUS=1 $(GO) test -count=1 -v -run '^TestReplayCorpus$$' ./corpus/ >$$log 2>&1; st=$$?; \
	  grep -v -e '^=== RUN' -e '--- PASS' -e '^PASS$$' $$log; rm -f $$log; \
	  echo "files rewritten:"; git status --short -- corpus/; exit $$st

## bugtable: every registered bug against its scenario's sweep; prints bug, property, seeds to first detection
## (the table is written to a temporary file and printed: nothing is left in the tree)
bugtable:
	@out=$$(mktemp); SHARDSIM_BUGTABLE_OUT=$$out $(GO) test -count=1 -run 'TestBugTable' ./scenarios/; st=$$?; \
	  cat $$out; rm -f $$out; exit $$st

## sweep-coord: every coordination scenario over SEEDS with every bug off (make sweep-coord SEEDS=1-2000)
sweep-coord:
	$(GO) run ./cmd/simrun sweep -scenario coord -seeds $(SEEDS)
	$(GO) run ./cmd/simrun sweep -scenario coord-zombie -seeds $(SEEDS)
	$(GO) run ./cmd/simrun sweep -scenario coord-churn -seeds $(SEEDS)

## fuzz-coord: hunt for a run that exposes BUG (empty BUG: any violation) with coverage-guided fuzzing
fuzz-coord:
	SHARDSIM_FUZZ_BUG=$(BUG) $(GO) test -run '^$$' -fuzz '^FuzzCoordination$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 200x -parallel 1 ./scenarios/

## shrink-coord: let Go's fuzz minimiser shrink the seeded failure (BUG, SEED, COORD_SCENARIO) to a small choice
## stream: the recording goes into the fuzz cache, whose failing entries the fuzzer minimises first; the
## result lands in scenarios/testdata/fuzz/FuzzCoordination/ (move it to the corpus, see README). Bound the
## minimiser by executions (MINTIME=3000x), not time: one cut short by the fuzz deadline keeps nothing.
shrink-coord:
	dir=$$($(GO) env GOCACHE)/fuzz/shardsim/scenarios/FuzzCoordination; mkdir -p $$dir; \
	$(GO) run ./cmd/simrun run -scenario $(COORD_SCENARIO) -seed $(SEED) -bug $(BUG) -record-fuzz $$dir/seeded-$(SEED) >/dev/null; \
	SHARDSIM_FUZZ_BUG=$(BUG) $(GO) test -run '^$$' -fuzz '^FuzzCoordination$$' -fuzztime 30m -timeout 60m -fuzzminimizetime $(MINTIME) -parallel 1 ./scenarios/; \
	ls -l scenarios/testdata/fuzz/FuzzCoordination/

## sweep-keymove: both key-migration scenarios over SEEDS with every bug off (make sweep-keymove SEEDS=1-1000)
sweep-keymove:
	$(GO) run ./cmd/simrun sweep -scenario keymove -seeds $(SEEDS)
	$(GO) run ./cmd/simrun sweep -scenario keymove-resume -seeds $(SEEDS)

## shrink: minimise a failing run (a corpus entry) to a corpus entry (make shrink IN=corpus/kv/x.json OUT=small.json)
shrink:
	$(GO) run ./cmd/simrun shrink -in $(IN) -out $(OUT)

## check-small: model-check coord and kv on their small presets with every bug off (make check-small CHECK_SCENARIOS=coord)
CHECK_SCENARIOS ?= coord kv
check-small:
	@for s in $(CHECK_SCENARIOS); do echo "== simrun check -scenario $$s -bounds small"; $(GO) run ./cmd/simrun check -scenario $$s -bounds small || exit $$?; done

## tlc: model-check every TLA+ configuration of tla/ (safe ones must pass, gap ones must fail with the
## property their EXPECT line names) and print states/distinct/depth/seconds; TLA2TOOLS=path overrides the jar
tlc:
	TLA2TOOLS=$(TLA2TOOLS) $(GO) run ./tla/tlcrun -dir tla

## trace-validate: every seed of SEEDS of each scenario with a TLA+ trace specification, its trace replayed by
## TLC against the specification (make trace-validate SEEDS=1-200); TRACE_SCENARIOS narrows the list; the migration
## scenarios' seeds go TRACE_BATCH to a TLC run
TRACE_SCENARIOS ?= coord coord-zombie coord-churn migrate migrate-abandon
TRACE_BATCH ?= 25
trace-validate:
	@for s in $(TRACE_SCENARIOS); do \
	  echo "== $$s"; TLA2TOOLS=$(TLA2TOOLS) $(GO) run ./tla/tracecheck -scenario $$s -seeds $(SEEDS) -batch $(TRACE_BATCH) || exit 1; \
	done
