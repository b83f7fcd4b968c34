package tomlconf

import (
	"fmt"
	"strings"

	"github.com/BurntSushi/toml"
)

// Decode reads raw over v (a pointer to a struct holding the defaults).
// A key no field of v takes is an error naming it with its table.
func Decode(raw []byte, v any) error {
	md, err := toml.Decode(string(raw), v)
	if err != nil {
		return fmt.Errorf("tomlconf: %w", err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		keys := make([]string, len(und))
		for i, k := range und {
			keys[i] = k.String()
		}
		return fmt.Errorf("tomlconf: unknown key(s): %s", strings.Join(keys, ", "))
	}
	return nil
}
