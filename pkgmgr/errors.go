// Package pkgmgr owns Halo's tool packages as files: the halo-tool.json manifest and its
// validation, packing a folder into a .halotool file and unpacking one safely, the
// halo-registry/1 index (reading it from disk or https, publishing into it), halo.lock, the
// user's trust file, and installing, adding and removing packages in a project with
// all-or-nothing changes on disk, through pkgmgr/statedir's handles on .halo.
//
// It knows manifests and files, not how a provider is called: host/tool/httppkg turns an http
// manifest into a provider, and host/tool/packages turns a project's verified packages into
// provider types. The commands search, add, remove, install, pack and publish wire it up.
package pkgmgr

import (
	"fmt"
	"strings"

	"halolang.dev/halo/errcode"
)

// Stable error codes of package operations. Users match on them; never change or reuse one.
const (
	// CodeInvalid: a manifest or a .halotool file breaks a rule (every problem is listed).
	CodeInvalid = "PACKAGE_INVALID"
	// CodeIntegrity: a package's sha256 differs from the one the registry or halo.lock expects,
	// or installed files are missing.
	CodeIntegrity = "PACKAGE_INTEGRITY"
	// CodeUntrusted: a package that runs code (a module, or an mcp command) is not trusted on
	// this machine for the checksum the lock pins.
	CodeUntrusted = "PACKAGE_UNTRUSTED"
	// CodeNotFound: no such package or version in the registry, or not installed.
	CodeNotFound = "PACKAGE_NOT_FOUND"
	// CodeConflict: a provider name is already taken by a built-in or another package.
	CodeConflict = "PACKAGE_CONFLICT"
	// CodeExists: publishing a version the registry already has.
	CodeExists = "PACKAGE_EXISTS"
	// CodeRegistry: the registry index cannot be used (bad JSON, unknown format, a refused URL).
	CodeRegistry = "REGISTRY_INVALID"
	// CodeNetwork: a download failed.
	CodeNetwork = "NETWORK_ERROR"
	// CodePlatform: a module package has no plugin executable for this platform.
	CodePlatform = "PACKAGE_PLATFORM"
)

// A Problem is one broken rule in a manifest or package file, at a JSON path such as
// `providers.Acme.methods[0].effect`.
type Problem struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

func (p Problem) String() string {
	if p.Path == "" {
		return p.Message
	}
	return p.Path + ": " + p.Message
}

// An Error is a package failure with a stable code. It is a type of its own, beside
// errcode.Error, because it lists every problem found (Problems), which commands print one a
// line.
type Error struct {
	Code    string
	Message string
	// Problems lists every broken rule, for CodeInvalid.
	Problems []Problem
	// Permissions, for CodeUntrusted from Add, is what the refused package can reach.
	Permissions *Permissions
	Err         error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Message)
	if e.Message == "" && e.Err != nil {
		b.WriteString(e.Err.Error())
	} else if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	for _, p := range e.Problems {
		b.WriteString("\n  ")
		b.WriteString(p.String())
	}
	return b.String()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// ErrorCode returns the stable code, for errcode.Code.
func (e *Error) ErrorCode() string { return e.Code }

func errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

func wrapf(code string, err error, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Err: err}
}

// Code returns errcode.Code(err).
//
// Deprecated: use errcode.Code, the one way to read a code; Code remains only until the
// branches that still call it are merged.
func Code(err error) string { return errcode.Code(err) }
