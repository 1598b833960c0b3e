package providers

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"halolang.dev/halo/cmd/halo/internal/cmdutil"
	"halolang.dev/halo/cmd/halo/internal/diagtext"
	"halolang.dev/halo/errcode"
	"halolang.dev/halo/host/lang"
	"halolang.dev/halo/host/model"
	"halolang.dev/halo/host/runtime"
	"halolang.dev/halo/host/tool"
)

// A RegistryFunc builds the tool registry of the project in dir. Commands keep one in their
// options so tests can register fakes; nil means Build's registry.
type RegistryFunc func(f *cmdutil.Factory, dir string) (*tool.Registry, error)

// Registry builds the registry of the working folder's project with build, or with Build
// when build is nil.
func Registry(f *cmdutil.Factory, build RegistryFunc) (*tool.Registry, error) {
	if build != nil {
		return build(f, f.Dir)
	}
	set, err := Build(f, f.Dir)
	if err != nil {
		return nil, err
	}
	return set.Registry, nil
}

// LoadProgram is how every command that runs pipelines reads them: it loads the files and
// folders of paths, builds the working folder's registry, and validates the program with it
// exactly as halo validate does (runtime.Validate). Diagnostics go to stderr, all of them;
// a program with errors is a silent ExitFailed, since they were printed.
func LoadProgram(f *cmdutil.Factory, paths []string, build RegistryFunc) (*lang.Program, *tool.Registry, error) {
	prog, diags := lang.Load(f.Dir, paths)
	if diags.HasErrors() {
		diagtext.Print(f, diags, prog.Source)
		return nil, nil, cmdutil.Silent(cmdutil.ExitFailed)
	}
	if len(prog.Files) == 0 {
		return nil, nil, errcode.New(lang.CodeIO, "%s: no .halo file", strings.Join(paths, ", "))
	}
	reg, err := Registry(f, build)
	if err != nil {
		return nil, nil, err
	}
	if diags := runtime.Validate(prog, reg); diags.HasErrors() {
		diagtext.Print(f, diags, prog.Source)
		return nil, nil, cmdutil.Silent(cmdutil.ExitFailed)
	}
	return prog, reg, nil
}

// LoadMocks reads the mocks file at path (relative to the working folder) for a command
// that runs prog, and the scope its keys are checked against besides prog: the other .halo
// files beside it (parsed only; one that does not parse adds what parses of it), nil when
// there are none. So one mocks file beside a project's files serves halo run of any one of
// them and halo serve or halo mcp of them all, by one rule (runtime.Config.MockScope). A
// path "" means no mocks.
func LoadMocks(f *cmdutil.Factory, path string, prog *lang.Program) (*runtime.Mocks, *lang.Program, error) {
	if path == "" {
		return nil, nil, nil
	}
	abs := f.Abs(path)
	b, err := os.ReadFile(abs)
	if err != nil {
		return nil, nil, fmt.Errorf("--mocks: %w", err)
	}
	mocks, err := runtime.ParseMocks(b)
	if err != nil {
		return nil, nil, fmt.Errorf("--mocks %s: %w", path, err)
	}
	return mocks, MockScope(f, filepath.Dir(abs), prog), nil
}

// MockScope parses the .halo files in dir, a mocks file's folder, that prog does not hold:
// what the file's keys may name besides prog. It returns nil when there are none.
func MockScope(f *cmdutil.Factory, dir string, prog *lang.Program) *lang.Program {
	held := map[string]bool{}
	for _, file := range prog.Files {
		held[filepath.Clean(f.Abs(file.Name))] = true
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var others []string
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".halo") && !held[p] {
			others = append(others, p)
		}
	}
	if len(others) == 0 {
		return nil
	}
	scope, _ := lang.Load(f.Dir, others)
	return scope
}

// Models opens a run's model providers as the runtime does by default (model.Open with the
// environment, one provider per model reference for every run of the command: a provider is
// safe for concurrent use, and keeps what it learned, such as the offered tools' wire bytes,
// which a provider opened for each run encoded again), and says, when a provider's API key
// is not set, how to set it and that --mock runs without one.
func Models(f *cmdutil.Factory) runtime.ModelOpener {
	type opened struct {
		p  model.Provider
		id string
	}
	var cache sync.Map // ref -> opened
	return func(ref string) (model.Provider, string, error) {
		if o, ok := cache.Load(ref); ok {
			return o.(opened).p, o.(opened).id, nil
		}
		p, id, err := model.Open(ref, model.Config{Env: f.Env, Logger: f.Logger})
		var me *model.Error
		if errors.As(err, &me) && me.KeyEnv != "" {
			err = &model.Error{Code: me.Code, KeyEnv: me.KeyEnv, Err: err,
				Message: fmt.Sprintf("%s; set it in the environment halo runs in (export %s=...), or run with --mock to answer without a model", me.Message, me.KeyEnv)}
		}
		if err == nil {
			o, _ := cache.LoadOrStore(ref, opened{p, id})
			p, id = o.(opened).p, o.(opened).id
		}
		return p, id, err
	}
}
