// Command tenzrod runs a node of the tenzro inference market: a validator, a
// provider, or a gateway on a laptop; a whole devnet on loopback; and a
// debug shell against any node's API.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := newRootCmd().ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "tenzrod:", err)
		os.Exit(1)
	}
}
