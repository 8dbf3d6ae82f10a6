package scenarios

import (
	"shardsim/model/migrate/keys"
	"shardsim/tla/tlatrace"
)

// attachTLATrace records the run for trace validation against
// RangeMigrationSteps.tla (tla/tlatrace) when cfg asks for a TLA+ trace and
// the world runs the one planned split of migrate or migrate-abandon. The
// recorder only observes: the run's digest is the same with it.
func (m *migrateWorld) attachTLATrace(cfg Config) {
	if cfg.TLATrace == nil || (m.kind != splitOnce && m.kind != splitAbandoned) {
		return
	}
	p := m.opts.split
	for _, r := range initialCatalog().Routes {
		if r.ID == p.route {
			m.trace = tlatrace.NewMigration(r.Group, p.target, keys.Span{Start: p.key, End: r.End})
		}
	}
	if m.trace != nil {
		m.cluster.Observe(m.trace)
		m.meta.Observe(m.trace.Meta())
	}
}

// writeTLATrace writes the recorded trace module, if one was recorded.
func (m *migrateWorld) writeTLATrace(cfg Config) error {
	if m.trace == nil {
		return nil
	}
	return m.trace.WriteModule(cfg.TLATrace, cfg.traceModule())
}
