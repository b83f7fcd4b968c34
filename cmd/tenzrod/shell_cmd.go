package main

import (
	"context"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/tenzrod/tenzrod/cmd/tenzrod/shell"
)

func newShellCmd() *cobra.Command {
	var (
		api     string
		command string
		history string
		token   string
	)
	cmd := &cobra.Command{
		Use:   "shell --api URL [-c CMD]",
		Short: "Debug shell against a node's API",
		Long: `shell is an interactive client of a node's JSON-RPC API: list peers and topics,
tail decoded gossip live with each message's validation verdict, list
providers, and look providers up in the DHT. Type "help" inside it.

With -c it runs one command and exits (non-zero on error), for scripts.`,
		Example: `  tenzrod shell --api http://127.0.0.1:8545
  tenzrod shell --api http://127.0.0.1:8545 -c providers
  tenzrod shell --api http://127.0.0.1:8545 -c "tail heartbeat -n 5"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return shell.Run(cmd.Context(), shell.Config{
				API: api, Token: token, HistoryFile: history, Out: cmd.OutOrStdout(), Err: cmd.ErrOrStderr(), Actions: shellActions(),
			}, command)
		},
	}
	cmd.Flags().StringVar(&api, "api", "http://127.0.0.1:8545", "node API base URL")
	cmd.Flags().StringVarP(&command, "command", "c", "", "run one command and exit")
	cmd.Flags().StringVar(&history, "history", defaultHome("shell_history"), "history file")
	cmd.Flags().StringVar(&token, "token", os.Getenv("TENZRO_TOKEN"), "bearer token sent with every call (a buyer's, or the operator's admin token): `session ID` needs it (default $TENZRO_TOKEN)")
	return cmd
}

// shellActions are the shell's signing commands: each runs the `tx`
// command of the same name against the shell's node, with the key file
// the user gives.
func shellActions() []shell.Action {
	return []shell.Action{{
		Name:    "dispute open",
		Args:    "--key FILE (--batch FILE [--binding FILE] | --payer ACCOUNT --request DIGEST --evidence FILE) --bond N",
		Summary: "open a dispute, signed with --key (as tenzrod tx dispute open); prints the dispute ID",
		Detail: "--batch is an expert batch's evidence file a serving provider kept (HOME/experts/evidence/MODEL/*.cbor);\n" +
			"its binding to the paying record is found beside it. See tenzrod tx dispute open --help.",
		Run: func(ctx context.Context, api string, args []string, out io.Writer) error {
			c := newTxDisputeOpenCmd()
			c.SetArgs(append([]string{"--api", api}, args...))
			c.SetOut(out)
			c.SetErr(out)
			c.SilenceErrors, c.SilenceUsage = true, true
			return c.ExecuteContext(ctx)
		},
	}}
}
