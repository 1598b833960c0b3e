package policy

import (
	"errors"
	"fmt"
	"time"

	"github.com/dlclark/regexp2/v2"
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
		return nil, fmt.Errorf("%q is not a valid regular expression: %v", src, err)
	}
	re.MatchTimeout = MatchTimeout
	return re, nil
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
