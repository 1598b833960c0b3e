// Package plan implements `halo plan FILE [PIPELINE]`: validate the file as halo run does,
// then print each pipeline's worst case (host/plan) without running anything or starting any
// server or plugin.
package plan

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"halolang.dev/halo/cmd/halo/internal/cmdutil"
	"halolang.dev/halo/cmd/halo/internal/complete"
	"halolang.dev/halo/cmd/halo/internal/providers"
	"halolang.dev/halo/cmd/halo/internal/termsafe"
	"halolang.dev/halo/host/lang"
	hplan "halolang.dev/halo/host/plan"
	"halolang.dev/halo/host/policy"
	"halolang.dev/halo/host/store"
	"halolang.dev/halo/host/tool"
)

// Options are `halo plan`'s inputs.
type Options struct {
	F *cmdutil.Factory
	// File is the .halo file; Pipeline the pipeline to plan ("" for every one).
	File, Pipeline string
	// Items is --items; ValueTokens --value-tokens.
	Items, ValueTokens int
	JSON               bool
	// Registry builds the tool registry; nil means providers.Build. Tests register fakes.
	Registry func(f *cmdutil.Factory, dir string) (*tool.Registry, error)
}

// NewCmdPlan builds `halo plan`. runF, when not nil, replaces planRun (tests).
func NewCmdPlan(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{F: f}
	cmd := &cobra.Command{
		Use:   "plan FILE [PIPELINE]",
		Short: "Show a pipeline's worst-case model requests, tokens and cost, and its tools",
		Example: `  halo plan fix.halo
  halo plan fix.halo Fix --items 20 --value-tokens 500
  halo plan fix.halo --json`,
		Long: `Validate FILE as halo run does, then print, for PIPELINE (every pipeline of the file
when none is named), what a run can cost at most, without running anything or starting
any server or plugin: per stage, its agent calls with their models and prices, the most
model requests, tokens and dollars they can take, the tools each is offered with their
effects and what the agent's tool rules do with them, and the tool calls the pipeline
makes itself; then the run's total against its MaxSpend.

A |* each is counted for one item unless --items says how many; each value a prompt reads
at run time (an input, an earlier result) is counted at --value-tokens tokens. A model the
price table does not list, or whose replies nothing caps, makes the cost unknown: it is
never counted as free.`,
		Args:              cobra.RangeArgs(1, 2),
		ValidArgsFunction: complete.FilePipeline(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.File = args[0]
			if len(args) == 2 {
				opts.Pipeline = args[1]
			}
			if runF != nil {
				return runF(opts)
			}
			return planRun(opts)
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&opts.Items, "items", 0, "count each |* each for `N` items (default: per item)")
	fl.IntVar(&opts.ValueTokens, "value-tokens", hplan.DefaultValueTokens, "count each value a prompt reads at run time as `N` tokens")
	fl.BoolVar(&opts.JSON, "json", false, "print the plans as JSON")
	return cmd
}

// Result is the --json output: one plan per pipeline.
type Result struct {
	File  string        `json:"file"`
	Plans []*hplan.Plan `json:"plans"`
}

func planRun(opts *Options) error {
	f := opts.F
	if opts.Items < 0 {
		return cmdutil.FlagError("--items %d: want a number of items, 1 or more", opts.Items)
	}
	if opts.ValueTokens < 1 {
		return cmdutil.FlagError("--value-tokens %d: want a number of tokens, 1 or more", opts.ValueTokens)
	}
	prog, reg, err := providers.LoadProgram(f, []string{opts.File}, opts.Registry)
	if err != nil {
		return err
	}
	var names []string
	if opts.Pipeline != "" {
		if prog.Pipeline(opts.Pipeline) == nil {
			return cmdutil.FlagError("%s declares no pipeline %s (it declares %s)", opts.File, opts.Pipeline, strings.Join(pipelines(prog), ", "))
		}
		names = []string{opts.Pipeline}
	} else {
		names = pipelines(prog)
		if len(names) == 0 {
			return fmt.Errorf("%s declares no pipeline", opts.File)
		}
	}
	cfg := hplan.Config{Tools: reg, Items: opts.Items, ValueTokens: opts.ValueTokens,
		StoreBytes: func(td *lang.ToolDecl) (int, int64, bool) {
			// What the patterns match now, read from the folder (nothing is opened or written).
			files, n, err := store.Measure(f.Dir, storeDecl(f, td))
			return files, n, err == nil
		}}
	res := Result{File: opts.File}
	for _, name := range names {
		p, err := hplan.Pipeline(prog, name, cfg)
		if err != nil {
			return err
		}
		res.Plans = append(res.Plans, p)
	}
	out := termsafe.Writer(f.IO.Out) // names and conditions come from the file
	if opts.JSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(res)
	}
	for i, p := range res.Plans {
		if i > 0 {
			fmt.Fprintln(out)
		}
		Print(out, p)
	}
	return nil
}

func pipelines(prog *lang.Program) []string {
	var out []string
	for _, d := range prog.Decls() {
		if p, ok := d.(*lang.PipelineDecl); ok {
			out = append(out, p.Name.Name)
		}
	}
	return out
}

// Print writes p as text.
func Print(w io.Writer, p *hplan.Plan) {
	items := fmt.Sprintf("each |* each counted for %d items", p.Items)
	if p.PerItem {
		items = "each |* each counted per item (--items N for more)"
	}
	fmt.Fprintf(w, "pipeline %s (%s), worst case: %s; each value a prompt reads counted at %d tokens\n", p.Pipeline, p.At, items, p.ValueTokens)
	pr := printer{w: w, perItem: p.PerItem}
	pr.stages("", p.Stages)
	fmt.Fprintln(w)
	fmt.Fprintf(w, "total: %s\n", costText(p.Total))
	for _, u := range p.Total.Unknown {
		fmt.Fprintf(w, "  unknown: %s\n", u)
	}
	if len(p.Models) > 0 {
		fmt.Fprintln(w, "models:")
		for _, m := range p.Models {
			fmt.Fprintf(w, "  %s: %s\n", m.Model, priceText(m))
		}
	}
	if s := p.MaxSpend; s != nil {
		fmt.Fprintf(w, "MaxSpend: %s (policy %s): ", usd(s.USD), s.Policy)
		switch {
		case p.Total.USDUnknown:
			fmt.Fprintf(w, "the worst case is unknown, so it may be over; the run stops once it has spent %s\n", usd(s.USD))
		case s.Over:
			fmt.Fprintf(w, "the worst case is over it; the run stops once it has spent %s\n", usd(s.USD))
		default:
			fmt.Fprintf(w, "the worst case is within it\n")
		}
		if len(s.Unlimited) > 0 {
			fmt.Fprintf(w, "  agents without MaxSpend, whose calls go on past it: %s\n", strings.Join(s.Unlimited, ", "))
		}
	} else {
		fmt.Fprintln(w, "MaxSpend: none (no agent of the run requires one)")
	}
	if len(p.Stores) > 0 {
		fmt.Fprintln(w, "stores:")
		for _, s := range p.Stores {
			fmt.Fprintf(w, "  %s (%s)", s.Tool, s.Kind)
			if s.Known {
				fmt.Fprintf(w, ": %d %s, %d bytes", s.Files, plural(int64(s.Files), "file", "files"), s.Bytes)
			}
			switch {
			case s.Embed == "":
				fmt.Fprintf(w, "; indexing costs nothing (full-text)\n")
			case !s.Priced:
				fmt.Fprintf(w, "; indexing with %s: no price in the price table\n", s.Embed)
			case s.Known:
				fmt.Fprintf(w, "; indexing them all with %s: %d tokens, %s (halo index; then only changed files)\n", s.Embed, s.IndexTokens, usd(s.IndexUSD))
			default:
				fmt.Fprintf(w, "; embeds with %s at $%s per million tokens\n", s.Embed, trimFloat(s.Price))
			}
		}
	}
}

// storeDecl is td's declaration with Env.NAME read; a value only a run knows is left out.
func storeDecl(f *cmdutil.Factory, td *lang.ToolDecl) tool.Declaration {
	d := tool.Declaration{Name: td.Name.Name, Provider: td.Provider.Name, Named: map[string]any{}}
	env := lang.DeclEnv{Getenv: f.Env.Lookup}
	for _, a := range td.Args {
		v, _ := lang.DeclValue(a.Value, env)
		if a.Name == nil {
			d.Args = append(d.Args, v)
		} else {
			d.Named[a.Name.Name] = v
		}
	}
	return d
}

type printer struct {
	w       io.Writer
	perItem bool
}

func (pr printer) stages(indent string, list []*hplan.Stage) {
	w := pr.w
	for i, s := range list {
		num := fmt.Sprintf("%d.", i+1)
		if s.Op == "start" {
			num = "start"
		}
		op := s.Op
		if op == "start" {
			op = ""
		} else {
			op += " "
		}
		fmt.Fprintf(w, "%s%s %s  %s", indent, num, s.At, strings.TrimSpace(op+s.Text))
		switch {
		case s.Op == "|* each" && pr.perItem:
			fmt.Fprintf(w, "  (counted per item)")
		case s.Runs != 1:
			fmt.Fprintf(w, "  (runs %d times)", s.Runs)
		}
		fmt.Fprintln(w)
		in := indent + "   "
		if s.Loop != nil {
			if s.Loop.To != "" {
				fmt.Fprintf(w, "%sgoes back to %s (%s) up to %d times\n", in, s.Loop.To, s.Loop.Agent, s.Loop.Max)
			}
		}
		for _, a := range s.Agents {
			agentCall(w, in, a)
		}
		for _, t := range s.Tools {
			toolCall(w, in, t)
		}
		for _, c := range s.Pipelines {
			if c.Recursive {
				fmt.Fprintf(w, "%spipeline %s: calls itself (%s), so nothing bounds its cost\n", in, c.Pipeline, c.Via)
				continue
			}
			fmt.Fprintf(w, "%spipeline %s: %s\n", in, c.Pipeline, costText(c.Cost))
			pr.stages(in+"  ", c.Stages)
		}
		for _, a := range s.Arms {
			mark := ""
			if a.Worst {
				mark = "  <- counted (the most expensive arm)"
			}
			label := "arm " + quote(a.Label)
			if a.Label == "else" {
				label = "else"
			}
			fmt.Fprintf(w, "%s%s (%s): %s%s\n", in, label, a.At, costText(a.Cost), mark)
			pr.stages(in+"  ", a.Stages)
		}
	}
}

func agentCall(w io.Writer, in string, a *hplan.AgentCall) {
	fmt.Fprintf(w, "%sagent call %s, model %s\n", in, a.Target, a.Model)
	in2 := in + "  "
	per := "1 request"
	if a.Tools {
		per = fmt.Sprintf("%d requests (max_steps %d + 1", a.Requests, a.MaxSteps)
		if a.Correct > 0 {
			per += fmt.Sprintf(" + @correct(%d)", a.Correct)
		}
		per += ")"
	} else if a.Correct > 0 {
		per = fmt.Sprintf("%d requests (1 + @correct(%d))", a.Requests, a.Correct)
	}
	if a.Retry > 0 {
		per += fmt.Sprintf(", each sent up to %d times (@retry(%d))", a.Retry+1, a.Retry)
	}
	fmt.Fprintf(w, "%s%d %s of %s\n", in2, a.Calls, plural(a.Calls, "call", "calls"), per)
	reply := "unknown (nothing caps it)"
	if a.ReplyTokens > 0 {
		reply = fmt.Sprintf("%d tokens (%s)", a.ReplyTokens, a.ReplyFrom)
	}
	fmt.Fprintf(w, "%sfirst prompt %d tokens; each reply up to %s\n", in2, a.PromptTokens, reply)
	for _, r := range a.Retrievals {
		fmt.Fprintf(w, "%sretrieval from %s (%s): up to %d passages, %d tokens in the prompt", in2, r.Store, r.Kind, r.TopK, r.PromptTokens)
		if r.Embed != "" {
			fmt.Fprintf(w, "; the query embedded with %s: %d tokens, %s a call", r.Embed, r.QueryTokens, usd(r.QueryUSD))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "%sworst case: %s\n", in2, costText(a.Cost))
	for _, u := range a.Cost.Unknown {
		fmt.Fprintf(w, "%s  unknown: %s\n", in2, u)
	}
	if a.NoneOffered != "" {
		fmt.Fprintf(w, "%sno tool can be offered: %s, so the call fails with TOOL_CONFIG\n", in2, a.NoneOffered)
	}
	if len(a.Offered) > 0 {
		fmt.Fprintf(w, "%stools:\n", in2)
		width := 0
		for _, o := range a.Offered {
			width = max(width, len(o.Target))
		}
		for _, o := range a.Offered {
			effect := o.Effect
			if !o.Described {
				effect = "(effect not described)"
			}
			fmt.Fprintf(w, "%s  %-*s  %-8s  %s\n", in2, width, o.Target, effect, offerText(o))
		}
	}
}

func offerText(o *hplan.Offer) string {
	var s string
	switch o.Verdict {
	case "refused":
		s = "refused: " + o.Reason + policyOf(o.Rule)
		if o.Described {
			s = "refused (not offered): " + o.Reason + policyOf(o.Rule)
		}
	case "approval":
		s = "needs approval: " + o.Rule.Text + policyOf(o.Rule)
	case "depends":
		s = "its methods and their effects are known only once it starts"
		if len(o.Rules) > 0 {
			s += "; rules that may apply: " + refsText(o.Rules)
		}
	default:
		s = "allowed"
	}
	if len(o.ArgRules) > 0 && o.Verdict != "refused" {
		s += "; arguments checked by " + refsText(o.ArgRules)
	}
	return s
}

func toolCall(w io.Writer, in string, t *hplan.ToolCall) {
	effect := t.Effect
	if effect == "" {
		effect = "effect not described"
	}
	fmt.Fprintf(w, "%stool call %s (%s)", in, t.Target, effect)
	if t.For != "" {
		fmt.Fprintf(w, ", tool: of %s", t.For)
		switch t.Verdict {
		case "refused":
			fmt.Fprintf(w, ", refused: %s%s", t.Reason, policyOf(t.Rule))
		case "approval":
			fmt.Fprintf(w, ", needs approval: %s%s", t.Rule.Text, policyOf(t.Rule))
		case "allowed":
			fmt.Fprintf(w, ", allowed")
		}
	} else {
		fmt.Fprintf(w, ", made by the pipeline (tool rules do not apply)")
	}
	if t.Runs != 1 {
		fmt.Fprintf(w, ", up to %d times", t.Runs)
	}
	fmt.Fprintln(w)
}

// policyOf names the policy of a rule: " (policy P)".
func policyOf(r *policy.RuleRef) string {
	if r == nil || r.Policy == "" {
		return ""
	}
	return " (policy " + r.Policy + ")"
}

func refsText(rs []policy.RuleRef) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = r.Text + policyOf(&r)
	}
	return strings.Join(parts, ", ")
}

func costText(c hplan.Cost) string {
	if c.RequestsUnknown {
		return "unknown (no bound)"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d model %s", c.Requests, plural(c.Requests, "request", "requests"))
	if c.TokensUnknown {
		b.WriteString(", tokens unknown")
	} else {
		fmt.Fprintf(&b, ", %d tokens in, %d out", c.InputTokens, c.OutputTokens)
	}
	if c.USDUnknown {
		b.WriteString(", cost unknown")
		if c.USD > 0 {
			fmt.Fprintf(&b, " (the priced calls alone: %s)", usd(c.USD))
		}
	} else {
		fmt.Fprintf(&b, ", %s", usd(c.USD))
	}
	return b.String()
}

func priceText(m hplan.ModelPrice) string {
	if !m.Priced {
		return "no price in the price table (cost unknown)"
	}
	limit := "output limit unknown"
	if m.MaxOutput > 0 {
		limit = fmt.Sprintf("output limit %d tokens", m.MaxOutput)
	}
	return fmt.Sprintf("$%s in, $%s out per million tokens; %s", trimFloat(m.Input), trimFloat(m.Output), limit)
}

// usd shows dollars to the hundredth of a cent, and a smaller amount to six places, so a
// call that costs little never reads as free.
func usd(f float64) string {
	f = hplan.RoundUSD(f)
	if f > 0 && f < 0.0001 {
		return fmt.Sprintf("$%.6f", f)
	}
	return fmt.Sprintf("$%.4f", f)
}

func trimFloat(f float64) string {
	s := fmt.Sprintf("%.4f", f)
	s = strings.TrimRight(s, "0")
	if strings.HasSuffix(s, ".") {
		s += "00"
	} else if i := strings.IndexByte(s, '.'); i >= 0 && len(s)-i == 2 {
		s += "0"
	}
	return s
}

func quote(s string) string { return fmt.Sprintf("%q", s) }

func plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
