// Package initcmd implements `halo init [folder]`: a new project with halo.json, a
// .gitignore that keeps .halo/ out of version control, one example pipeline and a test case
// for it (halo test).
package initcmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"halolang.dev/halo/errcode"

	"github.com/spf13/cobra"

	"halolang.dev/halo/cmd/halo/internal/cmdutil"
)

// Options are `halo init`'s inputs.
type Options struct {
	IO cmdutil.IOStreams
	// Dir is the working folder; Folder is resolved against it.
	Dir string
	// Folder is where the project goes; empty means Dir.
	Folder string
	// Name is the project name; empty means the folder's name.
	Name string
	JSON bool
}

// NewCmdInit builds `halo init`. runF, when not nil, replaces initRun (tests).
func NewCmdInit(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "init [folder]",
		Short: "Create a new Halo project",
		Example: `  halo init
  halo init hello
  halo init hello --name greeter --json`,
		Long: `Create halo.json, a .gitignore with .halo/, hello.halo (an example pipeline that
validates) and hello.test.json (a test case for it that halo test runs) in the folder
(default: the current one; it is created if missing). Nothing is overwritten: if any of the
files exists, nothing is written.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.IO = f.IO
			opts.Dir = f.Dir
			if len(args) == 1 {
				opts.Folder = args[0]
			}
			if runF != nil {
				return runF(opts)
			}
			return initRun(opts)
		},
	}
	cmd.Flags().StringVar(&opts.Name, "name", "", "project name (default: the folder's name)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print what was created as JSON")
	return cmd
}

// Config is halo.json: the project's settings. Only name is written by init.
type Config struct {
	Name string `json:"name"`
}

// ExampleFile is the example pipeline's file name.
const ExampleFile = "hello.halo"

// Example is the example pipeline init writes. It must validate clean and be formatted as
// halo fmt formats it (tested).
const Example = `// An example pipeline. Check it with: halo validate
// Test it with halo test (hello.test.json answers the agent with a mock: no key needed).
// Run it with halo run; the agent needs OPENAI_API_KEY.

policy Polite : Block(PromptInjection, Profanity) & MaxWords(60)

agent Greeter [openai/gpt-4o-mini, temp: 0.2]
  system "You greet people warmly in one short sentence."
  requires Polite

pipeline Hello(name: String) -> Result:
  name
    |> Greeter.greet("Say hello to {{name}}.")
`

// ExampleTestFile is the example test case's file name: halo test finds *.test.json files,
// and this one tests hello.halo beside it.
const ExampleTestFile = "hello.test.json"

// ExampleTest is the example test case init writes. halo test passes it (tested).
const ExampleTest = `{
  "name": "greets by name",
  "pipeline": "Hello",
  "inputs": { "name": "Ada" },
  "mocks": { "Greeter.greet": "Hello, Ada! Lovely to meet you." },
  "expect": {
    "status": "completed",
    "output": "Hello, Ada! Lovely to meet you.",
    "calls": ["Greeter.greet"],
    "violations": []
  }
}
`

// Gitignore is what init puts in .gitignore: .halo/ holds runs and installed tools.
const Gitignore = ".halo/\n"

var validName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,62}$`) })

// Created is the --json output.
type Created struct {
	Dir   string   `json:"dir"`
	Name  string   `json:"name"`
	Files []string `json:"files"`
}

func initRun(opts *Options) error {
	folder := opts.Folder
	if folder == "" {
		folder = "."
	}
	dir := folder
	if !filepath.IsAbs(dir) && opts.Dir != "" {
		dir = filepath.Join(opts.Dir, dir)
	}
	dir = filepath.Clean(dir)
	name := opts.Name
	if name == "" {
		name = strings.ToLower(filepath.Base(dir))
	}
	if !validName().MatchString(name) {
		return cmdutil.FlagError("project name %q: use lowercase letters, digits, '.', '-' and '_', starting with a letter or digit (set it with --name)", name)
	}
	cfg, err := json.MarshalIndent(Config{Name: name}, "", "  ")
	if err != nil {
		return err
	}
	files := []struct {
		name string
		data []byte
	}{
		{"halo.json", append(cfg, '\n')},
		{".gitignore", []byte(Gitignore)},
		{ExampleFile, []byte(Example)},
		{ExampleTestFile, []byte(ExampleTest)},
	}
	// Refuse before writing anything, so a refused init changes nothing.
	var exist []string
	for _, f := range files {
		if _, err := os.Lstat(filepath.Join(dir, f.name)); err == nil {
			exist = append(exist, f.name)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("check %s: %w", filepath.Join(folder, f.name), err)
		}
	}
	if len(exist) > 0 {
		return errcode.New(cmdutil.CodeFileExists, "%s already has %s; nothing was written (halo init never overwrites a file)", folder, strings.Join(exist, ", "))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", folder, err)
	}
	var written []string
	for _, f := range files {
		path := filepath.Join(dir, f.name)
		if err := writeNew(path, f.data); err != nil {
			for _, w := range written {
				_ = os.Remove(w) // undo, so a failed init leaves nothing half-made
			}
			return fmt.Errorf("write %s: %w", filepath.Join(folder, f.name), err)
		}
		written = append(written, path)
	}
	out := Created{Dir: folder, Name: name}
	for _, f := range files {
		out.Files = append(out.Files, f.name)
	}
	if opts.JSON {
		enc := json.NewEncoder(opts.IO.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	fmt.Fprintf(opts.IO.Out, "Created project %s in %s: %s\n", name, folder, strings.Join(out.Files, ", "))
	fmt.Fprintf(opts.IO.Out, "Next: halo validate %s, then halo test %s\n", folder, folder)
	return nil
}

// writeNew creates path exclusively: a file that appeared since the check is not replaced.
func writeNew(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	return f.Close()
}
