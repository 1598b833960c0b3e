// Package explain implements `halo explain CODE`: print an error code's entry of
// docs/errors.md (what it means, an example, the fix), which the binary carries.
package explain

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"halolang.dev/halo/cmd/halo/internal/cmdutil"
	"halolang.dev/halo/docs"
)

// Options are `halo explain`'s inputs.
type Options struct {
	IO   cmdutil.IOStreams
	Code string
	JSON bool
}

// NewCmdExplain builds `halo explain`. runF, when not nil, replaces explainRun (tests).
func NewCmdExplain(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "explain CODE",
		Short: "Say what an error code means, with an example and the fix",
		Long: `Print the entry of an error code (the [CODE] at the end of a diagnostic or an error):
what it means, an example that produces it, and how to fix it. The code may be written in
any case. The entries are those of docs/errors.md.`,
		Example: `  halo explain UNDECLARED
  halo explain bad_regex`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.IO = f.IO
			opts.Code = args[0]
			if runF != nil {
				return runF(opts)
			}
			return explainRun(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the entry as JSON")
	return cmd
}

// Result is the --json output.
type Result struct {
	Code string `json:"code"`
	Text string `json:"text"`
}

func explainRun(opts *Options) error {
	code := strings.ToUpper(strings.Trim(strings.TrimSpace(opts.Code), "[]`"))
	e, ok := docs.Explain(code)
	if !ok {
		return cmdutil.FlagError("no error code %s (halo explain knows the %d codes docs/errors.md lists)%s", code, len(docs.Entries()), nearest(code))
	}
	if opts.JSON {
		enc := json.NewEncoder(opts.IO.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(Result{Code: e.Code, Text: e.Text})
	}
	fmt.Fprintf(opts.IO.Out, "%s\n\n%s\n", e.Code, plain(e.Text))
	return nil
}

// links are markdown links, shown as their text and where they go.
var links = regexp.MustCompile(`\[([^\]]+)\]\(([^)]+)\)`)

// plain is an entry as a terminal shows it: a link as "text (docs/page.md#anchor)", code
// fences left out and their lines indented.
func plain(md string) string {
	md = links.ReplaceAllStringFunc(md, func(l string) string {
		m := links.FindStringSubmatch(l)
		return m[1] + " (docs/" + m[2] + ")"
	})
	var b strings.Builder
	fence := false
	for _, line := range strings.Split(md, "\n") {
		switch {
		case strings.HasPrefix(line, "```"):
			fence = !fence
		case fence:
			b.WriteString(strings.TrimRight("    "+line, " ") + "\n")
		default:
			b.WriteString(line + "\n")
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// nearest suggests the codes that start like code, or contain it.
func nearest(code string) string {
	var near []string
	for _, e := range docs.Entries() {
		if code != "" && (strings.HasPrefix(e.Code, code) || strings.Contains(e.Code, code)) {
			near = append(near, e.Code)
		}
	}
	if len(near) == 0 || len(near) > 8 {
		return ""
	}
	sort.Strings(near)
	return "; did you mean " + strings.Join(near, " or ") + "?"
}
