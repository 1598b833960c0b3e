package policy

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dlclark/regexp2/v2"
	"github.com/dlclark/regexp2/v2/syntax"
)

// MatchTimeout bounds one regular-expression match, so a hostile pattern (or a hostile
// value under a pattern with nested quantifiers) cannot hang a run. A match that runs out
// of time counts against the text: DenyArgs refuses, MatchRegex fails.
const MatchTimeout = 200 * time.Millisecond

// compileRegex compiles a user's pattern with regexp2 (lookahead is how DenyArgs writes
// allow lists). RE2 mode is chosen for one property: `$` matches only at the very end of
// the text. In regexp2's default, .NET-style mode `$` also matches before a final "\n",
// so `^(?!bun test[\w ./-]*$)` would let "bun test\n" through; RE2 and ECMAScript modes
// both compile `$` as end-of-text, and RE2 mode keeps .NET's syntax otherwise, with \w
// and \d ASCII-only (stricter for allow lists). (?m) in the pattern still makes $ a line
// end for those who ask for it.
func compileRegex(src string, opts regexp2.RegexOptions) (*regexp2.Regexp, error) {
	re, err := regexp2.Compile(src, opts|regexp2.RE2)
	if err != nil {
		return nil, fmt.Errorf("%q is not a valid regular expression: %w", src, err)
	}
	re.MatchTimeout = MatchTimeout
	return re, nil
}

// isEscapeError reports whether err is a pattern's backslash escape that does not parse, the
// one kind of regex error that doubling a backslash in a Halo string can be the fix for.
func isEscapeError(err error) bool {
	var se *syntax.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code {
	case syntax.ErrIllegalEndEscape, syntax.ErrUnrecognizedEscape, syntax.ErrMalformedSlashP, syntax.ErrIncompleteSlashP,
		syntax.ErrMissingControl, syntax.ErrUnrecognizedControl, syntax.ErrTooFewHex, syntax.ErrMalformedNameRef:
		return true
	}
	return false
}

// errTimeout marks a match that ran out of time.
var errTimeout = errors.New("the pattern took too long to match")

// matchString reports whether re matches s; a timeout or other failure is an error.
func matchString(re *regexp2.Regexp, s string) (bool, error) {
	ok, err := re.MatchString(s)
	if err != nil {
		return false, fmt.Errorf("%w: %v", errTimeout, err)
	}
	return ok, nil
}

// caseEscapes are the characters outside ASCII that Unicode case folding, as regexp2 does it
// (simple folding, and lower case), takes to or from an ASCII letter: ſ (U+017F) to s, the
// Kelvin sign (U+212A) to k, İ (U+0130) and ı (U+0131) to i. Under a case-insensitive
// pattern they would match those letters, so `bun teſt` passed `^(?!bun test...)` while
// Bash ran another program. Each has its ASCII letter, and a caseless letter of its own
// case category that stands in for it when only ASCII letters fold (TestCaseEscapesComplete
// checks the list against Unicode's tables).
var caseEscapes = map[rune]struct{ ascii, inert rune }{
	'\u0130': {'i', '\u2102'}, // İ; ℂ (Lu, caseless)
	'\u0131': {'i', '\u0138'}, // ı; ĸ (Ll, caseless)
	'\u017F': {'s', '\u0138'}, // ſ; ĸ
	'\u212A': {'k', '\u2102'}, // K (Kelvin); ℂ
}

// caseEscapeChars are caseEscapes' characters, for a quick scan.
const caseEscapeChars = "\u0130\u0131\u017F\u212A"

// asksUnicode reports whether a pattern asks for Unicode case folding: it starts with an
// option group that turns u on, (?u) or (?iu) say.
func asksUnicode(src string) bool {
	rest, ok := strings.CutPrefix(src, "(?")
	if !ok {
		return false
	}
	for _, c := range rest {
		switch {
		case c == 'u' || c == 'U':
			return true
		case strings.ContainsRune("imnsxIMNSX", c):
		default:
			return false // ')', ':', '-' (what follows turns options off) or not options at all
		}
	}
	return false
}

// caseForms returns the forms of v that a pattern is matched against. Case-insensitive
// matching folds ASCII letters only, so the first form is v with each of caseEscapes'
// characters replaced by its caseless stand-in; a value that holds one is also matched with
// each folded to its ASCII letter, as look-alikes are. unicode (the pattern asked for (?u))
// matches v alone, with regexp2's Unicode folding.
func caseForms(v string, unicode bool) []string {
	if unicode || !strings.ContainsAny(v, caseEscapeChars) {
		return []string{v}
	}
	inert := strings.Map(func(r rune) rune {
		if e, ok := caseEscapes[r]; ok {
			return e.inert
		}
		return r
	}, v)
	folded := strings.Map(func(r rune) rune {
		if e, ok := caseEscapes[r]; ok {
			return e.ascii
		}
		return r
	}, v)
	return []string{inert, folded}
}

// matchEvery reports whether r's pattern matches every case form of s (MatchRegex: an
// answer passes only as it is and with its look-alike letters folded).
func matchEvery(r *rule, s string) (bool, error) {
	for _, form := range caseForms(s, r.unicode) {
		if ok, err := matchString(r.re, form); !ok || err != nil {
			return false, err
		}
	}
	return true, nil
}

// matchSome reports whether r's pattern matches some case form of s (DenyArgs: a value is
// refused in whichever form it matches).
func matchSome(r *rule, s string) (bool, error) {
	for _, form := range caseForms(s, r.unicode) {
		if hit, err := matchString(r.re, form); hit || err != nil {
			return hit, err
		}
	}
	return false, nil
}
