package router

import (
	"context"
	"encoding/hex"
	"sort"
)

// Names binds model names to catalog IDs: the chain's name records. A
// name bound to an ID means that ID only; offers of other IDs announced
// under the same name are never merged with it.
type Names interface {
	// Resolve returns the ID bound to name; ok is false when no record
	// binds it.
	Resolve(ctx context.Context, name string) (id [32]byte, ok bool, err error)
}

// ParseModelID reads a catalog ID written as 64 hex digits.
func ParseModelID(s string) ([32]byte, bool) {
	var id [32]byte
	if len(s) != 2*len(id) {
		return id, false
	}
	if _, err := hex.Decode(id[:], []byte(s)); err != nil {
		return id, false
	}
	return id, true
}

// OffersOf returns every announced offer of the catalog model id, sorted
// by peer ID, whatever name each announces it under.
func (t *Table) OffersOf(id [32]byte) []Offer {
	// Offers also matches a name spelled like the ID: only the ID counts.
	// Filtered in place: at 1,000 providers a second copy of the offers
	// was a megabyte per request.
	all := t.Offers(hex.EncodeToString(id[:]))
	out := all[:0]
	for _, o := range all {
		if string(o.Model.ModelID) == string(id[:]) {
			out = append(out, o)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// IDsNamed returns the distinct catalog IDs announced under name by the
// offers keep admits, sorted.
func (t *Table) IDsNamed(name string, keep func(Offer) bool) [][32]byte {
	seen := map[[32]byte]bool{}
	for _, o := range t.Offers(name) {
		var id [32]byte
		if o.Model.Name != name || len(o.Model.ModelID) != len(id) || (keep != nil && !keep(o)) {
			continue
		}
		copy(id[:], o.Model.ModelID)
		seen[id] = true
	}
	out := make([][32]byte, 0, len(seen))
	for id := range seen {
		out = append(out, id)
	}
	sort.Slice(out, func(i, j int) bool { return string(out[i][:]) < string(out[j][:]) })
	return out
}
