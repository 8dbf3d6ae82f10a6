package keymovecheck

import "shardsim/property"

// violation builds a violation of p about key (empty: no subject).
func violation(p property.Name, key, format string, args ...any) *property.Violation {
	v := property.Violated(p, format, args...)
	if key != "" {
		v = v.About(property.SubjectKey, key)
	}
	return v
}
