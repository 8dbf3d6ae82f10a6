package coord

import (
	"testing"
	"time"

	"shardsim/simkv"
)

// testEtcdConfig is the etcd configuration of the tests: short backoffs,
// so that retries barely move the KV's clock against logical time.
func testEtcdConfig(cfg Config) EtcdConfig {
	return EtcdConfig{Config: cfg, BackoffBase: 100 * time.Microsecond, BackoffMax: time.Millisecond}.WithDefaults()
}

// newEtcdDirect returns an etcd backend over a fresh fault-free store.
// Its clock stays at zero unless the test moves it, so owner bindings
// never expire on their own.
func newEtcdDirect(t testing.TB, cfg Config) *Etcd {
	t.Helper()
	ec := testEtcdConfig(cfg)
	if err := ec.Validate(); err != nil {
		t.Fatal(err)
	}
	return NewEtcd(simkv.NewDirect(simkv.NewStore(simkv.StoreConfig{}), 0), ec)
}

// instance returns cfg for the coordinator instance id: coordinators that
// share a store need distinct instances (EtcdConfig.Instance).
func instance(cfg EtcdConfig, id uint64) EtcdConfig {
	cfg.Instance = id
	return cfg
}

// mustReference returns a fresh reference with the default configuration.
func mustReference(t testing.TB) *Reference {
	t.Helper()
	r, err := NewReference(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	return r
}
