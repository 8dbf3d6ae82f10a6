// Package property names the properties shardsim judges and says how a
// judgement is reported. It is a leaf: every checker, the bug registry,
// the scenarios and the CLI import it, and it imports nothing of the
// project, so the names a report prints, the names the bug registry
// expects and the names a TLA+ invariant carries are one set of constants
// that a typo cannot leave.
//
// The catalog (Catalog) mirrors ../shared/design/PROPERTIES.md, row for
// row; a test holds the two together. Names the project adds beyond that
// document are listed in Extras.
package property
