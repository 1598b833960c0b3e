package detect

import "hash/crc32"

// apiKey matches, at the word s[i:j], the key formats their vendors publish, exactly: the
// prefix, the length of each part and, for GitHub, the checksum. Prefixes are
// case-sensitive, as the vendors issue them. A run that has a prefix but not the shape
// ("ghp_" with a failing checksum, "xoxb-12345-abcd") is not a key.
func apiKey(s string, i, j int) (int, bool) {
	w := s[i:j]
	switch {
	case w == "sk" && j < len(s) && s[j] == '-':
		return openAIOrAnthropic(s, j+1)
	case len(w) == 20 && awsKeyID(w):
		return j, true
	case len(w) == 3 && w[0] == 'g' && w[1] == 'h' && isGitHubKind(w[2]) && j < len(s) && s[j] == '_':
		// gh[pousr]_ + 30 characters + a 6-character base62 CRC32 of them.
		end := j + 1 + 36
		if end > len(s) || !allAlnum(s[j+1:end]) || !endsToken(s, end) {
			return 0, false
		}
		if base62CRC32(s[j+1:end-6]) != s[end-6:end] {
			return 0, false
		}
		return end, true
	case w == "github" && hasPrefix(s[j:], "_pat_"):
		// github_pat_ + 22 + "_" + 59.
		k := j + 5
		if k+82 > len(s) || !allAlnum(s[k:k+22]) || s[k+22] != '_' || !allAlnum(s[k+23:k+82]) || !endsToken(s, k+82) {
			return 0, false
		}
		return k + 82, true
	case len(w) == 4 && hasPrefix(w, "xox") && j < len(s) && (s[j] == '-' || s[j] == '.'):
		return slackToken(s, w[3], j)
	case w == "xapp" && j < len(s) && s[j] == '-':
		// xapp-1-A…-digits-64 hex.
		return parts(s, j+1, []part{{isDigit, 1, 1}, {isUpperAlnum, 9, 12}, {isDigit, 10, 13}, {isLowerHex, 64, 64}})
	case len(w) >= 4 && hasPrefix(w, "AIza"):
		// AIza + 35.
		k := keyRun(s, i+4, true)
		if k-(i+4) == 35 {
			return k, true
		}
	}
	return 0, false
}

func isGitHubKind(c byte) bool { return c == 'p' || c == 'o' || c == 'u' || c == 's' || c == 'r' }

// awsKeyID matches an AWS access key ID: a 4-letter resource prefix and 16 base32 characters.
func awsKeyID(w string) bool {
	switch w[:4] {
	case "AKIA", "ASIA", "ABIA", "ACCA":
	default:
		if w[:3] != "A3T" {
			return false
		}
	}
	for k := 4; k < 20; k++ {
		if c := w[k]; !(c >= 'A' && c <= 'Z' || c >= '2' && c <= '7') {
			return false
		}
	}
	return true
}

// openAIOrAnthropic matches what follows "sk-": an Anthropic key (ant-api03- or ant-admin01-
// then 93 characters and "AA"; other ant- kinds 40 or more), an OpenAI project, service
// account or admin key (the "T3BlbkFJ" marker 58 or 74 characters in, as many after it) or
// an OpenAI user key (48 letters and digits).
func openAIOrAnthropic(s string, k int) (int, bool) {
	end := keyRun(s, k, true)
	if end-k > maxKey {
		return 0, false
	}
	body := s[k:end]
	switch {
	case hasPrefix(body, "ant-"):
		rest := body[4:]
		dash := 0
		for dash < len(rest) && rest[dash] != '-' {
			dash++
		}
		if dash == len(rest) || dash < 3 {
			return 0, false
		}
		kind, key := rest[:dash], rest[dash+1:]
		if kind == "api03" || kind == "admin01" {
			if len(key) == 95 && hasPrefix(key[93:], "AA") {
				return end, true
			}
			return 0, false
		}
		if len(key) >= 40 {
			return end, true
		}
	case hasPrefix(body, "proj-") || hasPrefix(body, "svcacct-") || hasPrefix(body, "admin-") || hasPrefix(body, "None-"):
		key := body[indexByte(body, '-')+1:]
		for _, n := range [...]int{58, 74} {
			if len(key) == 2*n+8 && key[n:n+8] == "T3BlbkFJ" {
				return end, true
			}
		}
		if len(key) == 48 && allAlnum(key) {
			return end, true
		}
	case len(body) == 48 && allAlnum(body):
		return end, true
	}
	return 0, false
}

// slackToken matches a Slack token from the dash (or dot) after "xox" and its kind letter:
// bot tokens xoxb-{10-13 digits}-{10-13 digits}-{24-32} (legacy: xoxb-{8-14 digits}-{18-26}),
// user tokens xoxp-{10-13 digits}×3-{28-34}, configuration tokens xoxe.xoxb-1-{163-166} and
// refresh tokens xoxe-1-{146}, legacy workspace and user tokens.
func slackToken(s string, kind byte, j int) (int, bool) {
	if s[j] == '.' {
		// xoxe.xoxb-1-… or xoxe.xoxp-1-…
		if kind != 'e' || !hasPrefix(s[j+1:], "xox") || j+5 >= len(s) || (s[j+4] != 'b' && s[j+4] != 'p') || s[j+5] != '-' {
			return 0, false
		}
		return parts(s, j+6, []part{{isDigit, 1, 1}, {isAlnum, 163, 166}})
	}
	k := j + 1
	switch kind {
	case 'b':
		if end, ok := parts(s, k, []part{{isDigit, 10, 13}, {isDigit, 10, 13}, {isAlnum, 24, 32}}); ok {
			return end, true
		}
		return parts(s, k, []part{{isDigit, 8, 14}, {isAlnum, 18, 26}})
	case 'p':
		return parts(s, k, []part{{isDigit, 10, 13}, {isDigit, 10, 13}, {isDigit, 10, 13}, {isAlnum, 28, 34}})
	case 'e':
		if end, ok := parts(s, k, []part{{isDigit, 10, 13}, {isDigit, 10, 13}, {isDigit, 10, 13}, {isAlnum, 28, 34}}); ok {
			return end, true
		}
		return parts(s, k, []part{{isDigit, 1, 1}, {isAlnum, 146, 146}})
	case 'a', 'r':
		return parts(s, k, []part{{isDigit, 1, 1}, {isDigit, 8, 13}, {isDigit, 8, 13}, {isDigit, 8, 13}, {isHexDigit, 16, 64}})
	case 's', 'o':
		return parts(s, k, []part{{isDigit, 8, 13}, {isDigit, 8, 13}, {isDigit, 8, 13}, {isHexDigit, 10, 64}})
	}
	return 0, false
}

// A part is one dash-separated group of a token: a character class and a length range.
type part struct {
	class    func(byte) bool
	min, max int
}

// parts matches dash-separated groups from k; the token must end after the last.
func parts(s string, k int, ps []part) (int, bool) {
	for n, p := range ps {
		if n > 0 {
			if k >= len(s) || s[k] != '-' {
				return 0, false
			}
			k++
		}
		e := k
		for e < len(s) && e-k <= p.max && p.class(s[e]) {
			e++
		}
		if e-k < p.min || e-k > p.max {
			return 0, false
		}
		k = e
	}
	if !endsToken(s, k) {
		return 0, false
	}
	return k, true
}

// endsToken reports whether a token ending at k ends there: no letter, digit, '_' or '-'
// (followed by a letter or digit) continues it.
func endsToken(s string, k int) bool {
	if k >= len(s) {
		return true
	}
	if isAlnum(s[k]) || s[k] == '_' {
		return false
	}
	return s[k] != '-' || k+1 >= len(s) || !isAlnum(s[k+1])
}

func allAlnum(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isAlnum(s[i]) {
			return false
		}
	}
	return true
}

func indexByte(s string, c byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return -1
}

func isUpperAlnum(c byte) bool { return c >= 'A' && c <= 'Z' || isDigit(c) }
func isLowerHex(c byte) bool   { return isDigit(c) || c >= 'a' && c <= 'f' }
func isHexDigit(c byte) bool   { return isLowerHex(c) || c >= 'A' && c <= 'F' }

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// base62CRC32 is the checksum GitHub appends to its tokens: the CRC-32 (IEEE) of the random
// part, in base62, padded to 6 characters with zeros.
func base62CRC32(s string) string {
	v := crc32.ChecksumIEEE([]byte(s))
	var out [6]byte
	for i := 5; i >= 0; i-- {
		out[i] = base62[v%62]
		v /= 62
	}
	return string(out[:])
}

// maxKey bounds how far a key is read: the longest format is 164 characters after its
// prefix. A longer run is no key, and reading no further keeps "sk-sk-sk-…" linear.
const maxKey = 200

// keyRun returns the end of a run of key characters (letters, digits, '_' and '-'), reading
// at most maxKey+1 of them.
func keyRun(s string, k int, dash bool) int {
	limit := min(len(s), k+maxKey+1)
	for k < limit && (isAlnum(s[k]) || s[k] == '_' || dash && s[k] == '-') {
		k++
	}
	return k
}
