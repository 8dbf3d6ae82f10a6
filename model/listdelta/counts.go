package listdelta

import "shardsim/model/migrate/keys"

// The counted collections (seed 001, Part II): a hash's fields, a set's
// members and a sorted set's members are rows of their own (wide-column),
// and the count lives in base metadata plus deltas exactly as a list's
// length does. Adding a member that is absent writes the member and a
// delta of +1; removing one that is present deletes it and writes -1. Two
// concurrent adds of one new member write the same row, so the second to
// commit conflicts (first committer wins) instead of counting it twice.

// add writes member of collection kind uk (value: a hash field's value, a
// sorted-set member's score) and reports whether it was new.
func (s *Store) add(kind Kind, uk, member, value string) (bool, error) {
	out, err := s.run(func(a *attempt) (any, error) {
		a.primary = uk
		k := a.s.lay.memberKey(kind, uk, member)
		cur, err := a.get(k, true)
		if err != nil {
			return nil, err
		}
		if cur.Found && cur.Version.Value == value {
			return false, nil
		}
		a.put(k, value)
		if !cur.Found {
			a.putDelta(kind, uk, Meta{Len: 1})
		}
		return !cur.Found, nil
	}, nil)
	if err != nil {
		return false, err
	}
	return out.(bool), nil
}

// remove deletes member of collection kind uk and reports whether it was
// there.
func (s *Store) remove(kind Kind, uk, member string) (bool, error) {
	out, err := s.run(func(a *attempt) (any, error) {
		a.primary = uk
		k := a.s.lay.memberKey(kind, uk, member)
		cur, err := a.get(k, true)
		if err != nil || !cur.Found {
			return false, err
		}
		a.del(k)
		a.putDelta(kind, uk, Meta{Len: -1})
		return true, nil
	}, nil)
	if err != nil {
		return false, err
	}
	return out.(bool), nil
}

// count returns the count of collection kind uk (base plus deltas).
func (s *Store) count(kind Kind, uk string) (int64, error) {
	out, err := s.run(func(a *attempt) (any, error) {
		a.primary = uk
		r, err := a.resolveLimit(kind, uk)
		return r.Len, err
	}, nil)
	if err != nil {
		return 0, err
	}
	return out.(int64), nil
}

// HSet sets field of hash uk and reports whether the field is new.
func (s *Store) HSet(uk, field, value string) (bool, error) { return s.add(Hash, uk, field, value) }

// HDel deletes field of hash uk and reports whether it existed.
func (s *Store) HDel(uk, field string) (bool, error) { return s.remove(Hash, uk, field) }

// HLen returns the number of fields of hash uk.
func (s *Store) HLen(uk string) (int64, error) { return s.count(Hash, uk) }

// SAdd adds member to set uk and reports whether it is new.
func (s *Store) SAdd(uk, member string) (bool, error) { return s.add(Set, uk, member, "") }

// SRem removes member from set uk and reports whether it was there.
func (s *Store) SRem(uk, member string) (bool, error) { return s.remove(Set, uk, member) }

// SCard returns the number of members of set uk.
func (s *Store) SCard(uk string) (int64, error) { return s.count(Set, uk) }

// ZAdd sets member's score in sorted set uk and reports whether it is new.
func (s *Store) ZAdd(uk, member, score string) (bool, error) { return s.add(ZSet, uk, member, score) }

// ZRem removes member from sorted set uk and reports whether it was there.
func (s *Store) ZRem(uk, member string) (bool, error) { return s.remove(ZSet, uk, member) }

// ZCard returns the number of members of sorted set uk.
func (s *Store) ZCard(uk string) (int64, error) { return s.count(ZSet, uk) }

// memberSpan is the raw range of collection kind uk's member rows.
func (l layout) memberSpan(kind Kind, uk string) (keys.Family, keys.Span) {
	f, _, _, sub := kind.family()
	return f, l.prefixSpan(f, sub, uk)
}
