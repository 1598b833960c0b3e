package check

import (
	"halolang.dev/halo/host/tool"
)

// Stable codes of the checker's diagnostics. Users match on them; never change or reuse one.
const (
	// CodeUndeclared: a name that no declaration introduces.
	CodeUndeclared = "UNDECLARED"
	// CodeDuplicate: a name declared twice, or a built-in name declared.
	CodeDuplicate = "DUPLICATE"
	// CodeUnknownProvider: `tool X : Name(...)` with no such provider type, or an agent's
	// model provider that host/model does not know.
	CodeUnknownProvider = "UNKNOWN_PROVIDER"
	// CodeArguments: the wrong number or kind of arguments (a directive, loop, yield, listen,
	// an agent setting).
	CodeArguments = "ARGUMENTS"
	// CodeBadType: an unknown parameter or field type.
	CodeBadType = "BAD_TYPE"
	// CodeStage: a stage in a place it cannot be (|? first, loop back to no agent).
	CodeStage = "STAGE"
	// CodeBadCondition: a loop or branch condition that is not a valid expression; the runtime
	// reports a condition that fails to evaluate with it too.
	CodeBadCondition = "BAD_CONDITION"
	// CodeShellTemplate: a {{template}} in a shell command line (Bash's command) that stands
	// where no quoting keeps its value one word (an error, at run time too), or that is
	// written {{raw name}} and goes in unquoted (a warning).
	CodeShellTemplate = "SHELL_TEMPLATE"
)

// Codes the checker reports for what other packages own.
const (
	// CodeToolConfig: an agent's tool set or a tool declaration cannot work.
	CodeToolConfig = tool.CodeToolConfig
)
