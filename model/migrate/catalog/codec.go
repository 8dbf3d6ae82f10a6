package catalog

import (
	"encoding/json"
	"fmt"
)

// Encode returns the catalog's stored form.
func (c Catalog) Encode() []byte {
	b, err := json.Marshal(c)
	if err != nil {
		panic(err) // a Catalog always marshals
	}
	return b
}

// Decode parses a stored catalog.
func Decode(b []byte) (Catalog, error) {
	var c Catalog
	if err := json.Unmarshal(b, &c); err != nil {
		return Catalog{}, fmt.Errorf("catalog: decode: %w", err)
	}
	return c, nil
}
