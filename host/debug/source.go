package debug

import (
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"halolang.dev/halo/host/lang"
)

// maxSourceLines bounds the lines of source a stop shows for one stage.
const maxSourceLines = 8

// A stageIndex knows where stages are written: which lines of which file start one, the
// lines each spans, and what it calls.
type stageIndex struct {
	order []string            // file names, as positions carry them, in program order
	text  map[string][]string // each file's lines (none when its source could not be read)
	// starts are each file's stage lines, sorted; spans the last line of the stage starting
	// on each line.
	starts map[string][]int
	spans  map[string]map[int]int
	// targets names what the stage (or start value) written at a place calls.
	targets map[string]string
	// decls is where each pipeline is declared.
	decls map[string]lang.Pos
}

func newStageIndex(prog *lang.Program, source func(string) ([]byte, error)) *stageIndex {
	ix := &stageIndex{text: map[string][]string{}, starts: map[string][]int{}, spans: map[string]map[int]int{},
		targets: map[string]string{}, decls: map[string]lang.Pos{}}
	// Every line a declaration or a stage starts on ends the stage before it.
	bounds := map[string][]int{}
	for _, f := range prog.Files {
		ix.order = append(ix.order, f.Name)
		if source != nil {
			if b, err := source(f.Name); err == nil {
				ix.text[f.Name] = strings.Split(string(b), "\n")
			}
		}
		lines := map[int]bool{}
		for _, d := range f.Decls {
			bounds[f.Name] = append(bounds[f.Name], int(d.Position().Line))
			pd, ok := d.(*lang.PipelineDecl)
			if !ok {
				continue
			}
			ix.decls[pd.Name.Name] = pd.Pos
			if c, ok := pd.Start.(*lang.Call); ok {
				lines[int(c.Pos().Line)] = true
				ix.targets[c.Pos().String()] = c.Target()
			}
			lang.WalkStages(pd.Stages, func(st *lang.Stage) bool {
				lines[int(st.Pos.Line)] = true
				ix.targets[st.Pos.String()] = st.Target()
				for _, c := range st.Calls {
					// A fan-out's calls make their requests and tool calls at their own place.
					ix.targets[c.Pos().String()] = c.Target()
				}
				for _, arm := range st.Arms {
					bounds[f.Name] = append(bounds[f.Name], int(arm.Pos.Line))
				}
				return true
			})
		}
		for l := range lines {
			ix.starts[f.Name] = append(ix.starts[f.Name], l)
			bounds[f.Name] = append(bounds[f.Name], l)
		}
		sort.Ints(ix.starts[f.Name])
		sort.Ints(bounds[f.Name])
	}
	for name, starts := range ix.starts {
		text := ix.text[name]
		ix.spans[name] = map[int]int{}
		for _, l := range starts {
			end := len(text)
			for _, b := range bounds[name] {
				if b > l {
					end = b - 1
					break
				}
			}
			if len(text) == 0 {
				end = l // without the source, a stage is its own line
			}
			end = min(end, l+maxSourceLines-1)
			for end > l && end <= len(text) && blankOrComment(text[end-1]) {
				end--
			}
			ix.spans[name][l] = end
		}
	}
	return ix
}

func blankOrComment(line string) bool {
	t := strings.TrimSpace(line)
	return t == "" || strings.HasPrefix(t, "#") || strings.HasPrefix(t, "//")
}

// files lists the program's file names.
func (ix *stageIndex) files() []string { return ix.order }

// file finds the program's file a person or an editor names: "" is the program's first
// file; otherwise the same name or path, or a bare name that is one file's base name.
func (ix *stageIndex) file(name string, same func(a, b string) bool) (string, bool) {
	if name == "" {
		if len(ix.order) == 0 {
			return "", false
		}
		return ix.order[0], true
	}
	for _, f := range ix.order {
		if same(f, name) {
			return f, true
		}
	}
	if !strings.ContainsAny(name, `/\`) {
		found := ""
		for _, f := range ix.order {
			if filepath.Base(f) == name {
				if found != "" {
					return "", false
				}
				found = f
			}
		}
		return found, found != ""
	}
	return "", false
}

// stageAtOrAfter returns the first line at or after line of file where a stage is written,
// or the line itself when it is inside a stage written over several lines.
func (ix *stageIndex) stageAtOrAfter(file string, line int) (int, bool) {
	starts := ix.starts[file]
	i := sort.SearchInts(starts, line)
	if i < len(starts) && starts[i] == line {
		return line, true
	}
	if i > 0 {
		if prev := starts[i-1]; ix.spans[file][prev] >= line {
			return prev, true
		}
	}
	if i < len(starts) {
		return starts[i], true
	}
	return 0, false
}

// source returns the lines of the stage written at (file:line:col), numbered from first.
func (ix *stageIndex) source(at string) (first int, lines []string) {
	file, line, _ := splitAt(at)
	text := ix.text[file]
	if line < 1 || line > len(text) {
		return line, nil
	}
	end := line
	if e, ok := ix.spans[file][line]; ok {
		end = e
	}
	return line, text[line-1 : min(end, len(text))]
}

// splitAt splits "file:line:col" (the file may hold colons).
func splitAt(at string) (file string, line, col int) {
	i := strings.LastIndexByte(at, ':')
	if i < 0 {
		return at, 0, 0
	}
	col, _ = strconv.Atoi(at[i+1:])
	rest := at[:i]
	j := strings.LastIndexByte(rest, ':')
	if j < 0 {
		return rest, col, 0
	}
	line, _ = strconv.Atoi(rest[j+1:])
	return rest[:j], line, col
}
