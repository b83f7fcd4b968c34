package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tenzrod/tenzrod/inference/catalog"
	"github.com/tenzrod/tenzrod/inference/gguf"
	"github.com/tenzrod/tenzrod/inference/llm"
)

func newModelInspectCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "inspect PATH",
		Short: "Print a GGUF model's architecture, quantization, tokenizer and chat template",
		Long: `inspect reads the metadata of PATH, a .gguf file or a model directory (its
model.gguf, or its only .gguf file), and prints the architecture, the
dimensions, layers and heads, the quantization (how many tensors of each
type), the tokenizer (model, pre-tokenizer, vocabulary size, BOS/EOS), the
first line of the chat template if there is one, and whether the embedded
engine can serve it (architecture, tensor types and tokenizer; import also
runs the full loader). For a directory it also prints the catalog model ID,
the Merkle root of every file in it. Tensor data is not read, except to
hash a directory.`,
		Example: `  tenzrod model inspect ~/Downloads/Qwen3-0.6B-Q8_0.gguf
  tenzrod model inspect --json ~/.tenzrod/provider/models/qwen3-0.6b`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			in, err := inspect(args[0])
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				enc.SetEscapeHTML(false) // templates are full of <|im_start|>
				return enc.Encode(in)
			}
			printInfo(cmd.OutOrStdout(), in)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}

// inspect describes the GGUF at path, or in the model directory path.
func inspect(path string) (*modelInfo, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("model inspect: %w", err)
	}
	file, dir := path, ""
	if st.IsDir() {
		dir = path
		if file, err = llm.ModelFile(dir); err != nil {
			return nil, fmt.Errorf("model inspect: %w", err)
		}
	}
	f, err := gguf.Open(file)
	if err != nil {
		return nil, fmt.Errorf("model inspect: %w", err)
	}
	defer f.Close() //nolint:errcheck // read-only
	in, err := describe(f)
	if err != nil {
		return nil, fmt.Errorf("model inspect: %s: %w", file, err)
	}
	if dir != "" {
		_, root, err := catalog.Build(dir)
		if err != nil {
			return nil, fmt.Errorf("model inspect: %w", err)
		}
		in.ModelID = root.String()
	}
	return in, nil
}

func printInfo(w io.Writer, in *modelInfo) {
	p := func(k, format string, a ...any) { fmt.Fprintf(w, "%-14s"+format+"\n", append([]any{k}, a...)...) }
	p("file", "%s (%d bytes)", in.File, in.Size)
	if in.ModelID != "" {
		p("model id", "%s", in.ModelID)
	}
	if in.Name != "" {
		p("name", "%s", in.Name)
	}
	p("architecture", "%s", in.Architecture)
	p("dims", "embedding %d, feed-forward %d, head %d, context %d", in.Dim, in.FFN, in.HeadDim, in.Context)
	p("layers", "%d, heads %d, kv heads %d", in.Layers, in.Heads, in.KVHeads)
	if in.Experts > 0 {
		p("experts", "%d, %d used per token", in.Experts, in.ExpertsUsed)
	}
	var q []string
	for _, t := range slices.Sorted(maps.Keys(in.Quant)) {
		q = append(q, fmt.Sprintf("%s×%d", t, in.Quant[t]))
	}
	p("quantization", "%s (%d parameters)", strings.Join(q, " "), in.Params)
	t := in.Tokenizer
	p("tokenizer", "%s, pre %s, vocabulary %d", orDash(t.Model), orDash(t.Pre), t.Vocab)
	p("bos / eos", "%s / %s", t.BOS, t.EOS)
	if in.Template.Present {
		p("chat template", "%d bytes, first line %q", in.Template.Bytes, clip(in.Template.FirstLine, 100))
	} else {
		p("chat template", "none")
	}
	p("engine", "%s", in.Engine)
}

func (r *tokenRef) String() string {
	if r == nil {
		return "-"
	}
	return fmt.Sprintf("%d %q", r.ID, r.Text)
}

// clip shortens s to n runes, marking the cut; --json has it whole.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
