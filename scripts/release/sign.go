package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"aead.dev/minisign"

	"halolang.dev/halo/pkgmgr"
)

// readKey reads the minisign secret key file, decrypting it with HALO_SIGN_PASSWORD when it is
// encrypted (as halo keygen writes it).
func readKey(file string) (minisign.PrivateKey, error) {
	text, err := os.ReadFile(file)
	if err != nil {
		return minisign.PrivateKey{}, err
	}
	return pkgmgr.ParseSecretKey(text, func() (string, error) { return os.Getenv("HALO_SIGN_PASSWORD"), nil })
}

// signCmd writes FILE.minisig beside each file, as `minisign -S` would (prehashed, with the file
// name in the trusted comment), so `minisign -V` and install.sh verify it.
func signCmd(args []string) error {
	fs := flag.NewFlagSet("sign", flag.ContinueOnError)
	keyFile := fs.String("key", "", "the minisign secret key")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *keyFile == "" || fs.NArg() == 0 {
		return fmt.Errorf("usage: release sign -key FILE FILE...")
	}
	key, err := readKey(*keyFile)
	if err != nil {
		return fmt.Errorf("%s: %w", *keyFile, err)
	}
	for _, file := range fs.Args() {
		data, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		trusted := fmt.Sprintf("file:%s\thashed", filepath.Base(file))
		sig := minisign.SignWithComments(key, data, trusted, "signature from halo release key "+pkgmgr.KeyID(key.ID()))
		if err := os.WriteFile(file+".minisig", sig, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// pubkeyCmd prints the public half of a secret key, in minisign's one-line form.
func pubkeyCmd(args []string) error {
	fs := flag.NewFlagSet("pubkey", flag.ContinueOnError)
	keyFile := fs.String("key", "", "the minisign secret key")
	if err := fs.Parse(args); err != nil {
		return err
	}
	key, err := readKey(*keyFile)
	if err != nil {
		return fmt.Errorf("%s: %w", *keyFile, err)
	}
	pub, ok := key.Public().(minisign.PublicKey)
	if !ok {
		return fmt.Errorf("%s: no public key", *keyFile)
	}
	fmt.Println(pub.String())
	return nil
}
