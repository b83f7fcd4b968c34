package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tenzrod/tenzrod/node"
)

// healthTimeout bounds one check: a supervisor's probe must answer well
// inside its own interval.
const healthTimeout = 5 * time.Second

// newHealthcheckCmd builds `tenzrod healthcheck`: the container image is
// the static binary alone (no curl, no shell), so the image's HEALTHCHECK
// asks the binary itself to GET the node's /healthz.
func newHealthcheckCmd() *cobra.Command {
	var home, url string
	cmd := &cobra.Command{
		Use:   "healthcheck --home DIR | --url URL",
		Short: "Exit 0 when the node's /healthz answers 200",
		Long: `healthcheck GETs /healthz of the node whose home is --home (its api.listen,
an unspecified host read as loopback) or of --url, prints the answer, and
fails unless it is 200 (503 while the node's chain is stalled).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if url == "" {
				if err := requireHome(home); err != nil {
					return err
				}
				cfg, err := node.Load(home)
				if err != nil {
					return err
				}
				if url, err = loopbackURL(cfg.API.Listen); err != nil {
					return err
				}
			}
			return checkHealth(cmd.Context(), cmd.OutOrStdout(), strings.TrimSuffix(url, "/")+"/healthz")
		},
	}
	cmd.Flags().StringVar(&home, "home", "", "node home directory (its api.listen is asked)")
	cmd.Flags().StringVar(&url, "url", "", "the node's API base URL, instead of --home")
	return cmd
}

// loopbackURL is the URL a process on the node's own host reaches listen
// at: a wildcard listen address is dialled on loopback.
func loopbackURL(listen string) (string, error) {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return "", fmt.Errorf("healthcheck: api.listen %q: %w", listen, err)
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port), nil
}

func checkHealth(ctx context.Context, out io.Writer, url string) error {
	ctx, cancel := context.WithTimeout(ctx, healthTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return fmt.Errorf("healthcheck: read %s: %w", url, err)
	}
	fmt.Fprintf(out, "%s", body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("healthcheck: %s answered %s", url, resp.Status)
	}
	return nil
}
