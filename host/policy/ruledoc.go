package policy

// ruleDocs says in a sentence what each rule of the shapes table checks, for people: the
// language server shows it when the pointer rests on a rule (docs/policies.md says more).
var ruleDocs = map[string]string{
	"Block":          "Block(category, ...) refuses a prompt, tool result or answer in which one of the categories is detected (PII, SSN, CreditCard, Email, Phone, APIKey, PromptInjection, DestructiveOps, Profanity, Markdown).",
	"Redact":         "Redact(category, ...) replaces what a category detects in prompts, tool results and answers with [REDACTED:<category>]; it never refuses.",
	"MaxWords":       "MaxWords(n) refuses an answer of more than n words (runs of non-space).",
	"MaxChars":       "MaxChars(n) refuses an answer of more than n characters.",
	"MaxTokens":      "MaxTokens(n) refuses an answer for which the provider reports more than n completion tokens.",
	"MaxSpend":       "MaxSpend(usd) stops the run, before and after each model call, once its cost reaches the limit.",
	"Require":        "Require(JSON | XML | Citation) refuses an answer that holds no JSON, is not one well-formed XML element, or cites nothing like [1].",
	"Enforce":        "Enforce(JSON) refuses an answer that holds no JSON; the JSON alone is what the agent returns.",
	"MatchRegex":     "MatchRegex(\"regex\") refuses an answer the pattern does not match.",
	"Validate":       "Validate(\"field\", \"op\", value) refuses an answer whose JSON field fails the comparison (==, !=, <, <=, >, >=).",
	"LogViolation":   "LogViolation() also logs the policy's violations as warnings; it never refuses.",
	"AllowTools":     "AllowTools(\"Tool.method\", ...) offers the agent only the methods the patterns match; the others are hidden and a call to one is refused.",
	"DenyTools":      "DenyTools(\"Tool.method\", ...) hides the methods the patterns match; a call to one is refused.",
	"ApproveTools":   "ApproveTools(\"Tool.method\", ...) makes a call to a matching method wait for a person's approval.",
	"AllowEffects":   "AllowEffects(read | write | external, ...) offers only the methods with these effects.",
	"ApproveEffects": "ApproveEffects(read | write | external, ...) makes a call to a method with these effects wait for a person's approval.",
	"DenyArgs":       "DenyArgs(\"Tool.method\", [\"arg\",] \"regex\") refuses a call whose argument (any argument, or the one named) matches the regex.",
	"Tone":           "Tone(...) is not enforced: it would need a model to judge the answer.",
	"Anonymize":      "Anonymize(...) is not enforced: it would need a model to judge the answer.",
	"MaxDensity":     "MaxDensity(...) is not enforced: it would need a model to judge the answer.",
}

// RuleDoc says what the rule called name checks, or "" for a name that is no rule.
func RuleDoc(name string) string { return ruleDocs[name] }
