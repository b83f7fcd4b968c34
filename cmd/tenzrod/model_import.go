package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tenzrod/tenzrod/inference/catalog"
	"github.com/tenzrod/tenzrod/inference/gguf"
)

// modelName is what a served model may be called: it is also a directory
// name under the home's models/.
var modelName = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)

// nameJunk is what a file name loses on its way to a default model name.
var nameJunk = regexp.MustCompile(`[^a-z0-9._-]+`)

type importOpts struct {
	home, out, name string
	link, skipLoad  bool
}

func newModelImportCmd() *cobra.Command {
	var o importOpts
	cmd := &cobra.Command{
		Use:   "import PATH.gguf (--home DIR | --out DIR)",
		Short: "Make a downloaded GGUF a model directory the provider serves, and print its model ID",
		Long: `import checks that the embedded engine can serve PATH.gguf (its architecture,
every tensor's type, the tokenizer, then the engine's own loader over all
the weights) and refuses it, writing nothing, if not. It then copies the
file to HOME/models/NAME/model.gguf, the directory a provider config names
as dir = "models/NAME" (relative to the home), or to --out DIR/model.gguf,
and prints the model ID, the catalog Merkle root of that directory (as
model gen and model manifest compute it), with the [[provider.models]]
entry to add to the home's config. NAME defaults to the file name, lower
case, without .gguf. The copy is made in a temporary directory beside the
target and renamed into place, so a failed import leaves no half model.`,
		Example: `  tenzrod model import ~/Downloads/Qwen3-0.6B-Q8_0.gguf --home ~/.tenzrod/provider
  tenzrod model import llama-3.2-1b.Q4_K.gguf --home ./prov --name llama-3.2-1b --link
  tenzrod model import model.gguf --out /srv/models/m1`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return importModel(cmd.OutOrStdout(), args[0], o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.home, "home", "", "node home: the model goes to HOME/models/NAME")
	f.StringVar(&o.out, "out", "", "model directory to create instead of HOME/models/NAME")
	f.StringVar(&o.name, "name", "", "model name (the directory under models/ and the served name); default from the file name")
	f.BoolVar(&o.link, "link", false, "hard-link the file instead of copying it (same file system; the original must then never change)")
	f.BoolVar(&o.skipLoad, "skip-load", false, "check architecture, tensor types and tokenizer only, not the full load (which reads every weight)")
	return cmd
}

func importModel(w io.Writer, src string, o importOpts) error {
	dest, name, err := importTarget(src, o)
	if err != nil {
		return fmt.Errorf("model import: %w", err)
	}
	f, err := gguf.Open(src)
	if err != nil {
		return fmt.Errorf("model import: %w", err)
	}
	err = engineCheck(f, !o.skipLoad)
	f.Close() //nolint:errcheck // read-only
	if err != nil {
		return fmt.Errorf("model import: %s: the embedded engine cannot serve it, nothing written: %w", src, err)
	}
	root, err := placeModel(src, dest, o.link)
	if err != nil {
		return fmt.Errorf("model import: %w", err)
	}
	// A config's dir is relative to the home; --out may be anywhere.
	dir := filepath.ToSlash(filepath.Join("models", name))
	if o.out != "" {
		if dir, err = filepath.Abs(dest); err != nil {
			return fmt.Errorf("model import: %w", err)
		}
	}
	fmt.Fprintf(w, "imported %s as %s\nmodel id %s\n\nadd to the provider's config.toml:\n\n", src, filepath.Join(dest, "model.gguf"), root)
	fmt.Fprintf(w, "[[provider.models]]\nname = %q\ndir = %q\nid = %q\nengine = \"embedded\"\nverification = [\"receipt\", \"optimistic\"]\n", name, dir, root)
	fmt.Fprintf(w, "[provider.models.rate_card]\ninput_tokens = 1\noutput_tokens = 2\nminimum = 10\n")
	return nil
}

// importTarget returns the directory to create and the model's name,
// refusing a target that already exists.
func importTarget(src string, o importOpts) (dest, name string, err error) {
	if (o.home == "") == (o.out == "") {
		return "", "", errors.New("give exactly one of --home and --out")
	}
	name = o.name
	if name == "" {
		base := strings.ToLower(strings.TrimSuffix(filepath.Base(src), filepath.Ext(src)))
		name = strings.Trim(nameJunk.ReplaceAllString(base, "-"), "-.")
	}
	if !modelName.MatchString(name) {
		return "", "", fmt.Errorf("model name %q: want 1-64 of a-z 0-9 . _ - starting with a letter or digit (set --name)", name)
	}
	dest = o.out
	if dest == "" {
		dest = filepath.Join(o.home, "models", name)
	}
	if _, err := os.Lstat(dest); err == nil {
		return "", "", fmt.Errorf("%s already exists (choose another --name, or remove it)", dest)
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", "", err
	}
	return dest, name, nil
}

// placeModel copies (or links) src into a temporary directory beside dest,
// hashes it and renames it to dest.
func placeModel(src, dest string, link bool) (catalog.Hash, error) {
	parent := filepath.Dir(dest)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return catalog.Hash{}, err
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dest)+".import-")
	if err != nil {
		return catalog.Hash{}, err
	}
	root, err := fillModelDir(src, tmp, link)
	if err == nil {
		err = os.Rename(tmp, dest)
	}
	if err != nil {
		return catalog.Hash{}, errors.Join(err, os.RemoveAll(tmp))
	}
	return root, nil
}

func fillModelDir(src, dir string, link bool) (catalog.Hash, error) {
	if err := os.Chmod(dir, 0o755); err != nil {
		return catalog.Hash{}, err
	}
	dst := filepath.Join(dir, "model.gguf")
	if link {
		if err := os.Link(src, dst); err != nil {
			return catalog.Hash{}, fmt.Errorf("--link: %w", err)
		}
	} else if err := copyFile(src, dst); err != nil {
		return catalog.Hash{}, err
	}
	_, root, err := catalog.Build(dir)
	return root, err
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close() //nolint:errcheck // read-only
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		return errors.Join(err, out.Close())
	}
	if err := out.Sync(); err != nil {
		return errors.Join(err, out.Close())
	}
	return out.Close()
}
