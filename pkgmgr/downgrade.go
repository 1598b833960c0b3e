package pkgmgr

import (
	"fmt"
	"strings"
	"unicode"
)

// A signClaim is one reason a package must come signed, and by which publisher ("" when any
// signature will do). A registry that was replaced (or a network in between) serves the
// package unsigned, with its publisher dropped or renamed ("Acme Inc" for "Acme Inc."), so
// that no trusted key applies to it: the claims are what it cannot change, or is held to.
type signClaim struct {
	publisher string
	// why says where the claim comes from, for the refusal: "you trust ...", "halo.lock has ...".
	why string
	// fix, when not "", is added to a refusal for another publisher: how to accept the change.
	fix string
	// lookalike marks a claim made because the package's name for its publisher reads as a
	// trusted one's without being it.
	lookalike bool
}

// signClaims returns why pkg must be signed, and by whom:
//
//   - halo.lock (prev) has it signed by a publisher;
//   - this user installed it signed before, in any project (the trust file's "signed");
//   - it is a package of a publisher whose packages are all signed (KnownSigned: the
//     first-party ones);
//   - the registry's index (ip) lists a version of it signed;
//   - its manifest, or the index, names a publisher whose key this user trusts, or one that
//     reads as it once look-alikes, case and punctuation are folded (publisherKey).
func (p *Project) signClaims(pkg *Package, ip *IndexPackage, prev *LockEntry, ts *trustStore, keys []PublisherKey) []signClaim {
	name, publisher := pkg.Manifest.Name, pkg.Manifest.Publisher
	var out []signClaim
	add := func(c signClaim) {
		for _, x := range out {
			if x.publisher == c.publisher && x.why == c.why {
				return
			}
		}
		out = append(out, c)
	}
	if prev != nil && prev.Signature != nil {
		add(signClaim{publisher: prev.Signature.Publisher, why: fmt.Sprintf("halo.lock has %s signed by %s's key %s", name, quoted(prev.Signature.Publisher), prev.Signature.KeyID), fix: "; if that is expected, halo remove " + name + " first"})
	}
	if pub, ok := ts.Signed[name]; ok {
		add(signClaim{publisher: pub, why: fmt.Sprintf("you have installed %s signed by %s before", name, quoted(pub)), fix: "; if it changed hands, halo trust key remove " + shellQuote(pub) + " forgets what was signed by " + quoted(pub)})
	}
	if pub, ok := p.KnownSigned[name]; ok {
		add(signClaim{publisher: pub, why: fmt.Sprintf("%s is one of %s's packages, which are all signed", name, quoted(pub))})
	}
	if ip != nil {
		for _, v := range sortedVersions(ip.Versions) {
			if ip.Versions[v].Signature != nil {
				add(signClaim{publisher: ip.Publisher, why: fmt.Sprintf("the registry lists version %s of %s signed", v, name)})
				break
			}
		}
	}
	for _, k := range keys {
		tk := p.publisherKey(k.Publisher)
		if tk == "" {
			continue
		}
		if p.publisherKey(publisher) == tk {
			c := signClaim{publisher: k.Publisher, why: fmt.Sprintf("you trust %s's key %s to sign %s's packages", quoted(k.Publisher), k.KeyID, quoted(k.Publisher))}
			if publisher != k.Publisher {
				c.why, c.lookalike = fmt.Sprintf("it names publisher %s, which reads as %s, whose key %s you trust", quoted(publisher), quoted(k.Publisher), k.KeyID), true
			}
			add(c)
		}
		if ip != nil && ip.Publisher != "" && p.publisherKey(ip.Publisher) == tk {
			c := signClaim{publisher: k.Publisher, why: fmt.Sprintf("the registry says its publisher is %s, whose key %s you trust", quoted(ip.Publisher), k.KeyID)}
			if ip.Publisher != k.Publisher {
				c.why = fmt.Sprintf("the registry says its publisher is %s, which reads as %s, whose key %s you trust", quoted(ip.Publisher), quoted(k.Publisher), k.KeyID)
			}
			add(c)
		}
	}
	return out
}

// publisherKey is a publisher's name as names are compared: look-alikes folded to the letters
// they look like (FoldPublisher), case folded, and everything but letters and digits dropped,
// so that "Acme Inc.", "ACME, Inc" and "Асme Inc" (a Cyrillic А) are one publisher. "" for a
// name with no letter or digit.
func (p *Project) publisherKey(name string) string {
	if p.FoldPublisher != nil {
		name = p.FoldPublisher(name)
	}
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// recordSigned gathers into ch that name was installed signed by sig's publisher, for
// noteSigned to record once the change is made. Nothing when there is no trust file, or it
// says so already.
func (p *Project) recordSigned(ch *change, ts *trustStore, name string, sig *Signature) {
	if sig == nil || sig.Publisher == "" || p.TrustFile == "" || ts.Signed[name] == sig.Publisher {
		return
	}
	if ch.signed == nil {
		ch.signed = map[string]string{}
	}
	ch.signed[name] = sig.Publisher
}

// noteSigned records in the user's trust file the packages just installed signed, so that
// from then on, in every project, an unsigned or renamed copy of one is refused. It is a note
// for later rather than part of the change: a trust file that cannot be written is warned
// of, and what was installed stays installed.
func (p *Project) noteSigned(signed map[string]string) {
	if len(signed) == 0 {
		return
	}
	ts, err := p.readTrustStore()
	if err == nil {
		if ts.Signed == nil {
			ts.Signed = map[string]string{}
		}
		for name, pub := range signed {
			ts.Signed[name] = pub
		}
		err = p.writeKeys(ts, nil, nil, "")
	}
	if err != nil && p.Warn != nil {
		p.Warn(fmt.Sprintf("could not note in your trust file which packages were installed signed: %v", err))
	}
}

// lookalike returns a publisher of keys whose name reads as publisher's but is not it.
func (p *Project) lookalike(publisher string, keys []PublisherKey) (string, bool) {
	pk := p.publisherKey(publisher)
	for _, k := range keys {
		if k.Publisher != publisher && pk != "" && p.publisherKey(k.Publisher) == pk {
			return k.Publisher, true
		}
	}
	return "", false
}
