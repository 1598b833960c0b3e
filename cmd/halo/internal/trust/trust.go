// Package trust implements `halo trust key add|list|remove`: the publisher keys this user
// trusts to sign packages, kept in the user's own trust file (never in a project).
package trust

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"halolang.dev/halo/cmd/halo/internal/cmdutil"
	"halolang.dev/halo/cmd/halo/internal/pkgcmd"
	"halolang.dev/halo/cmd/halo/internal/termsafe"
	"halolang.dev/halo/pkgmgr"
)

// Options are the inputs of `halo trust key ...`.
type Options struct {
	Factory   *cmdutil.Factory
	Publisher string
	// Key is a public key ("RW...") or a .pub file (add); a key id (remove).
	Key  string
	JSON bool
}

// NewCmdTrust builds `halo trust` and its `key` subcommands.
func NewCmdTrust(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "trust",
		Short: "Manage what you trust: publisher keys",
		Example: `  halo trust key list
  halo trust key add "Acme Inc." acme.pub
  halo trust key remove "Acme Inc." 1A2B3C4D5E6F7081`,
		Long: `Manage the publisher keys you trust to sign packages. They are kept in your own trust
file ($XDG_CONFIG_HOME/halo/trust.json, by default ~/.config/halo/trust.json), never in a
project. halo add shows the first key it sees for a publisher and installs only once you
accept it (--accept-key); from then on that publisher's packages must be signed by a key
you trust.`,
	}
	key := &cobra.Command{Use: "key", Short: "Add, list or remove trusted publisher keys",
		Example: `  halo trust key list
  halo trust key add "Acme Inc." acme.pub
  halo trust key remove "Acme Inc." 1A2B3C4D5E6F7081`}
	cmd.AddCommand(key)
	key.AddCommand(NewCmdAdd(f, nil), NewCmdList(f, nil), NewCmdRemove(f, nil))
	return cmd
}

// NewCmdAdd builds `halo trust key add PUBLISHER KEY`.
func NewCmdAdd(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{Factory: f}
	cmd := &cobra.Command{
		Use:   "add PUBLISHER KEY",
		Short: "Trust a key to sign a publisher's packages",
		Example: `  halo trust key add "Acme Inc." acme.pub
  halo trust key add "Acme Inc." RWTWi/C7XM2SSKUvL4CAr2f1WICrFYdGX24jFyPyFcp4i04/1cdla3PN --json`,
		Long: `Trust KEY (a minisign public key, "RW...", or a .pub file from halo keygen) to sign the
packages whose halo-tool.json names PUBLISHER. Check the key with the publisher first.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Publisher, opts.Key = args[0], args[1]
			if runF != nil {
				return runF(opts)
			}
			return addRun(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the key as JSON")
	return cmd
}

// NewCmdList builds `halo trust key list`.
func NewCmdList(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{Factory: f}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the publisher keys you trust",
		Example: `  halo trust key list
  halo trust key list --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return listRun(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print [{ publisher, keyId, publicKey, added, builtIn }] as JSON")
	return cmd
}

// NewCmdRemove builds `halo trust key remove PUBLISHER [KEYID]`.
func NewCmdRemove(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{Factory: f}
	cmd := &cobra.Command{
		Use:   "remove PUBLISHER [KEYID]",
		Short: "Stop trusting a publisher's key (every key of it without KEYID)",
		Example: `  halo trust key remove "Acme Inc." 1A2B3C4D5E6F7081
  halo trust key remove "Acme Inc." --json`,
		Long: `Stop trusting a publisher's key, or all of its keys without KEYID. Packages signed with
it are then refused by halo add and halo install until a key is accepted again. With the
publisher's last key gone, the packages you installed signed by it are forgotten too, so
that they may install unsigned again.`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Publisher = args[0]
			if len(args) == 2 {
				opts.Key = args[1]
			}
			if runF != nil {
				return runF(opts)
			}
			return removeRun(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the removed keys as JSON")
	return cmd
}

// Key is a key as --json prints it.
type Key struct {
	Publisher string `json:"publisher"`
	KeyID     string `json:"keyId"`
	PublicKey string `json:"publicKey"`
	Added     string `json:"added,omitempty"`
	BuiltIn   bool   `json:"builtIn,omitempty"`
}

func toKey(k pkgmgr.PublisherKey) Key {
	return Key{Publisher: k.Publisher, KeyID: k.KeyID, PublicKey: k.PublicKey, Added: k.Added, BuiltIn: k.BuiltIn}
}

func project(f *cmdutil.Factory) (*pkgmgr.Project, error) { return pkgcmd.NewProject(f, "") }

func addRun(opts *Options) error {
	f := opts.Factory
	text := opts.Key
	if !strings.HasPrefix(strings.TrimSpace(text), "RW") {
		b, err := os.ReadFile(f.Abs(text))
		if err != nil {
			return fmt.Errorf("%s is neither a public key (RW...) nor a readable .pub file: %w", text, err)
		}
		text = string(b)
	}
	k, err := pkgmgr.NewPublisherKey(opts.Publisher, text)
	if err != nil {
		return pkgcmd.Coded(err)
	}
	pr, err := project(f)
	if err != nil {
		return err
	}
	k.Added = f.Now().UTC().Format("2006-01-02T15:04:05Z")
	added, err := pr.AddKey(k, k.Added)
	if err != nil {
		return pkgcmd.Coded(err)
	}
	if opts.JSON {
		return pkgcmd.WriteJSON(f.IO.Out, toKey(k))
	}
	w := termsafe.Writer(f.IO.Out)
	if !added {
		fmt.Fprintf(w, "✓ you already trust key %s for %s\n", k.KeyID, k.Publisher)
		return nil
	}
	fmt.Fprintf(w, "✓ trusted key %s for %s\n", k.KeyID, k.Publisher)
	return nil
}

func listRun(opts *Options) error {
	f := opts.Factory
	pr, err := project(f)
	if err != nil {
		return err
	}
	keys, err := pr.Keys()
	if err != nil {
		return pkgcmd.Coded(err)
	}
	out := make([]Key, 0, len(keys))
	for _, k := range keys {
		out = append(out, toKey(k))
	}
	if opts.JSON {
		return pkgcmd.WriteJSON(f.IO.Out, out)
	}
	w := termsafe.Writer(f.IO.Out)
	for _, k := range out {
		note := "added " + k.Added
		if k.BuiltIn {
			note = "built into halo"
		}
		fmt.Fprintf(w, "%s  %s  %s  (%s)\n", k.KeyID, k.PublicKey, k.Publisher, note)
	}
	return nil
}

func removeRun(opts *Options) error {
	f := opts.Factory
	pr, err := project(f)
	if err != nil {
		return err
	}
	gone, err := pr.RemoveKey(opts.Publisher, opts.Key)
	if err != nil {
		return pkgcmd.Coded(err)
	}
	out := make([]Key, 0, len(gone))
	for _, k := range gone {
		out = append(out, toKey(k))
	}
	if opts.JSON {
		return pkgcmd.WriteJSON(f.IO.Out, out)
	}
	w := termsafe.Writer(f.IO.Out)
	for _, k := range out {
		fmt.Fprintf(w, "✓ no longer trusted: key %s for %s\n", k.KeyID, k.Publisher)
	}
	return nil
}
