package main

import (
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/spf13/cobra"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/node"
	"github.com/tenzrod/tenzrod/p2p"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// maxUnbonding is the longest unbonding delay the ledger accepts.
const maxUnbonding = 365 * 24 * time.Hour

func newTxRegisterCmd() *cobra.Command {
	var (
		o         txOpts
		home      string
		bond      amountFlag
		unbonding time.Duration
	)
	cmd := &cobra.Command{
		Use:   "register --home PROVIDER_HOME [--key OPERATOR_KEY] [--bond N]",
		Short: "Register a provider machine on chain with the key's account as its operator",
		Long: `register registers the provider machine of --home (its hardware identity key,
its ML-DSA-65 key and its libp2p peer key, all read from that home) with the
account of --key as operator, and bonds --bond micro-units from that account.
The machine's three keys sign (chain ID, operator, machine ID, peer ID), so
run it where the provider home is. Default --key: PROVIDER_HOME/account.key,
the key a provider registers itself with at start.

Without --bond it bonds the chain's minimum serving bond (tenzro_getParams).
A machine or peer already registered by another operator cannot be taken.`,
		Example: `  # a new provider home registered by a fresh operator key funded by the devnet's faucet
  tenzrod init --home ~/.tenzrod/provider --role provider --key-backend tpm-sim
  tenzrod keys account new --out op.key
  tenzrod tx transfer --api $API --key .devnet/faucet.key --to OPERATOR_ACCOUNT --amount 2_000_000_000
  tenzrod tx register --api $API --home ~/.tenzrod/provider --key op.key --bond 1_000_000_000`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			if err := requireHome(home); err != nil {
				return err
			}
			if unbonding < 0 || unbonding > maxUnbonding || unbonding%time.Second != 0 {
				return fmt.Errorf("--unbonding %s: want whole seconds between 0s and %s", unbonding, maxUnbonding)
			}
			cfg, err := node.Load(home)
			if err != nil {
				return fmt.Errorf("--home: %w", err)
			}
			if cfg.Role != node.RoleProvider {
				return fmt.Errorf("--home %s: a %s home, not a provider", home, cfg.Role)
			}
			if o.keyFile == "" {
				o.keyFile = cfg.Path(node.AccountKeyFile)
			}
			peerKey, err := readPeerKey(cfg.P2PConfig().KeyFile)
			if err != nil {
				return fmt.Errorf("--home: %w", err)
			}
			hw := cfg.HWKeyConfig()
			if _, err := os.Stat(filepath.Join(hw.Dir, identity.PQSeedFile)); errors.Is(err, fs.ErrNotExist) {
				// Open would create a new identity: another machine.
				return fmt.Errorf("--home %s: no machine identity in %s (create the home with `tenzrod init --role provider`)", home, hw.Dir)
			}
			id, err := identity.Open(hw)
			if err != nil {
				return fmt.Errorf("--home %s: %w", home, err) // err says "identity: …"
			}
			defer func() { err = errors.Join(err, id.Close()) }() // a TPM key flushes its handle here
			s, err := o.open(cmd)
			if err != nil {
				return err
			}
			amt := bond.v
			if !bond.set {
				var params ledger.Params
				if err := callInto(cmd.Context(), s.client, "tenzro_getParams", nil, &params); err != nil {
					return err
				}
				amt = params.MinServingBond
			}
			reg, err := signRegistration(id, peerKey, s.chainID, s.account, amt, uint64(unbonding/time.Second))
			if err != nil {
				return err
			}
			fmt.Fprintf(s.out, "%-10s %s\n%-10s %s\n", "machine", reg.MachineID, "peer", reg.PeerID)
			return s.submit(fmt.Sprintf("register machine %s, bond %d micro-units", reg.MachineID, amt), reg)
		},
	}
	o.register(cmd)
	cmd.Flags().Lookup("key").Usage = "operator account key file that signs and pays the bond (default PROVIDER_HOME/account.key)"
	cmd.Flags().StringVar(&home, "home", "", "provider node home whose machine and peer keys sign the registration (required)")
	cmd.Flags().Var(&bond, "bond", "serving bond in micro-units, an integer > 0 (default: the chain's min_serving_bond)")
	cmd.Flags().DurationVar(&unbonding, "unbonding", 24*time.Hour, "unbonding delay: the wait between tx unbond and tx withdraw-bond, whole seconds, at most 8760h")
	return cmd
}

// readPeerKey reads the libp2p key of a home; unlike the node at start it
// never creates one, since a new key would be another peer.
func readPeerKey(path string) (crypto.PrivKey, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("no libp2p key at %s (create the home with `tenzrod init --role provider`)", path)
	}
	return p2p.LoadOrCreateKey(path)
}

// signRegistration builds a registration of the machine of id and the
// peer of peerKey for operator on chainID, signed by the hardware, ML-DSA-65
// and peer keys as node/provider does at start.
func signRegistration(id *identity.Identity, peerKey crypto.PrivKey, chainID string, operator terms.AccountID,
	bond, unbondingSecs uint64) (*ledger.ProviderRegister, error) {
	pid, err := peer.IDFromPrivateKey(peerKey)
	if err != nil {
		return nil, fmt.Errorf("peer key: %w", err)
	}
	der, err := x509.MarshalPKIXPublicKey(id.HWPublicKey())
	if err != nil {
		return nil, fmt.Errorf("hardware key: %w", err)
	}
	reg := &ledger.ProviderRegister{MachineID: id.MachineID(), HWPubDER: der, PQPub: id.PQPublicKey().Bytes(),
		PeerID: pid.String(), Bond: bond, UnbondingSecs: unbondingSecs}
	payload, err := reg.SigningPayload(chainID, operator)
	if err != nil {
		return nil, fmt.Errorf("registration payload: %w", err)
	}
	if reg.HWSig, reg.PQSig, err = id.SignRegistration(payload); err != nil {
		return nil, err
	}
	if reg.PeerSig, err = identity.SignRegistrationPeer(peerKey, payload); err != nil {
		return nil, err
	}
	return reg, nil
}

// machineFlag parses --machine.
func machineFlag(s string) (identity.MachineID, error) {
	return requiredFlag("machine", s, "the machine ID (64 hex digits; `tenzrod keys show --home DIR` prints it)", identity.ParseMachineID)
}

func newTxUnbondCmd() *cobra.Command {
	cmd := newTxMachineCmd(func(m identity.MachineID) (string, any) {
		return "unbond machine " + m.String(), &ledger.ProviderUnbond{MachineID: m}
	})
	cmd.Use = "unbond --key OPERATOR_KEY --machine ID"
	cmd.Short = "Start unbonding a provider's serving bond (its standing drops to 0)"
	cmd.Long = `unbond starts the unbonding delay of a machine the key's account operates; the
provider stops earning standing at once. After the delay it registered with,
` + "`tenzrod tx withdraw-bond`" + ` returns the bond and removes the registration.`
	cmd.Example = `  tenzrod tx unbond --key ~/.tenzrod/provider/account.key --machine 9c…41`
	return cmd
}

func newTxWithdrawBondCmd() *cobra.Command {
	cmd := newTxMachineCmd(func(m identity.MachineID) (string, any) {
		return "withdraw the bond of machine " + m.String(), &ledger.ProviderWithdraw{MachineID: m}
	})
	cmd.Use = "withdraw-bond --key OPERATOR_KEY --machine ID"
	cmd.Short = "Return an unbonded serving bond to the operator and remove the registration"
	cmd.Example = `  tenzrod tx withdraw-bond --key ~/.tenzrod/provider/account.key --machine 9c…41`
	return cmd
}

// newTxMachineCmd is a transaction about one registered machine, the
// operator's key signing it: tx builds it from the parsed --machine.
func newTxMachineCmd(tx func(identity.MachineID) (string, any)) *cobra.Command {
	var (
		o       txOpts
		machine string
	)
	cmd := &cobra.Command{
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, err := machineFlag(machine)
			if err != nil {
				return err
			}
			what, payload := tx(m)
			return o.submit(cmd, what, payload)
		},
	}
	o.register(cmd)
	cmd.Flags().StringVar(&machine, "machine", "", "machine ID of the provider, 64 hex digits (required)")
	return cmd
}
