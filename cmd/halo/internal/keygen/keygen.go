// Package keygen implements `halo keygen [PATH]`: make a publisher key pair in minisign's
// format (PATH.key, the secret half; PATH.pub, the public half) for halo publish --sign.
package keygen

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"aead.dev/minisign"
	"github.com/spf13/cobra"

	"halolang.dev/halo/cmd/halo/internal/cmdutil"
	"halolang.dev/halo/cmd/halo/internal/pkgcmd"
	"halolang.dev/halo/pkgmgr"
)

// PasswordEnv holds the password that encrypts (keygen) or decrypts (publish --sign) a
// secret key.
const PasswordEnv = "HALO_SIGN_PASSWORD"

// Options are `halo keygen`'s inputs.
type Options struct {
	Factory    *cmdutil.Factory
	Path       string
	NoPassword bool
	JSON       bool
}

// NewCmdKeygen builds `halo keygen`. runF, when not nil, replaces keygenRun (tests).
func NewCmdKeygen(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{Factory: f}
	cmd := &cobra.Command{
		Use:   "keygen [PATH]",
		Short: "Make a key pair for signing packages",
		Example: `  halo keygen
  halo keygen acme
  halo keygen acme --no-password --json`,
		Long: `Make a publisher key pair in minisign's format: PATH.key (the secret half, for
halo publish --sign) and PATH.pub (the public half, to give to users). PATH defaults to
"publisher". The secret key is encrypted with the password in $HALO_SIGN_PASSWORD, or left
unencrypted with --no-password. Existing files are never overwritten.

Anyone can check a signature made with it using the minisign tool:
  minisign -V -p PATH.pub -m NAME-VERSION.halotool`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Path = "publisher"
			if len(args) == 1 {
				opts.Path = args[0]
			}
			if runF != nil {
				return runF(opts)
			}
			return keygenRun(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.NoPassword, "no-password", false, "leave the secret key unencrypted")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print { keyId, publicKey, secretKeyFile, publicKeyFile } as JSON")
	return cmd
}

// Result is the --json output.
type Result struct {
	KeyID         string `json:"keyId"`
	PublicKey     string `json:"publicKey"`
	SecretKeyFile string `json:"secretKeyFile"`
	PublicKeyFile string `json:"publicKeyFile"`
	Encrypted     bool   `json:"encrypted"`
}

func keygenRun(opts *Options) error {
	f := opts.Factory
	password, havePassword := f.Env.Lookup(PasswordEnv)
	if !opts.NoPassword && (!havePassword || password == "") {
		return cmdutil.FlagError("set %s to the password that encrypts the secret key, or pass --no-password", PasswordEnv)
	}
	secPath, pubPath := opts.Path+".key", opts.Path+".pub"
	for _, p := range []string{secPath, pubPath} {
		if _, err := os.Lstat(f.Abs(p)); err == nil {
			return fmt.Errorf("%s exists; keygen never overwrites a key [%s]", p, pkgmgr.CodeExists)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	pub, sec, err := pkgmgr.GenerateKey()
	if err != nil {
		return err
	}
	var secText []byte
	if opts.NoPassword {
		secText, err = sec.MarshalText()
	} else {
		secText, err = minisign.EncryptKey(password, sec)
	}
	if err != nil {
		return err
	}
	pubText, _ := pub.MarshalText()
	if err := writeNew(f.Abs(secPath), append(secText, '\n'), 0o600); err != nil {
		return err
	}
	if err := writeNew(f.Abs(pubPath), append(pubText, '\n'), 0o644); err != nil {
		os.Remove(f.Abs(secPath))
		return err
	}
	res := Result{KeyID: pkgmgr.KeyID(pub.ID()), PublicKey: pub.String(), SecretKeyFile: secPath, PublicKeyFile: pubPath, Encrypted: !opts.NoPassword}
	if opts.JSON {
		return pkgcmd.WriteJSON(f.IO.Out, res)
	}
	fmt.Fprintf(f.IO.Out, "✓ key %s\n    secret key: %s (keep it private%s)\n    public key: %s\n    %s\n", res.KeyID, secPath, map[bool]string{true: ", encrypted", false: ", NOT encrypted"}[res.Encrypted], pubPath, res.PublicKey)
	return nil
}

// writeNew creates path exclusively.
func writeNew(path string, data []byte, mode os.FileMode) error {
	fh, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	_, werr := fh.Write(data)
	if cerr := fh.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(path)
	}
	return werr
}
