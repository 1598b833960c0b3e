package pkgmgr

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"aead.dev/minisign"
)

// A PublisherKey is a key a user trusts to sign a publisher's packages. Keys live in the
// user's trust file beside package trust, never in a project: whose signature counts is the
// user's decision, like SSH's known_hosts.
type PublisherKey struct {
	Publisher string `json:"-"`
	KeyID     string `json:"keyId"`
	PublicKey string `json:"publicKey"`
	// Added is when the user accepted the key (RFC 3339).
	Added string `json:"added,omitempty"`
	// BuiltIn marks a key that ships in the halo binary (the project's own); it cannot be
	// removed.
	BuiltIn bool `json:"-"`
}

// Keys lists the publisher keys this user trusts: the built-in ones first, then the trust
// file's, by publisher and key id.
func (p *Project) Keys() ([]PublisherKey, error) {
	ts, err := p.readTrustStore()
	if err != nil {
		return nil, err
	}
	out := append([]PublisherKey(nil), p.BuiltInKeys...)
	for i := range out {
		out[i].BuiltIn = true
	}
	var stored []PublisherKey
	for pub, list := range ts.Publishers {
		for _, k := range list {
			k.Publisher = pub
			stored = append(stored, k)
		}
	}
	sort.Slice(stored, func(i, j int) bool {
		if stored[i].Publisher != stored[j].Publisher {
			return stored[i].Publisher < stored[j].Publisher
		}
		return stored[i].KeyID < stored[j].KeyID
	})
	return append(out, stored...), nil
}

// keysFor returns the keys trusted for publisher.
func keysFor(all []PublisherKey, publisher string) []PublisherKey {
	var out []PublisherKey
	for _, k := range all {
		if k.Publisher == publisher {
			out = append(out, k)
		}
	}
	return out
}

// NewPublisherKey checks a public key given for publisher and returns it ready to add.
func NewPublisherKey(publisher, publicKey string) (PublisherKey, error) {
	publisher = strings.TrimSpace(publisher)
	if publisher == "" || len(publisher) > 200 || strings.ContainsFunc(publisher, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return PublisherKey{}, errorf(CodeSignature, "publisher %q: want the name packages give in halo-tool.json's publisher", publisher)
	}
	k, err := ParsePublicKey(publicKey)
	if err != nil {
		return PublisherKey{}, err
	}
	return PublisherKey{Publisher: publisher, KeyID: KeyID(k.ID()), PublicKey: k.String()}, nil
}

// AddKey trusts k for k.Publisher in the user's trust file. A key already trusted for the
// publisher is left as it is; a built-in publisher takes no other key.
func (p *Project) AddKey(k PublisherKey, added string) (bool, error) {
	for _, b := range p.BuiltInKeys {
		if b.Publisher == k.Publisher {
			if b.KeyID == k.KeyID {
				return false, nil
			}
			return false, errorf(CodeSignature, "%s's packages are signed with the key built into halo (%s); no other key can be trusted for %s", k.Publisher, b.KeyID, k.Publisher)
		}
	}
	ts, err := p.readTrustStore()
	if err != nil {
		return false, err
	}
	// Names are compared folded (publisherKey): a key for "Acme Inc" beside "Acme Inc.'s"
	// would vouch for copies under the look-alike name.
	have, err := p.Keys()
	if err != nil {
		return false, err
	}
	if other, ok := p.lookalike(k.Publisher, have); ok {
		return false, errorf(CodeSignature, "publisher %s reads as %s, whose key you trust already: give the name exactly as %s's packages do", quoted(k.Publisher), quoted(other), quoted(other))
	}
	for _, have := range ts.Publishers[k.Publisher] {
		if have.KeyID == k.KeyID {
			return false, nil
		}
	}
	return true, p.writeKeys(ts, []PublisherKey{k}, nil, added)
}

// RemoveKey stops trusting a publisher's key (keyID "" removes every key of the publisher),
// and returns what it removed. Built-in keys cannot be removed.
func (p *Project) RemoveKey(publisher, keyID string) ([]PublisherKey, error) {
	for _, b := range p.BuiltInKeys {
		if b.Publisher == publisher && (keyID == "" || strings.EqualFold(keyID, b.KeyID)) {
			return nil, errorf(CodeSignature, "%s's key %s is built into halo and cannot be removed", publisher, b.KeyID)
		}
	}
	ts, err := p.readTrustStore()
	if err != nil {
		return nil, err
	}
	var gone []PublisherKey
	for _, k := range ts.Publishers[publisher] {
		if keyID == "" || strings.EqualFold(keyID, k.KeyID) {
			k.Publisher = publisher
			gone = append(gone, k)
		}
	}
	if len(gone) == 0 {
		if keyID == "" {
			return nil, errorf(CodeNotFound, "you trust no key for publisher %q (see halo trust key list)", publisher)
		}
		return nil, errorf(CodeNotFound, "you trust no key %s for publisher %q (see halo trust key list)", keyID, publisher)
	}
	// With its last key gone, the packages seen signed by the publisher are forgotten too: a
	// publisher that stopped signing can be installed unsigned again.
	if len(gone) == len(ts.Publishers[publisher]) {
		for name, pub := range ts.Signed {
			if pub == publisher {
				delete(ts.Signed, name)
			}
		}
	}
	return gone, p.writeKeys(ts, nil, gone, "")
}

// withKeys returns ts with keys added and removed.
func withKeys(ts *trustStore, add, remove []PublisherKey, added string) {
	if ts.Publishers == nil {
		ts.Publishers = map[string][]PublisherKey{}
	}
	for _, k := range remove {
		list := ts.Publishers[k.Publisher]
		for i := range list {
			if list[i].KeyID == k.KeyID {
				list = append(list[:i:i], list[i+1:]...)
				break
			}
		}
		if len(list) == 0 {
			delete(ts.Publishers, k.Publisher)
		} else {
			ts.Publishers[k.Publisher] = list
		}
	}
	for _, k := range add {
		pub := k.Publisher
		k.Publisher, k.BuiltIn = "", false
		if k.Added == "" {
			k.Added = added
		}
		ts.Publishers[pub] = append(ts.Publishers[pub], k)
	}
}

// writeKeys writes the trust file with keys added and removed.
func (p *Project) writeKeys(ts *trustStore, add, remove []PublisherKey, added string) error {
	if p.TrustFile == "" {
		return errorf(CodeUntrusted, "trusting a key needs a place for this user's trust decisions: set HOME (or XDG_CONFIG_HOME)")
	}
	withKeys(ts, add, remove, added)
	b, err := json.MarshalIndent(ts, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p.TrustFile), 0o700); err != nil {
		return fmt.Errorf("record trust: %w", err)
	}
	return writeAtomic(p.TrustFile, append(b, '\n'), 0o600)
}

// key parses a trusted key.
func (k PublisherKey) key() (minisign.PublicKey, error) { return ParsePublicKey(k.PublicKey) }
