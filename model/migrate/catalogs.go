package migrate

import (
	"bytes"
	"fmt"
	"reflect"

	"shardsim/model/migrate/catalog"
)

// catalogCache holds the catalogs a world decoded last, by their stored
// bytes. Every node's and coordinator's watcher receives every snapshot of
// the catalog key, and coordinators read it back on refresh: decoding each
// anew made the same routes again and again. A catalog is a value nobody
// changes (every change makes a new one, see catalog.Catalog), so its
// holders can share one decoded copy. The rule that makes this safe: a
// catalog the cache returned (its Routes array above all) is shared by
// every node's engine, every coordinator and the migrator, and must never
// be modified in place; a holder that wants a changed catalog makes one
// with Clone. Env.CheckCatalogCache verifies it for the snapshots still
// cached (an evicted one is not checked); the scenarios' tests call it at
// the end of their runs (TestMigrateCachedCatalogsUnchanged), not every run.
type catalogCache struct {
	entries [catalogCacheSize]cachedCatalog
	next    int // the entry the next miss replaces
}

// catalogCacheSize is how many snapshots the cache keeps: a run publishes
// a few, and a lagging watcher or coordinator catches up through the last
// ones.
const catalogCacheSize = 4

// cachedCatalog is one decoded snapshot and the bytes it was stored as.
type cachedCatalog struct {
	stored []byte // a copy (nil: the entry is empty)
	cat    catalog.Catalog
}

// decode returns catalog.Decode(b), decoded once per distinct snapshot (a
// nil cache decodes every time).
func (c *catalogCache) decode(b []byte) (catalog.Catalog, error) {
	if c == nil {
		return catalog.Decode(b)
	}
	for i := range c.entries {
		if e := &c.entries[i]; e.stored != nil && bytes.Equal(e.stored, b) {
			return e.cat, nil
		}
	}
	cat, err := catalog.Decode(b)
	if err != nil {
		return cat, err
	}
	c.entries[c.next] = cachedCatalog{stored: bytes.Clone(b), cat: cat}
	c.next = (c.next + 1) % catalogCacheSize
	return cat, nil
}

// CheckCatalogCache decodes every catalog the world's cache holds again
// from its stored bytes and reports the first one a holder changed in
// place (nil: none), and how many it compared. Tests call it at the end of
// a run.
func (e *Env) CheckCatalogCache() (compared int, err error) {
	for _, c := range e.catalogs.entries {
		if c.stored == nil {
			continue
		}
		fresh, err := catalog.Decode(c.stored)
		if err != nil {
			return compared, err
		}
		if !reflect.DeepEqual(fresh, c.cat) {
			return compared, fmt.Errorf("cached catalog changed in place: holds %s, stored %s", c.cat, fresh)
		}
		compared++
	}
	return compared, nil
}
