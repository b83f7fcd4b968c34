package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/tenzrod/tenzrod/node"
	"github.com/tenzrod/tenzrod/receipts/hwkey"
)

// chooseBackend settles the identity backend before init writes anything.
// A backend the operator named must work here, or init refuses; the role's
// default (tpm for validators and providers) falls back to the software
// key on a machine without a TPM, and says so, because a default that
// fails would leave a half-made home behind for the operator to --force.
func chooseBackend(out io.Writer, cfg *node.Config, fs *pflag.FlagSet) error {
	backend, device := cfg.Identity.Backend, cfg.Identity.Device
	if fs.Changed("tpm-device") {
		device, _ = fs.GetString("tpm-device")
	}
	if fs.Changed("key-backend") {
		v, _ := fs.GetString("key-backend")
		b, err := hwkey.ParseBackend(v)
		if err != nil {
			return nil // precheckInit names the flag's bad value with the config key
		}
		if b != hwkey.BackendTPM {
			return nil
		}
		if err := hwkey.ProbeTPM(device); err != nil {
			return fmt.Errorf("init: --key-backend tpm: %w; on a machine without a TPM use --key-backend software (a key file) or tpm-sim (the simulator, for tests)", err)
		}
		return nil
	}
	if hwkey.Backend(backend) != hwkey.BackendTPM {
		return nil
	}
	if err := hwkey.ProbeTPM(device); err != nil {
		cfg.Identity.Backend = string(hwkey.BackendSoftware)
		fmt.Fprintf(out, "no TPM here (%v):\n  using the software key backend: a key file under identity/, NOT hardware-backed, shown as \"software\" everywhere\n  (--key-backend tpm on a machine with a TPM, or tpm-sim for the simulator, chooses another)\n", err)
	}
	return nil
}

// precheckInit validates the config init is about to write, flags
// applied, before any file exists: a bad --region or --log-level must not
// leave a generated model or keys behind (nor --chain-p2p-listen, given
// as chainP2P, set only later). The provider's test model is
// stood in for by its path; its ID is only known once it is generated.
func precheckInit(cfg node.Config, nf *nodeFlags, fs *pflag.FlagSet, chainP2P string) error {
	if chainP2P != "" {
		cfg.Chain.P2PListen = chainP2P
	}
	if cfg.Role == node.RoleProvider {
		cfg.Provider.Models = []node.ModelConfig{node.DevnetModel(filepath.Join("models", node.DevnetModelName), "")}
	}
	nf.apply(&cfg, fs)
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	return nil
}
