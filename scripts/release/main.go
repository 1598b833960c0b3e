// Command release writes the parts of a Halo release that scripts/release.sh cannot write with
// the shell alone:
//
//	go run ./scripts/release modules -src STAGED -version 0.2.0 -commit C -time T -proxy URL -goproxy OUT -site OUT
//	go run ./scripts/release sign -key FILE FILE...
//	go run ./scripts/release pubkey -key FILE
//
// modules turns a staged copy of the repository (STAGED, never the work tree) into the Go module
// proxy tree of the release (the GOPROXY protocol's @v/list, .info, .mod and .zip, the zips made
// with golang.org/x/mod/zip) for the host module at vVERSION and the sdk and proto modules at
// their own versions, each go.mod without replace directives and each go.sum holding the
// released sdk and proto, so `go install halolang.dev/halo/cmd/halo@vVERSION` builds from
// the tree alone; and the go-import pages the project's domain serves (-site), which send the
// go command to that tree (-proxy, where it is uploaded). sign writes FILE.minisig beside each
// file with a minisign secret key (its password in HALO_SIGN_PASSWORD); pubkey prints the key's
// public half, which install.sh checks signatures with.
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: release modules|sign|pubkey [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "modules":
		err = modulesCmd(os.Args[2:])
	case "sign":
		err = signCmd(os.Args[2:])
	case "pubkey":
		err = pubkeyCmd(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q: want modules, sign or pubkey", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}
