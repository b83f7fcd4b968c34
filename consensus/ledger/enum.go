package ledger

// enumName is names[v]: the names of an enumeration's values in order,
// "" for a value without one. It reports false for a value without a
// name, which each String spells its own way.
func enumName(v uint8, names ...string) (string, bool) {
	if int(v) < len(names) && names[v] != "" {
		return names[v], true
	}
	return "", false
}
