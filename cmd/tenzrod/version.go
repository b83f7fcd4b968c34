package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tenzrod/tenzrod/inference/llm"
	"github.com/tenzrod/tenzrod/node"
)

// commit is the source revision, stamped by `make build`/`make release`
// (-X main.buildCommit): a build from a tree without .git (a container's
// context) has no VCS settings for the toolchain to embed.
var buildCommit string

// revision is the stamped commit, else the one the toolchain embedded
// (with "-dirty" when the tree had changes), else "unknown".
func revision() string {
	if buildCommit != "" {
		return buildCommit
	}
	rev, dirty := "unknown", false
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	if dirty {
		rev += "-dirty"
	}
	return rev
}

// versionLine is what `tenzrod version` and `tenzrod --version` print: an
// operator's bug report needs the build (version, commit, toolchain) and
// which engine kernels this CPU runs, since the pure-Go set is several
// times slower than the vector ones.
func versionLine() string {
	var b strings.Builder
	fmt.Fprintf(&b, "tenzrod %s\n", node.Version)
	fmt.Fprintf(&b, "commit   %s\n", revision())
	fmt.Fprintf(&b, "go       %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	fmt.Fprintf(&b, "kernels  %s\n", llm.Kernels())
	return b.String()
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit, Go version and engine kernels",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprint(cmd.OutOrStdout(), versionLine())
			return err
		},
	}
}
