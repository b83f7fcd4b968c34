package router

import (
	"encoding/hex"
	"slices"
	"strings"

	"github.com/tenzrod/tenzrod/gossip"
)

// modelIndex lists the announced entries of each catalog ID and of each
// model name, each list sorted by peer ID. A request's offers then cost
// the providers of its model, not a sort of the whole table: at 1,000
// providers the scan took 2 ms and 2.4 MB of garbage per request
// (docs/SCALE.md).
type modelIndex struct {
	byID   map[string][]*entry // key: the 32 ID bytes as a string
	byName map[string][]*entry
}

func newModelIndex() modelIndex {
	return modelIndex{byID: map[string][]*entry{}, byName: map[string][]*entry{}}
}

// keys are the index keys of an announcement: its IDs and its names.
func keys(a *gossip.Announcement) (ids, names []string) {
	if a == nil {
		return nil, nil
	}
	for _, m := range a.Models {
		if id := string(m.ModelID); !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
		if m.Name != "" && !slices.Contains(names, m.Name) {
			names = append(names, m.Name)
		}
	}
	return ids, names
}

// update moves e from the lists of its previous announcement to those of
// its next one.
func (x modelIndex) update(e *entry, prev, next *gossip.Announcement) {
	pi, pn := keys(prev)
	ni, nn := keys(next)
	for _, k := range pi {
		if !slices.Contains(ni, k) {
			remove(x.byID, k, e)
		}
	}
	for _, k := range pn {
		if !slices.Contains(nn, k) {
			remove(x.byName, k, e)
		}
	}
	for _, k := range ni {
		insert(x.byID, k, e)
	}
	for _, k := range nn {
		insert(x.byName, k, e)
	}
}

func byPeer(a, b *entry) int { return strings.Compare(string(a.peer), string(b.peer)) }

// insert adds e to m[k] in peer order, once.
func insert(m map[string][]*entry, k string, e *entry) {
	l := m[k]
	i, found := slices.BinarySearchFunc(l, e, byPeer)
	if found {
		return
	}
	m[k] = slices.Insert(l, i, e)
}

func remove(m map[string][]*entry, k string, e *entry) {
	l := m[k]
	i, found := slices.BinarySearchFunc(l, e, byPeer)
	if !found {
		return
	}
	if l = slices.Delete(l, i, i+1); len(l) == 0 {
		delete(m, k)
		return
	}
	m[k] = l
}

// catalogID reads model as a catalog ID only when spelled as the table
// writes IDs (64 lower-case hex digits): "ABC…" names no ID here.
func catalogID(model string) ([32]byte, bool) {
	id, ok := ParseModelID(model)
	return id, ok && hex.EncodeToString(id[:]) == model
}

// lookup returns the entries announcing model as a name or, when it is
// spelled as a catalog ID, as that ID, in peer order, each once.
func (x modelIndex) lookup(model string) []*entry {
	named := x.byName[model]
	id, ok := catalogID(model)
	if !ok {
		return named
	}
	ided := x.byID[string(id[:])]
	if len(named) == 0 {
		return ided
	}
	// Merge two peer-ordered lists, dropping the entries in both.
	out := make([]*entry, 0, len(named)+len(ided))
	i, j := 0, 0
	for i < len(named) || j < len(ided) {
		switch {
		case j == len(ided) || i < len(named) && byPeer(named[i], ided[j]) < 0:
			out = append(out, named[i])
			i++
		case i == len(named) || byPeer(named[i], ided[j]) > 0:
			out = append(out, ided[j])
			j++
		default:
			out = append(out, named[i])
			i, j = i+1, j+1
		}
	}
	return out
}
