// Package publish implements `halo publish FILE --registry PATH`: add a packed file to a
// registry index on disk.
package publish

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"halolang.dev/halo/cmd/halo/internal/cmdutil"
	"halolang.dev/halo/cmd/halo/internal/pkgcmd"
	"halolang.dev/halo/cmd/halo/internal/termsafe"
	"halolang.dev/halo/errcode"
	"halolang.dev/halo/pkgmgr"
)

// Options are `halo publish`'s inputs.
type Options struct {
	Factory  *cmdutil.Factory
	File     string
	Registry string
	JSON     bool
	// Sign is --sign KEY: the publisher's secret key file (see halo keygen).
	Sign string
}

// NewCmdPublish builds `halo publish`. runF, when not nil, replaces publishRun (tests).
func NewCmdPublish(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{Factory: f}
	cmd := &cobra.Command{
		Use:   "publish FILE --registry PATH",
		Short: "Add a packed package to a registry index on disk",
		Example: `  halo publish dist/acme-1.0.0.halotool --registry ./site/index.json
  halo publish dist/acme-1.0.0.halotool --registry ./site --sign acme.key --json`,
		Long: `Copy FILE to packages/<name>-<version>.halotool beside the registry's index.json and
record its sha256, providers, permissions and the time. A version already published is
refused; latest moves to the new version unless it is older. The index is created when it
does not exist. Upload the folder to any HTTPS host to share it.

With --sign KEY (a secret key from halo keygen; its password in $HALO_SIGN_PASSWORD when it
is encrypted), the package is signed: the signature and key id go into the index, and
packages/<name>-<version>.halotool.minisig beside the file, so anyone can check it with
minisign -V. A signed package must name its publisher in halo-tool.json.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.File = args[0]
			if opts.Registry == "" {
				return cmdutil.FlagError("halo publish needs --registry PATH (an index.json on disk)")
			}
			if strings.Contains(opts.Registry, "://") {
				return cmdutil.FlagError("--registry %s: publish writes an index on disk; publish into a folder and upload it", opts.Registry)
			}
			if runF != nil {
				return runF(opts)
			}
			return publishRun(opts)
		},
	}
	cmd.Flags().StringVar(&opts.Registry, "registry", "", "the registry's index.json (or its folder) on disk")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the result as JSON")
	cmd.Flags().StringVar(&opts.Sign, "sign", "", "sign the package with the secret key `KEY` (from halo keygen)")
	return cmd
}

// Result is the --json output.
type Result struct {
	Name    string               `json:"name"`
	Version string               `json:"version"`
	Index   string               `json:"index"`
	Latest  string               `json:"latest"`
	Entry   *pkgmgr.IndexVersion `json:"entry"`
}

func publishRun(opts *Options) error {
	f := opts.Factory
	data, err := os.ReadFile(f.Abs(opts.File))
	if errors.Is(err, fs.ErrNotExist) {
		return errcode.Wrap(pkgmgr.CodeNotFound, err, "%s does not exist", f.Abs(opts.File))
	}
	if err != nil {
		return errcode.Wrap(pkgmgr.CodeInvalid, err, "%s: %v", f.Abs(opts.File), err)
	}
	var popts pkgmgr.PublishOptions
	if opts.Sign != "" {
		text, err := os.ReadFile(f.Abs(opts.Sign))
		if err != nil {
			return fmt.Errorf("--sign: %w", err)
		}
		if popts.Sign, err = pkgmgr.NewSignKey(text, func() (string, error) {
			pw, ok := f.Env.Lookup("HALO_SIGN_PASSWORD")
			if !ok {
				return "", cmdutil.FlagError("--sign %s: the key is encrypted; set HALO_SIGN_PASSWORD to its password", opts.Sign)
			}
			return pw, nil
		}); err != nil {
			return pkgcmd.Coded(err)
		}
	}
	pkg, v, err := pkgmgr.PublishWith(f.Abs(opts.Registry), data, f.Now(), popts)
	if err != nil {
		return err
	}
	latest := pkg.Manifest.Version
	if b, err := os.ReadFile(indexPath(f.Abs(opts.Registry))); err == nil {
		if idx, err := pkgmgr.ParseIndex(b); err == nil {
			latest = idx.Packages[pkg.Manifest.Name].Latest
		}
	}
	res := Result{Name: pkg.Manifest.Name, Version: pkg.Manifest.Version, Index: opts.Registry, Latest: latest, Entry: v}
	if opts.JSON {
		return pkgcmd.WriteJSON(f.IO.Out, res)
	}
	fmt.Fprintf(termsafe.Writer(f.IO.Out), "✓ published %s@%s to %s (latest: %s)\n    sha256: %s\n", res.Name, res.Version, res.Index, res.Latest, v.SHA256)
	if v.Signature != nil {
		fmt.Fprintf(termsafe.Writer(f.IO.Out), "    signed by %s with key %s\n", pkg.Manifest.Publisher, v.Signature.KeyID)
	}
	return nil
}

func indexPath(p string) string {
	if st, err := os.Stat(p); err == nil && st.IsDir() {
		return strings.TrimSuffix(p, "/") + "/index.json"
	}
	return p
}
