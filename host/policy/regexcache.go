package policy

import (
	"sync"

	"github.com/dlclark/regexp2/v2"
)

// A pattern is compiled once per process: `halo validate` of a file where a thousand
// policies write the same DenyArgs pattern spent 70% of its checking time compiling it again
// and again, and serve and mcp compile their policies once at start anyway. A compiled
// *regexp2.Regexp is safe for concurrent use and nothing changes it after compileRegex, so
// one value serves every rule that writes the pattern. The cache only remembers what a pure
// function returned; it holds at most maxCachedRegexes patterns of at most
// maxCachedPatternLen bytes each, so a program of many long distinct patterns cannot make it
// grow without bound: past either limit a pattern is compiled each time, as before.
const (
	maxCachedRegexes    = 4096
	maxCachedPatternLen = 4096
)

type regexKey struct {
	src  string
	opts regexp2.RegexOptions
}

type compiledRegex struct {
	re  *regexp2.Regexp
	err error
}

var regexCache = struct {
	mu sync.Mutex
	m  map[regexKey]compiledRegex
}{m: map[regexKey]compiledRegex{}}

// cachedRegex is compileRegex, remembered: the same pattern and options give the same
// compiled value (or the same error) without compiling again.
func cachedRegex(src string, opts regexp2.RegexOptions) (*regexp2.Regexp, error) {
	if len(src) > maxCachedPatternLen {
		return compileRegex(src, opts)
	}
	k := regexKey{src, opts}
	regexCache.mu.Lock()
	c, ok := regexCache.m[k]
	regexCache.mu.Unlock()
	if ok {
		return c.re, c.err
	}
	re, err := compileRegex(src, opts)
	regexCache.mu.Lock()
	if len(regexCache.m) < maxCachedRegexes {
		regexCache.m[k] = compiledRegex{re, err}
	}
	regexCache.mu.Unlock()
	return re, err
}
