package detect

import (
	"regexp"
	"strings"
	"sync"
)

const (
	clsLetter = 1 << iota
	clsDigit
	clsAt
	clsPlus  // '+' and '(' may start a phone number
	clsMark  // '*', '_', '#', '`', '~' may start Markdown
	clsSpace // ' ' '\t' before a heading or fence
)

var class = func() (t [256]uint8) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] |= clsLetter
		t[c-'a'+'A'] |= clsLetter
	}
	for c := '0'; c <= '9'; c++ {
		t[c] |= clsDigit
	}
	t['@'] |= clsAt
	t['+'] |= clsPlus
	t['('] |= clsPlus
	for _, c := range "*_#`~" {
		t[c] |= clsMark
	}
	return t
}()

func isAlnum(c byte) bool  { return class[c]&(clsLetter|clsDigit) != 0 }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isLetter(c byte) bool { return class[c]&clsLetter != 0 }

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// Hides are the categories whose matches the scan steps over: nothing else is looked for
// inside a number, an address or a key. A match of the others (a phrase, a heading) hides
// nothing, so an e-mail inside "# Contact bob@example.com" is still found and redacted.
const Hides = PII | APIKey | IPAddress

// Reach bounds how far past a match's start a detector reads to decide it. Only the phrase
// patterns of PromptInjection and DestructiveOps read across a line break; every other
// detector reads its own line only. So a change on another line, and more than Reach bytes
// away, neither makes nor unmakes a match.
const Reach = 2 * phraseWindow

// scan calls emit for each match of cats in s, stopping when emit returns false.
func scan(s string, cats Category, emit func(Match) bool) {
	var kws *keywordTable
	if cats&(PromptInjection|DestructiveOps|Profanity|APIKey) != 0 {
		kws = keywords()
	}
	scanWith(s, cats, kws, emit)
}

// scanWith is scan with the keyword table given (nil when cats needs none): a walk over many
// small JSON values looks it up once.
func scanWith(s string, cats Category, kws *keywordTable, emit func(Match) bool) {
	words := kws != nil
	numbers := cats&(SSN|CreditCard|Phone|IPAddress) != 0
	n := len(s)
	i := 0
	for i < n {
		c := s[i]
		cl := class[c]
		if cl == 0 {
			i++
			continue
		}
		if cl&(clsLetter|clsDigit) != 0 {
			// i is a word start: every word is skipped whole below.
			j := i + 1
			for j < n && isAlnum(s[j]) {
				j++
			}
			if cl&clsLetter != 0 {
				if words {
					if m, ok := checkWord(kws, s, i, j, cats); ok {
						if !emit(m) {
							return
						}
						if m.End > j && m.Cat&Hides != 0 {
							j = m.End
						}
					}
				}
			} else if numbers && !continuesNumber(s, i) {
				if m, ok := checkNumber(s, i, cats); ok {
					if !emit(m) {
						return
					}
					if m.End > j {
						j = m.End
					}
				}
			}
			i = j
			continue
		}
		switch {
		case cl&clsAt != 0:
			if cats&Email != 0 {
				if m, ok := checkEmail(s, i); ok {
					if !emit(m) {
						return
					}
					i = m.End
					continue
				}
			}
		case cl&clsPlus != 0:
			if cats&Phone != 0 && (i == 0 || !isAlnum(s[i-1])) {
				if end, ok := phone(s, i); ok {
					if !emit(Match{Start: i, End: end, Cat: Phone}) {
						return
					}
					i = end
					continue
				}
			}
		case cl&clsMark != 0:
			if cats&Markdown != 0 {
				if end, ok := markdown(s, i); ok {
					if !emit(Match{Start: i, End: end, Cat: Markdown}) {
						return
					}
				}
			}
		}
		i++
	}
}

// inert marks the bytes that neither start a detector nor change under folding: a text made
// of them alone holds no match.
var inert = func() (t [256]bool) {
	for c := 0; c < 0x80; c++ {
		t[c] = class[c] == 0 && c != '%' && c != '&'
	}
	return t
}()

// isInert reports whether s holds no match: every byte is inert, as the quotes, colons, commas
// and spaces between the values of JSON are.
func isInert(s string) bool {
	for i := 0; i < len(s); i++ {
		if !inert[s[i]] {
			return false
		}
	}
	return true
}

// continuesNumber reports whether the digits at i continue a number before them
// ("1-800-…" at "800", "10.0.0.1" at "0"): detectors start only at a number's start.
func continuesNumber(s string, i int) bool {
	if i == 0 {
		return false
	}
	switch s[i-1] {
	case '+':
		return true
	case '.', '-':
		return i >= 2 && isDigit(s[i-2])
	}
	return false
}

// checkNumber runs the digit-started detectors at a number's start.
func checkNumber(s string, i int, cats Category) (Match, bool) {
	if cats&SSN != 0 {
		if end, ok := ssn(s, i); ok {
			return Match{Start: i, End: end, Cat: SSN}, true
		}
	}
	if cats&CreditCard != 0 {
		if end, ok := creditCard(s, i); ok {
			return Match{Start: i, End: end, Cat: CreditCard}, true
		}
	}
	if cats&IPAddress != 0 {
		if end, ok := ipv4(s, i); ok {
			return Match{Start: i, End: end, Cat: IPAddress}, true
		}
	}
	if cats&Phone != 0 {
		if end, ok := phone(s, i); ok {
			return Match{Start: i, End: end, Cat: Phone}, true
		}
	}
	return Match{}, false
}

// endsNumber reports whether a number ending at j really ends there: no digit or letter
// follows, nor a separator that continues it with another digit.
func endsNumber(s string, j int) bool {
	if j >= len(s) {
		return true
	}
	if isAlnum(s[j]) {
		return false
	}
	if (s[j] == '-' || s[j] == '.') && j+1 < len(s) && isDigit(s[j+1]) {
		return false
	}
	return true
}

// digitsExact returns the end of exactly n digits at i.
func digitsExact(s string, i, n int) (int, bool) {
	if i+n > len(s) {
		return 0, false
	}
	for k := i; k < i+n; k++ {
		if !isDigit(s[k]) {
			return 0, false
		}
	}
	if i+n < len(s) && isDigit(s[i+n]) {
		return 0, false
	}
	return i + n, true
}

// ssn matches ddd-dd-dddd (or with spaces), rejecting numbers the SSA never issues: area
// 000, 666 or 9xx, group 00, serial 0000.
func ssn(s string, i int) (int, bool) {
	j, ok := digitsExact(s, i, 3)
	if !ok || j >= len(s) || (s[j] != '-' && s[j] != ' ') {
		return 0, false
	}
	sep := s[j]
	k, ok := digitsExact(s, j+1, 2)
	if !ok || k >= len(s) || s[k] != sep {
		return 0, false
	}
	end, ok := digitsExact(s, k+1, 4)
	if !ok || !endsNumber(s, end) {
		return 0, false
	}
	area, group, serial := s[i:i+3], s[j+1:k], s[k+1:end]
	if area == "000" || area == "666" || area[0] == '9' || group == "00" || serial == "0000" {
		return 0, false
	}
	return end, true
}

// creditCard matches 13 to 19 digits, single spaces or dashes allowed between them, with
// a card network's leading digit and a valid Luhn check digit. When separated groups run
// on ("4111 1111 1111 1111 2024"), the longest valid card that ends at a group boundary
// is taken.
func creditCard(s string, i int) (int, bool) {
	if c := s[i]; c < '2' || c > '6' {
		return 0, false
	}
	var digits [19]byte
	nd := 0
	j := i
	best := 0
	try := func(end int) {
		if nd >= 13 && luhn(digits[:nd]) {
			best = end
		}
	}
	overflow := false
	for j < len(s) {
		c := s[j]
		if isDigit(c) {
			if nd == 19 {
				overflow = true // only a group boundary before here can end a card
				break
			}
			digits[nd] = c - '0'
			nd++
			j++
			continue
		}
		if (c == ' ' || c == '-') && j+1 < len(s) && isDigit(s[j+1]) && nd > 0 {
			try(j)
			j++
			continue
		}
		break
	}
	if !overflow && (j == len(s) || !isLetter(s[j])) {
		try(j)
	}
	if best == 0 {
		return 0, false
	}
	return best, true
}

func luhn(d []byte) bool {
	sum := 0
	for k := 0; k < len(d); k++ {
		x := int(d[len(d)-1-k])
		if k%2 == 1 {
			x *= 2
			if x > 9 {
				x -= 9
			}
		}
		sum += x
	}
	return sum%10 == 0
}

// ipv4 matches four dot-separated octets of at most 255.
func ipv4(s string, i int) (int, bool) {
	j := i
	for part := 0; part < 4; part++ {
		if part > 0 {
			if j >= len(s) || s[j] != '.' {
				return 0, false
			}
			j++
		}
		v, k := 0, j
		for k < len(s) && isDigit(s[k]) && k-j < 4 {
			v = v*10 + int(s[k]-'0')
			k++
		}
		// A leading zero ("010") reads as octal to some parsers and is no address here.
		if k == j || k-j > 3 || v > 255 || k-j > 1 && s[j] == '0' {
			return 0, false
		}
		j = k
	}
	if !endsNumber(s, j) {
		return 0, false
	}
	return j, true
}

func isPhoneSep(c byte) bool { return c == '-' || c == '.' || c == ' ' }

// phone matches North American numbers ((415) 555-2671, 415-555-2671, 415.555.2671,
// +1 415 555 2671) and international ones written with a leading + (+44 20 7946 0958,
// +14155552671): 8 to 15 digits in groups.
func phone(s string, i int) (int, bool) {
	if s[i] == '+' {
		return intlPhone(s, i)
	}
	j := i
	// Optional country code 1.
	if s[j] == '1' && j+1 < len(s) && isPhoneSep(s[j+1]) {
		if end, ok := nanp(s, j+2); ok {
			return end, true
		}
	}
	return nanp(s, j)
}

// nanp matches a North American number: area code and exchange code each of the form NXX
// (N is 2 to 9: a code starting with 0 or 1 is never assigned), the area code not an N11
// service code, then four digits.
func nanp(s string, j int) (int, bool) {
	if j >= len(s) {
		return 0, false
	}
	area := j
	if s[j] == '(' {
		area = j + 1
		k, ok := digitsExact(s, j+1, 3)
		if !ok || k >= len(s) || s[k] != ')' {
			return 0, false
		}
		j = k + 1
		if j < len(s) && isPhoneSep(s[j]) {
			j++
		}
	} else {
		k, ok := digitsExact(s, j, 3)
		if !ok || k >= len(s) || !isPhoneSep(s[k]) {
			return 0, false
		}
		j = k + 1
	}
	k, ok := digitsExact(s, j, 3)
	if !ok || k >= len(s) || !isPhoneSep(s[k]) {
		return 0, false
	}
	if !nanpCodes(s[area:area+3], s[j:j+3]) {
		return 0, false
	}
	end, ok := digitsExact(s, k+1, 4)
	if !ok || !endsNumber(s, end) {
		return 0, false
	}
	return end, true
}

func intlPhone(s string, i int) (int, bool) {
	j := i + 1
	nd, groups, end := 0, 0, 0
	for j < len(s) {
		k := j
		for k < len(s) && isDigit(s[k]) {
			k++
		}
		if k == j {
			break
		}
		nd += k - j
		groups++
		end = k
		if k+1 < len(s) && isPhoneSep(s[k]) && isDigit(s[k+1]) {
			j = k + 1
			continue
		}
		if k+2 < len(s) && s[k] == ' ' && s[k+1] == '(' && isDigit(s[k+2]) {
			j = k + 2
			continue
		}
		if k+1 < len(s) && s[k] == '(' && isDigit(s[k+1]) {
			j = k + 1
			continue
		}
		if k < len(s) && s[k] == ')' {
			k++
			end = k
			if k < len(s) && isPhoneSep(s[k]) {
				k++
			}
			j = k
			continue
		}
		break
	}
	if nd < 8 || nd > 15 || end < len(s) && isAlnum(s[end]) || s[i+1] == '0' {
		return 0, false // no country code starts with 0
	}
	if s[i+1] == '1' {
		// +1 is the North American plan: 10 digits after it, with its rules.
		var d [11]byte
		n := 0
		for k := i + 1; k < end && n <= 11; k++ {
			if isDigit(s[k]) {
				if n < 11 {
					d[n] = s[k]
				}
				n++
			}
		}
		if n != 11 || !nanpCodes(string(d[1:4]), string(d[4:7])) {
			return 0, false
		}
	}
	return end, true
}

// nanpCodes reports whether an area code and an exchange code can be assigned: both NXX, N
// from 2 to 9, and neither an N11 service code.
func nanpCodes(area, exchange string) bool {
	for _, c := range [2]string{area, exchange} {
		if c[0] < '2' || c[1] == '1' && c[2] == '1' {
			return false
		}
	}
	return true
}

// checkEmail matches local@domain.tld around the '@' at i.
func checkEmail(s string, at int) (Match, bool) {
	start := at
	for start > 0 && isLocalChar(s[start-1]) {
		start--
	}
	for start < at && s[start] == '.' {
		start++
	}
	if start == at || at+1 >= len(s) {
		return Match{}, false
	}
	j := at + 1
	labels, lastLabel := 0, 0
	end := 0
	for j < len(s) {
		k := j
		for k < len(s) && (isAlnum(s[k]) || s[k] == '-') {
			k++
		}
		if k == j {
			break
		}
		labels++
		lastLabel = j
		end = k
		if k+1 < len(s) && s[k] == '.' && isAlnum(s[k+1]) {
			j = k + 1
			continue
		}
		break
	}
	if labels < 2 {
		return Match{}, false
	}
	tld := s[lastLabel:end]
	if len(tld) < 2 {
		return Match{}, false
	}
	for k := 0; k < len(tld); k++ {
		if !isLetter(tld[k]) {
			return Match{}, false
		}
	}
	return Match{Start: start, End: end, Cat: Email}, true
}

func isLocalChar(c byte) bool {
	return isAlnum(c) || c == '.' || c == '_' || c == '%' || c == '+' || c == '-'
}

// markdown matches a heading or code fence at a line start, or **bold** / __bold__.
func markdown(s string, i int) (int, bool) {
	c := s[i]
	lineStart := i
	for lineStart > 0 && i-lineStart < 4 && s[lineStart-1] == ' ' {
		lineStart--
	}
	atLine := lineStart == 0 || s[lineStart-1] == '\n'
	switch c {
	case '#':
		if !atLine {
			return 0, false
		}
		j := i
		for j < len(s) && s[j] == '#' {
			j++
		}
		if j-i > 6 || j+1 >= len(s) || s[j] != ' ' || s[j+1] == ' ' || s[j+1] == '\n' {
			return 0, false
		}
		return lineEnd(s, j), true
	case '`', '~':
		if !atLine || i+3 > len(s) || s[i+1] != c || s[i+2] != c {
			return 0, false
		}
		return i + 3, true
	case '*', '_':
		if i+2 >= len(s) || s[i+1] != c || (i > 0 && (isAlnum(s[i-1]) || s[i-1] == c)) {
			return 0, false
		}
		j := i + 2
		if j >= len(s) || s[j] == ' ' || s[j] == '\n' || s[j] == c {
			return 0, false
		}
		for k := j + 1; k+1 < len(s) && k < j+200; k++ {
			if s[k] == '\n' {
				return 0, false
			}
			if s[k] == c && s[k+1] == c && s[k-1] != ' ' && (k+2 >= len(s) || !isAlnum(s[k+2])) {
				return k + 2, true
			}
		}
	}
	return 0, false
}

func lineEnd(s string, j int) int {
	for j < len(s) && s[j] != '\n' {
		j++
	}
	return j
}

// window returns at most max bytes of s from i: phrases may run over a line break
// ("ignore\nprevious instructions"), so the window does not stop at one.
func window(s string, i, max int) string {
	end := i + max
	if end > len(s) {
		end = len(s)
	}
	return s[i:end]
}

// A phrase is an anchored pattern tried where its first word starts.
type phrase struct {
	cat Category
	re  *regexp.Regexp
}

// A keyword is what a lower-cased word may start: an injection phrase, a destructive
// command, a profane word.
type keyword struct {
	injection   *regexp.Regexp
	destructive *regexp.Regexp
	// near lists words one of which the pattern needs within the next few words: checked
	// before the pattern runs, so ordinary prose ("forget the instructions in the README",
	// "delete(c.m, k)") costs a few byte compares instead of a backtracking match.
	near []string
	// need is text the destructive pattern cannot match without (any case): checked
	// first, so a run of "dd dd dd" costs no pattern runs.
	need    string
	rm      bool
	profane bool
}

// A keywordTable maps each keyword to its detectors.
type keywordTable struct {
	words map[string]keyword
	// first2 gates the lookup: only words whose first two letters start a keyword are
	// lower-cased and looked up.
	first2 [26 * 26]bool
}

// keywords is built on first use, not in init: its patterns would otherwise be compiled by
// every start of halo and of each built-in plugin.
var keywords = sync.OnceValue(func() *keywordTable {
	// Word-started patterns. A *regexp.Regexp is safe for concurrent use.
	reIgnore := regexp.MustCompile(`(?i)^(?:ignore|disregard|forget|override|bypass|skip)\s+(?:(?:the|of|my|any|these|those|all|everything|what)\s+)*(?:(?:all|previous|prior|above|earlier|preceding|system|your|original|initial|developer)\b(?:\s+[a-z]+){0,2}?\s+(?:instructions?|prompts?|rules|directions|guidelines|directives|messages?|context)\b|(?:above|before)\b)`)
	reReveal := regexp.MustCompile(`(?i)^(?:reveal|show|print|repeat|output|tell|display|leak|dump|give|share|expose)\s+(?:(?:me|us|the|your|all|of|full|entire|exact|hidden|secret)\s+)*(?:(?:system|initial|hidden|secret|original|developer)\s+(?:prompt|instructions|message)|(?:your\s+)?(?:prompt|instructions)\s+(?:verbatim|above))`)
	reYouAre := regexp.MustCompile(`(?i)^you\s+are\s+(?:now\s+(?:DAN\b|an?\s+(?:unrestricted|unfiltered|uncensored|jailbroken)\b|jailbroken|free\s+(?:of|from)\s+(?:all\s+)?(?:rules|restrictions))|(?:now\s+)?in\s+(?:developer|god|jailbreak|DAN)\s+mode\b|DAN\b)`)
	reActAs := regexp.MustCompile(`(?i)^(?:act|pretend|behave)\s+(?:as|like|to\s+be|you\s+are)\s+(?:DAN\b|an?\s+(?:unrestricted|unfiltered|uncensored|jailbroken)\b)`)
	reDoAny := regexp.MustCompile(`(?i)^do\s+anything\s+now\b`)
	// "Enable developer mode" is also how Android and Chrome documentation talk; a developer
	// mode that is "enabled" or "activated" is the jailbreak prompts' wording.
	reMode := regexp.MustCompile(`(?i)^(?:enable|enter|activate|switch\s+to)\s+(?:god|DAN|jailbreak)\s+mode\b|^(?:developer|god|DAN|jailbreak)\s+mode\s+(?:enabled|activated|on)\b`)
	reNewInst := regexp.MustCompile(`(?i)^new\s+(?:system\s+)?instructions\s*:`)

	reDrop := regexp.MustCompile(`(?i)^drop\s+(?:table|database|schema)\b`)
	reTruncate := regexp.MustCompile(`(?i)^truncate\s+(?:table\s+[\w."` + "`" + `\[\]]+|[\w."` + "`" + `\[\]]+\s*;)`)
	reDelete := regexp.MustCompile(`(?im)^delete\s+from\s+[\w."` + "`" + `\[\]]+(?:\s+where\b|\s*;|\s*$)`)
	reGitPush := regexp.MustCompile(`(?i)^git\s+push\b[^;&|\n]*?\s(?:--?force(?:-with-lease|-if-includes)?|-f)\b|^git\s+push\b[^;&|\n]*?\s\+[A-Za-z_][\w./-]*`)
	// mkfs destroys what is on the device it is given; a mention of mkfs is no command.
	reMkfs := regexp.MustCompile(`(?i)^mkfs(?:\.\w+)?(?:\s+-[\w-]+(?:\s+[^\s/-]\S*)?)*\s+/dev/`)
	reDD := regexp.MustCompile(`(?i)^dd\s+[^;&|\n]*\bof=/dev/`)

	k := map[string]keyword{}
	set := func(words string, f func(*keyword)) {
		for _, w := range strings.Fields(words) {
			kw := k[w]
			f(&kw)
			k[w] = kw
		}
	}
	inj := func(re *regexp.Regexp, near string) func(*keyword) {
		return func(kw *keyword) { kw.injection, kw.near = re, strings.Fields(near) }
	}
	des := func(re *regexp.Regexp, near string) func(*keyword) {
		return func(kw *keyword) { kw.destructive, kw.near = re, strings.Fields(near) }
	}
	set("ignore disregard forget override bypass skip", inj(reIgnore, "all previous prior above earlier preceding system your original initial developer before"))
	set("reveal show print repeat output tell display leak dump give share expose", inj(reReveal, "system initial hidden secret original developer prompt instructions"))
	set("you", inj(reYouAre, "now dan mode"))
	set("act pretend behave", inj(reActAs, "dan unrestricted unfiltered uncensored jailbroken"))
	set("do", inj(reDoAny, "anything"))
	set("enable enter activate switch developer god dan jailbreak", inj(reMode, "mode"))
	set("new", inj(reNewInst, "instructions"))
	set("drop", des(reDrop, "table database schema"))
	set("truncate", des(reTruncate, ""))
	set("delete", des(reDelete, "from"))
	set("git", func(kw *keyword) { kw.destructive, kw.near = reGitPush, []string{"push"} })
	set("mkfs", func(kw *keyword) { kw.destructive, kw.need = reMkfs, "/dev/" })
	set("dd", func(kw *keyword) { kw.destructive, kw.need = reDD, "of=/dev/" })
	set("rm", func(kw *keyword) { kw.rm = true })
	set(`fuck fucks fucking fucked fucker fuckers motherfucker shit shits shitty bullshit bitch bitches
		bastard bastards asshole assholes dickhead cunt cunts wanker twat prick pussy slut whore`,
		func(kw *keyword) { kw.profane = true })
	t := &keywordTable{words: k}
	for w := range k {
		t.first2[int(w[0]-'a')*26+int(w[1]-'a')] = true
	}
	return t
})

// phraseWindow bounds the text an anchored phrase pattern reads: Go's backtracker clears
// state in proportion to the input, and every phrase is far shorter than this.
const phraseWindow = 120

// checkWord runs the word-started detectors on the word s[i:j].
func checkWord(kws *keywordTable, s string, i, j int, cats Category) (Match, bool) {
	if cats&APIKey != 0 {
		switch s[i] {
		case 's', 'A', 'g', 'x':
			if end, ok := apiKey(s, i, j); ok {
				return Match{Start: i, End: end, Cat: APIKey}, true
			}
		}
		switch s[i] {
		case 'a', 'A', 'h':
			if start, end, ok := apiKeyInContext(s, i); ok {
				return Match{Start: start, End: end, Cat: APIKey}, true
			}
		}
	}
	if cats&(PromptInjection|DestructiveOps|Profanity) == 0 || j-i < 2 || j-i > 16 {
		return Match{}, false
	}
	a, b := lower(s[i]), lower(s[i+1])
	if a < 'a' || a > 'z' || b < 'a' || b > 'z' || !kws.first2[int(a-'a')*26+int(b-'a')] {
		return Match{}, false
	}
	var buf [16]byte
	w := buf[:j-i]
	for k := range w {
		w[k] = lower(s[i+k])
	}
	kw, ok := kws.words[string(w)]
	if !ok {
		return Match{}, false
	}
	if len(kw.near) > 0 && !wordNear(s, j, kw.near) {
		if cats&Profanity != 0 && kw.profane {
			return Match{Start: i, End: j, Cat: Profanity}, true
		}
		return Match{}, false
	}
	if cats&PromptInjection != 0 && kw.injection != nil {
		if loc := kw.injection.FindStringIndex(window(s, i, phraseWindow)); loc != nil {
			return Match{Start: i, End: i + loc[1], Cat: PromptInjection}, true
		}
	}
	if cats&DestructiveOps != 0 {
		if kw.rm {
			if end, ok := rmRecursiveForce(s, j); ok {
				return Match{Start: i, End: end, Cat: DestructiveOps}, true
			}
		} else if win := window(s, i, 2*phraseWindow); kw.destructive != nil && (kw.need == "" || containsFold(win, kw.need)) {
			if loc := kw.destructive.FindStringIndex(win); loc != nil {
				return Match{Start: i, End: i + loc[1], Cat: DestructiveOps}, true
			}
		}
	}
	if cats&Profanity != 0 && kw.profane {
		return Match{Start: i, End: j, Cat: Profanity}, true
	}
	return Match{}, false
}

// rmRecursiveForce reports whether the rm command whose name ends at j has both a
// recursive and a force flag (-rf, -fr, -r -f, --recursive --force, -Rf, ...).
func rmRecursiveForce(s string, j int) (int, bool) {
	recursive, force := false, false
	k := j
	// Flags come first and are few; a bound keeps a text of "rm -rm -rm ..." linear.
	for tokens := 0; tokens < 16; tokens++ {
		for k < len(s) && (s[k] == ' ' || s[k] == '\t') {
			k++
		}
		if k >= len(s) || s[k] != '-' || k-j > 256 {
			break
		}
		t := k
		for t < len(s) && s[t] != ' ' && s[t] != '\t' && s[t] != '\n' {
			t++
		}
		flag := s[k:t]
		// A long option may come with one dash: an em dash folds to one ("rm —force").
		switch long := strings.TrimLeft(flag, "-"); {
		case equalFold(long, "recursive"):
			recursive = true
		case equalFold(long, "force"):
			force = true
		case len(flag) > 1 && flag[1] != '-':
			for x := 1; x < len(flag); x++ {
				switch flag[x] {
				case 'r', 'R':
					recursive = true
				case 'f', 'F': // in capitals, RM -RF means what rm -rf does
					force = true
				}
			}
		}
		k = t
		if recursive && force {
			return k, true
		}
	}
	return 0, false
}

func hasPrefix(s, p string) bool { return len(s) >= len(p) && s[:len(p)] == p }

// containsFold reports whether s contains the lower-case ASCII text sub, in any case.
func containsFold(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		j := 0
		for j < len(sub) && lower(s[i+j]) == sub[j] {
			j++
		}
		if j == len(sub) {
			return true
		}
	}
	return false
}

// equalFold reports whether s is the lower-case ASCII word w in any case.
func equalFold(s, w string) bool { return len(s) == len(w) && containsFold(s, w) }

// apiKeyInContext matches the two formats that have no prefix of their own: an AWS secret
// access key after its variable name (only the 40-character value is the match) and a
// Slack incoming-webhook URL.
func apiKeyInContext(s string, i int) (int, int, bool) {
	const awsName, hook = "aws_secret_access_key", "hooks.slack.com/services/"
	switch {
	case len(s)-i > len(awsName) && containsFold(s[i:i+len(awsName)], awsName):
		k := i + len(awsName)
		for k < len(s) && (s[k] == ' ' || s[k] == '"' || s[k] == '\'' || s[k] == '\t') {
			k++
		}
		if k >= len(s) || (s[k] != '=' && s[k] != ':') {
			return 0, 0, false
		}
		k++
		for k < len(s) && (s[k] == ' ' || s[k] == '"' || s[k] == '\'' || s[k] == '\t') {
			k++
		}
		start := k
		for k < len(s) && (isAlnum(s[k]) || s[k] == '/' || s[k] == '+') {
			k++
		}
		if k-start == 40 {
			return start, k, true
		}
	case hasPrefix(s[i:], hook):
		// hooks.slack.com/services/T{workspace}/B{channel}/{24}
		k := i + len(hook)
		for _, p := range [...]part{{isUpperAlnum, 8, 12}, {isUpperAlnum, 8, 12}, {isAlnum, 24, 24}} {
			if k > i+len(hook) {
				if k >= len(s) || s[k] != '/' {
					return 0, 0, false
				}
				k++
			}
			e := k
			for e < len(s) && e-k <= p.max && p.class(s[e]) {
				e++
			}
			if e-k < p.min || e-k > p.max {
				return 0, 0, false
			}
			k = e
		}
		if !endsToken(s, k) {
			return 0, 0, false
		}
		return i, k, true
	}
	return 0, 0, false
}

// keyedValue matches a JSON string value by the key that names it: the 40-character secret of
// an "aws_secret_access_key" (any case, any prefix such as "AWS_").
func keyedValue(key, value string) (Match, bool) {
	const awsName = "aws_secret_access_key"
	if len(key) < len(awsName) || !containsFold(key[len(key)-len(awsName):], awsName) {
		return Match{}, false
	}
	start := 0
	for start < len(value) && (value[start] == ' ' || value[start] == '\t') {
		start++
	}
	k := start
	for k < len(value) && (isAlnum(value[k]) || value[k] == '/' || value[k] == '+') {
		k++
	}
	if k-start != 40 || !endsKey(value, k) {
		return Match{}, false
	}
	return Match{Start: start, End: k, Cat: APIKey}, true
}

// endsKey reports whether a key ending at k really ends there.
func endsKey(s string, k int) bool {
	return k >= len(s) || !(isAlnum(s[k]) || s[k] == '_' || s[k] == '-' || s[k] == '/' || s[k] == '+')
}

// nearWords is how many words after a keyword wordNear reads: the longest phrase puts its
// needed word this far out ("show me the full hidden system prompt").
const nearWords = 6

// wordNear reports whether one of the next few words after j is in words (any case).
func wordNear(s string, j int, words []string) bool {
	k := j
	for n := 0; n < nearWords && k < len(s) && k-j < 2*phraseWindow; n++ {
		for k < len(s) && !isLetter(s[k]) {
			k++
		}
		start := k
		for k < len(s) && isLetter(s[k]) {
			k++
		}
		w := s[start:k]
		for _, x := range words {
			if len(x) == len(w) && containsFold(w, x) {
				return true
			}
		}
	}
	return false
}
