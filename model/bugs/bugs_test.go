package bugs

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	s, err := Parse(" coord.split-gap ", "coord.no-fence-check", "coord.split-gap", "")
	if err != nil {
		t.Fatal(err)
	}
	if got := s.String(); got != "coord.no-fence-check,coord.split-gap" {
		t.Fatalf("set = %s, want sorted and deduplicated", got)
	}
	if !s.Has(CoordSplitGap) || s.Has(CoordRunReopen) {
		t.Fatal("Has disagrees with the parsed names")
	}
	if _, err := Parse("coord.nope"); err == nil || !strings.Contains(err.Error(), "unknown bug") {
		t.Fatalf("unknown name: err = %v", err)
	}
	if !None.Empty() || None.String() != "none" {
		t.Fatal("the zero set must be empty")
	}
}

func TestRegistryEntriesAreComplete(t *testing.T) {
	all := All()
	if len(all) == 0 {
		t.Fatal("empty registry")
	}
	for i, b := range all {
		if i > 0 && all[i-1].Name >= b.Name {
			t.Fatalf("All is not sorted at %s", b.Name)
		}
		if !strings.HasPrefix(b.Name, b.Protocol+".") {
			t.Errorf("%s: name does not start with its protocol %q", b.Name, b.Protocol)
		}
		if b.Description == "" || len(b.Properties) == 0 || b.Scenario == "" {
			t.Errorf("%s: description, properties and scenario are required", b.Name)
		}
		if b.Budget < 1 || b.Budget > 500 {
			t.Errorf("%s: budget %d outside 1..500", b.Name, b.Budget)
		}
	}
	if n := len(ForProtocol("coord")); n != 23 {
		t.Errorf("coord bugs: %d, BUGS.md lists 14 and issue 9 added 9 (acquire-own-live-lease, ended-run-accepts, unpark-bumps-first, error-names-tenant, lease-before-replay, park-drops-reason, claim-ignores-cooldown, claim-skips-expired, renew-misreports)", n)
	}
	if n := len(ForProtocol("kv")); n != 9 {
		t.Errorf("kv bugs: %d, the two of the kv scenario and issue 9's seven server mutations make 9", n)
	}
	if n := len(ForProtocol("keymove")); n != 6 {
		t.Errorf("keymove bugs: %d, BUGS.md lists 4 and the race fix and rollback bugs make 6", n)
	}
	layer2 := map[string]bool{}
	for _, n := range []string{MigrateNoReadFence, MigrateReadFenceLessThan, MigrateOwnershipTimeoutServes,
		MigrateFenceTSNoBarrier, MigrateQuorumFenceAck, MigrateDeltaFromSnapshot} {
		if _, ok := Lookup(n); !ok {
			t.Errorf("layer-2 bug %s of BUGS.md is not registered", n)
		}
		layer2[n] = true
	}
	layer1 := 0
	for _, b := range ForProtocol("migrate") {
		if !layer2[b.Name] && !strings.Contains(b.Description, "seed 000") {
			layer1++
		}
	}
	if layer1 != 11 {
		t.Errorf("layer-1 migrate bugs: %d, BUGS.md lists 11", layer1)
	}
	if extra := len(ForProtocol("migrate")) - 11 - len(layer2); extra < 15 {
		t.Errorf("%d wrong designs from seed 000's review rounds registered beyond BUGS.md, want at least 15", extra)
	}
}
