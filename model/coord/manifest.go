package coord

// InitialShard is one entry of a run's shard manifest.
type InitialShard struct {
	Shard ShardID
	Spec  ShardSpec
}

// ManifestViolation is why a manifest was refused.
type ManifestViolation uint8

const (
	ManifestOK          ManifestViolation = iota // the manifest is valid
	ManifestEmpty                                // no shards
	ManifestDerivedID                            // a root id has bit 63 set
	ManifestDuplicateID                          // a shard id appears twice
	ManifestEmptyRange                           // a shard has an empty key range
	ManifestTooLarge                             // more shards than Config.MaxManifestShards
)

// String describes the violation.
func (v ManifestViolation) String() string {
	switch v {
	case ManifestOK:
		return "ok"
	case ManifestEmpty:
		return "manifest has no shards"
	case ManifestDerivedID:
		return "root shard id has the derived bit set"
	case ManifestDuplicateID:
		return "shard id listed twice"
	case ManifestEmptyRange:
		return "shard has an empty key range"
	case ManifestTooLarge:
		return "manifest has more shards than the limit"
	}
	return "manifest violation(?)"
}

// validateManifest checks a register_shards manifest: non-empty, at most
// limit shards (Config.MaxManifestShards, one limit every backend
// enforces), root ids (bit 63 clear) and unique, every range non-empty.
// Root ranges may overlap: roots can describe different sources, told
// apart by their metadata.
func validateManifest(shards []InitialShard, limit int) ManifestViolation {
	if len(shards) == 0 {
		return ManifestEmpty
	}
	if len(shards) > limit {
		return ManifestTooLarge
	}
	seen := make(map[ShardID]struct{}, len(shards))
	for _, s := range shards {
		if s.Shard.IsDerived() {
			return ManifestDerivedID
		}
		if _, dup := seen[s.Shard]; dup {
			return ManifestDuplicateID
		}
		seen[s.Shard] = struct{}{}
		if !s.Spec.WellFormed() {
			return ManifestEmptyRange
		}
	}
	return ManifestOK
}
