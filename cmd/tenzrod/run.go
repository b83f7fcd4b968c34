package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/tenzrod/tenzrod/internal/logbridge"
	"github.com/tenzrod/tenzrod/node"
)

// newRunCmd builds `tenzrod validator` and `tenzrod provider`.
func newRunCmd(role, short, long string) *cobra.Command {
	var (
		home string
		nf   nodeFlags
	)
	cmd := &cobra.Command{
		Use:   role + " --home DIR",
		Short: short,
		Long:  long + "\n\nThe config is read from HOME/config.toml (create it with `tenzrod init --role " + role + "`); flags override it.",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadRoleHome(home, node.Role(role))
			if err != nil {
				return err
			}
			nf.apply(&cfg, cmd.Flags())
			return runNode(cmd.Context(), cfg)
		},
	}
	cmd.Flags().StringVar(&home, "home", "", "node home directory (required)")
	nf.register(cmd.Flags(), node.Role(role))
	return cmd
}

func newLogger(cfg node.Config) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(cfg.Log.Level))
	opts := &slog.HandlerOptions{Level: level}
	if cfg.Log.Format == "json" {
		return slog.New(slog.NewJSONHandler(os.Stderr, opts))
	}
	return slog.New(slog.NewTextHandler(os.Stderr, opts))
}

// loadRoleHome loads the config of home, which must be one of role.
func loadRoleHome(home string, role node.Role) (node.Config, error) {
	if err := requireHome(home); err != nil {
		return node.Config{}, err
	}
	cfg, err := node.Load(home)
	if err != nil {
		return node.Config{}, err
	}
	if cfg.Role != role {
		return node.Config{}, fmt.Errorf("config: role: %s is configured as %q, not %q", home, cfg.Role, role)
	}
	return cfg, nil
}

// runNode runs a node until ctx ends (SIGINT/SIGTERM), then stops it.
func runNode(ctx context.Context, cfg node.Config) error { return runNodeThen(ctx, cfg, nil) }

// runNodeThen is runNode that calls then once the node has started; an
// error from it stops the node.
func runNodeThen(ctx context.Context, cfg node.Config, then func(*node.Node, *slog.Logger) error) error {
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	log := newLogger(cfg)
	slog.SetDefault(log)
	logbridge.Install(log.Handler())
	startCtx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	n, err := node.New(startCtx, cfg, node.Options{Logger: log})
	if err != nil {
		return err
	}
	if err := n.Start(startCtx); err != nil {
		return err
	}
	info := n.Info()
	log.Info("ready", "api", info.API, "peer", info.PeerID, "machine", info.MachineID, "key_backend", describeBackend(info.KeyBackend))
	if then != nil {
		if err := then(n, log); err != nil {
			stopCtx, cancelStop := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancelStop()
			return errors.Join(err, n.Stop(stopCtx))
		}
	}
	<-ctx.Done()
	log.Info("shutting down")
	stopCtx, cancelStop := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancelStop()
	return n.Stop(stopCtx)
}
