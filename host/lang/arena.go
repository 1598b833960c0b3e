package lang

// An arena hands out the nodes of the trees one Parse builds from blocks, and their lists
// carved to size from blocks too, so that a large file makes a few hundred allocations
// instead of one or more per node (BenchmarkParseValidate counts them). A block stays
// alive as long as any node in it does: the nodes of one file live and die together.
type arena struct {
	// file is the name of the file the nodes are parsed from, which its Idents point to.
	file *string

	idents     slab[Ident]
	args       slab[Arg]
	strs       slab[StringLit]
	nums       slab[NumberLit]
	calls      slab[Call]
	stages     slab[Stage]
	rules      slab[Rule]
	types      slab[TypeRef]
	fields     slab[Field]
	params     slab[Param]
	paths      slab[Path]
	lists      slab[ListLit]
	objects    slab[ObjectLit]
	objFields  slab[ObjectField]
	envs       slab[EnvRef]
	bools      slab[BoolLit]
	directives slab[Directive]
	models     slab[Model]
	policies   slab[PolicyDecl]
	tools      slab[ToolDecl]
	agents     slab[AgentDecl]
	schemas    slab[SchemaDecl]
	pipelines  slab[PipelineDecl]

	argList      list[*Arg]
	identList    list[*Ident]
	ruleList     list[*Rule]
	stageList    list[*Stage]
	callList     list[*Call]
	fieldList    list[*Field]
	paramList    list[*Param]
	typeList     list[*TypeRef]
	exprList     list[Expr]
	objFieldList list[*ObjectField]
	dirList      list[*Directive]
}

// The first block of a kind holds slabFirst nodes, each next one twice as many up to
// slabMax: a small file (an editor's, parsed at each key) takes little, a large one few
// allocations.
const (
	slabFirst = 8
	slabMax   = 512
)

// A slab hands out Ts from blocks.
// (used counts the Ts of block handed out: moving an index, not the block's start, writes
// no pointer, so a node costs no write barrier check.)
type slab[T any] struct {
	block []T
	used  int
}

// alloc returns a new T holding v.
func alloc[T any](s *slab[T], v T) *T {
	if s.used == len(s.block) {
		s.block = make([]T, min(max(2*len(s.block), slabFirst), slabMax))
		s.used = 0
	}
	n := &s.block[s.used]
	s.used++
	*n = v
	return n
}

// A list collects the items of the lists of one type being parsed on one stack (a list
// being read may hold another of its type: a branch's arms hold stages), and hands each
// finished list out carved from a block, its capacity its length.
type list[T any] struct {
	stack []T
	block []T
}

// mark is where the list begun now starts on the stack.
func (l *list[T]) mark() int { return len(l.stack) }

func (l *list[T]) push(v T) { l.stack = append(l.stack, v) }

// take returns the items pushed since mark, nil when there are none, and pops them.
func (l *list[T]) take(mark int) []T {
	n := len(l.stack) - mark
	if n == 0 {
		return nil
	}
	if cap(l.block)-len(l.block) < n {
		l.block = make([]T, 0, max(n, min(max(2*cap(l.block), 4*slabFirst), 4*slabMax)))
	}
	start := len(l.block)
	l.block = append(l.block, l.stack[mark:]...)
	// The items popped are not cleared: they are nodes of the tree being built, which lives
	// as long as the stack does.
	l.stack = l.stack[:mark]
	return l.block[start : start+n : start+n]
}

// reset empties the stacks after a declaration that did not parse left items on them.
func (a *arena) reset() {
	a.argList.stack = a.argList.stack[:0]
	a.identList.stack = a.identList.stack[:0]
	a.ruleList.stack = a.ruleList.stack[:0]
	a.stageList.stack = a.stageList.stack[:0]
	a.callList.stack = a.callList.stack[:0]
	a.fieldList.stack = a.fieldList.stack[:0]
	a.paramList.stack = a.paramList.stack[:0]
	a.typeList.stack = a.typeList.stack[:0]
	a.exprList.stack = a.exprList.stack[:0]
	a.objFieldList.stack = a.objFieldList.stack[:0]
	a.dirList.stack = a.dirList.stack[:0]
}

// ident returns the Ident called name at pos, which is in the arena's file.
func (a *arena) ident(pos Pos, name string) *Ident {
	return alloc(&a.idents, Ident{Name: name, place: placeOf(a.file, pos)})
}

// str returns the StringLit of value at pos, which is in the arena's file.
func (a *arena) str(pos Pos, value string) *StringLit {
	return alloc(&a.strs, StringLit{Value: value, place: placeOf(a.file, pos)})
}

func (a *arena) arg(name *Ident, v Expr) *Arg {
	return alloc(&a.args, Arg{Name: name, Value: v})
}
