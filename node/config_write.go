package node

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"

	"github.com/tenzrod/tenzrod/internal/tomlconf"
)

// configHeader opens every written config file.
const configHeader = `tenzrod node configuration, written by tenzrod init from the parts' own config structs. Flags given on the command line override it.
Relative paths are relative to this file's directory (the node's --home).`

// RenderConfig returns cfg as commented TOML: every key Load accepts, each
// with the comment its part gives it, so an operator reads the whole
// surface in one file.
func RenderConfig(cfg Config) ([]byte, error) {
	def := Default(cfg.Role)
	omit := func(path string) bool {
		switch path {
		case "provider":
			// Another role's file carries no [provider]; Load's defaults
			// stand in for it, so only a default section is left out.
			return cfg.Role != RoleProvider && reflect.DeepEqual(cfg.Provider, def.Provider)
		case "validator":
			return cfg.Role != RoleValidator && len(cfg.Validator.Models) == 0
		case "router.buyers":
			// A provider takes no buyers: no example entry for it.
			return cfg.Role == RoleProvider && len(cfg.Router.Buyers) == 0
		}
		return false
	}
	b, err := tomlconf.Render(configHeader, cfg, omit)
	if err != nil {
		return nil, fmt.Errorf("config: render: %w", err)
	}
	return b, nil
}

// WriteConfig writes cfg to HOME/config.toml (cfg.Home), refusing to
// overwrite an existing file unless force is set.
func WriteConfig(cfg Config, force bool) error {
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	b, err := RenderConfig(cfg)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(cfg.Home, 0o700); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	path := filepath.Join(cfg.Home, ConfigFile)
	flag := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if !force {
		flag |= os.O_EXCL
	}
	f, err := os.OpenFile(path, flag, 0o600)
	if err != nil {
		if os.IsExist(err) {
			return fmt.Errorf("config: %s exists (use --force to overwrite)", path)
		}
		return fmt.Errorf("config: %w", err)
	}
	if _, err := f.Write(b); err != nil {
		return fmt.Errorf("config: %w", errors.Join(err, f.Close()))
	}
	return f.Close()
}
