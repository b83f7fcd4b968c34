package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tenzrod/tenzrod/inference/catalog"
	"github.com/tenzrod/tenzrod/inference/gguf"
	"github.com/tenzrod/tenzrod/inference/modelgen"
)

func newModelCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "model", Short: "Generate, import and inspect models and compute their catalog IDs"}
	cmd.AddCommand(newModelGenCmd(), newModelManifestCmd(), newModelImportCmd(), newModelInspectCmd())
	return cmd
}

func newModelGenCmd() *cobra.Command {
	o := modelgen.DevnetOptions()
	var (
		out   string
		quant string
	)
	cmd := &cobra.Command{
		Use:   "gen --out DIR",
		Short: "Write a small random-weight GGUF model with its tokenizer",
		Long: `gen writes DIR/model.gguf: a model of the given architecture (llama, qwen2,
qwen3, qwen3moe, gemma2, gemma3, phi3) with random weights, a real
byte-level BPE (or SentencePiece) tokenizer and a ChatML chat template. The
devnet and the tests use it; nothing is downloaded. It prints the model's
catalog ID (the Merkle root of DIR).`,
		Example: `  tenzrod model gen --out models/tiny
  tenzrod model gen --out models/moe --moe --experts 8
  tenzrod model gen --out models/qwen3 --arch qwen3 --head-dim 64
  tenzrod model gen --out models/100m --layers 12 --dim 768 --heads 12 --kv-heads 4 --ffn 2048 --vocab 32000 --quant Q8_0`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return fmt.Errorf("--out is required")
			}
			t, err := gguf.ParseType(quant)
			if err != nil {
				return fmt.Errorf("--quant: %w", err)
			}
			o.Quant = t
			start := time.Now()
			if err := modelgen.GenerateModel(out, o); err != nil {
				return err
			}
			_, root, err := catalog.Build(out)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s/model.gguf in %s\nmodel id %s\n", out, time.Since(start).Round(time.Millisecond), root)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&out, "out", "", "output directory (required)")
	f.StringVar(&o.Name, "name", o.Name, "model name (general.name)")
	f.Uint64Var(&o.Seed, "seed", o.Seed, "weights seed: another seed gives other weights and another model ID")
	f.IntVar(&o.Layers, "layers", o.Layers, "decoder layers")
	f.IntVar(&o.Dim, "dim", o.Dim, "hidden size (multiple of 32)")
	f.IntVar(&o.Heads, "heads", o.Heads, "attention heads")
	f.IntVar(&o.KVHeads, "kv-heads", o.KVHeads, "key/value heads (grouped-query attention)")
	f.IntVar(&o.FFN, "ffn", o.FFN, "feed-forward hidden size (multiple of 32)")
	f.IntVar(&o.Vocab, "vocab", o.Vocab, "vocabulary size")
	f.IntVar(&o.Context, "context", o.Context, "context length")
	f.StringVar(&quant, "quant", "F32", "weight type: F32 | F16 | BF16 | Q8_0 | Q4_K | Q6_K")
	f.StringVar(&o.Tokenizer, "tokenizer", o.Tokenizer, "gpt2 (byte-level BPE) | llama (SentencePiece BPE)")
	f.BoolVar(&o.MoE, "moe", false, "mixture of experts: each feed-forward block becomes --experts experts")
	f.IntVar(&o.Experts, "experts", o.Experts, "experts per layer (with --moe)")
	f.IntVar(&o.ExpertsUsed, "experts-used", o.ExpertsUsed, "experts the gate picks per token (with --moe)")
	f.StringVar(&o.Arch, "arch", "llama", "architecture: "+strings.Join(modelgen.Arches, " | "))
	f.IntVar(&o.HeadDim, "head-dim", 0, "attention head size when not dim/heads (written as attention.key_length)")
	f.StringVar(&o.RopeScaling, "rope-scaling", "", "llama3 (Llama 3.1 rope_freqs.weight) | linear (with --rope-factor)")
	f.Float64Var(&o.RopeFactor, "rope-factor", 0, "linear rope scaling factor")
	f.IntVar(&o.SlidingWindow, "sliding-window", 0, "gemma sliding-window size (default 512)")
	return cmd
}

func newModelManifestCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "manifest DIR",
		Short: "Print a model directory's catalog ID (Merkle root) and manifest",
		Long: `manifest hashes every file of DIR in 1 MiB chunks (streaming; no file is read
whole into memory) and prints the RFC 6962 Merkle root that is the model's
catalog ID, with each file's size and chunk count.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, root, err := catalog.Build(args[0])
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(m)
			}
			fmt.Fprintf(out, "model id    %s\nchunk size  %d\n", root, m.ChunkSize)
			for _, f := range m.Files {
				fmt.Fprintf(out, "  %-32s %12d bytes\n", f.Path, f.Size)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the whole manifest (every chunk hash) as JSON")
	return cmd
}
