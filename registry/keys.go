package registry

import (
	"io/fs"
	"slices"

	"halolang.dev/halo/pkgmgr"
)

// Publisher is the publisher the first-party packages name.
const Publisher = "Halo"

// PublicKey is the public half of the project's package-signing key (minisign's format; key
// id 4892CD5CBBF08BD6). Every committed package of the default registry is signed with it
// (go run ./registry/gen -sign KEY), and halo trusts it for publisher Halo without asking:
// no other key is accepted for that publisher.
const PublicKey = "RWTWi/C7XM2SSKUvL4CAr2f1WICrFYdGX24jFyPyFcp4i04/1cdla3PN"

// BuiltInKeys returns the publisher keys this binary trusts without asking: the project's,
// and the keys that signed the packages built on this machine (local/build.pub) and those of
// the latest release (released/build.pub), whose secret halves were thrown away once they
// were signed.
func BuiltInKeys() []pkgmgr.PublisherKey {
	return builtInKeys(files)
}

func builtInKeys(fsys fs.FS) []pkgmgr.PublisherKey {
	k, err := pkgmgr.NewPublisherKey(Publisher, PublicKey)
	if err != nil {
		panic("registry: the project's public key does not parse: " + err.Error())
	}
	keys := []pkgmgr.PublisherKey{k}
	for _, file := range []string{"local/build.pub", "released/build.pub"} {
		b, err := fs.ReadFile(fsys, file)
		if err != nil {
			continue
		}
		if lk, err := pkgmgr.NewPublisherKey(Publisher, string(b)); err == nil && !slices.ContainsFunc(keys, func(have pkgmgr.PublisherKey) bool { return have.KeyID == lk.KeyID }) {
			keys = append(keys, lk)
		}
	}
	return keys
}

// SignedPackages names the packages of the default registry (fsys, as Default returns it)
// that are signed, with their publisher: halo refuses an unsigned or renamed copy of one from
// any registry.
func SignedPackages(fsys fs.FS) (map[string]string, error) {
	b, err := fs.ReadFile(fsys, "index.json")
	if err != nil {
		return nil, err
	}
	idx, err := pkgmgr.ParseIndex(b)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for name, p := range idx.Packages {
		for _, v := range p.Versions {
			if v.Signature != nil && p.Publisher != "" {
				out[name] = p.Publisher
			}
		}
	}
	return out, nil
}
