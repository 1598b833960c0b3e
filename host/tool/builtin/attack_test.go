package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/halo-lang/halo/host/tool"
	"github.com/halo-lang/halo/internal/ptytest"
	"github.com/halo-lang/halo/internal/testuser"
)

// Attack tests: what a hostile Bash command (one an agent was talked into, say) tries against
// the host and the user. Some need a host process of their own (one with a controlling
// terminal, say): the test binary re-executes itself with helperEnv set to the attack, and
// TestMain sends it to runHelper.
const (
	helperEnv     = "HALO_BUILTIN_TEST_HELPER"
	helperModeEnv = "HALO_BUILTIN_TEST_MODE"
	helperWorkEnv = "HALO_BUILTIN_TEST_WORK"
)

func runHelper() int {
	switch os.Getenv(helperEnv) {
	case "tty":
		return helperTTY()
	}
	fmt.Println("unknown helper", os.Getenv(helperEnv))
	return 2
}

// helperHost builds the built-in types as the CLI does, in the sandbox mode the test asked
// for, and opens decl with them.
func helperHost(decl tool.Declaration) (tool.Provider, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	mode := os.Getenv(helperModeEnv)
	sandboxed := mode != "none"
	b := New(Config{Executable: exe, Getenv: os.LookupEnv, Sandbox: &sandboxed, userNamespace: mode == "sandbox+userns"})
	reg := tool.NewRegistry()
	for _, ty := range b.Types() {
		if err := reg.Add(ty); err != nil {
			return nil, err
		}
	}
	decl.Dir = os.Getenv(helperWorkEnv)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return reg.Open(ctx, decl)
}

// typeInto is a Perl program that queues its argument into the input of the terminal file
// named by the first, one character at a time (TIOCSTI, 0x5412), as the review's attack did:
// the user's shell would read it as a command once halo exits.
const typeInto = `open(T, "+<", $ARGV[0]) or die "open $ARGV[0]: $!\n"; for (split //, $ARGV[1]) { ioctl(T, 0x5412, $_) or die "TIOCSTI $ARGV[0]: $!\n" } print "typed into $ARGV[0]\n";`

// helperTTY is a host whose standard input is its controlling terminal, as halo's is when a
// user runs it from a shell. A plain child of it types into the terminal first (the control:
// the harness sees that). Then a Bash command with network: false tries the same through
// /dev/tty and every /dev/pts entry, and to write over the terminal. It prints what each
// command got.
func helperTTY() int {
	ctl := exec.Command("perl", "-e", typeInto, "/dev/tty", "echo CONTROL-TYPED\n")
	out, err := ctl.CombinedOutput()
	fmt.Printf("control: %v %s", err, out)

	p, err := helperHost(tool.Declaration{Name: "Shell", Provider: "Bash", Named: map[string]any{"network": false}})
	if err != nil {
		fmt.Println("open:", err)
		return 1
	}
	defer p.Close()
	for _, a := range []struct{ name, command string }{
		{"type into /dev/tty", fmt.Sprintf(`perl -e '%s' /dev/tty 'echo INJECTED-BY-BASH
'`, typeInto)},
		{"type into /dev/pts/*", fmt.Sprintf(`for t in /dev/pts/[0-9]*; do perl -e '%s' "$t" 'echo INJECTED-BY-BASH
'; done`, typeInto)},
		{"write over /dev/tty", `echo WRITTEN-BY-BASH > /dev/tty`},
		{"controlling terminal", `ps -o tty= -p $$; tty`},
	} {
		res, err := p.Call(context.Background(), tool.Request{Method: "run", Args: mustJSON(map[string]any{"command": a.command})})
		var r runResult
		_ = json.Unmarshal(res, &r)
		fmt.Printf("bash, %s: err=%v exit=%d stdout=%q stderr=%q\n", a.name, err, r.ExitCode, r.Stdout, r.Stderr)
	}
	return 0
}

// TestBashCannotTypeIntoTheTerminal is item 1 of the red-team review: a network: false Bash
// command opened /dev/tty and queued a command (TIOCSTI) that the user's shell ran,
// unconfined, after halo exited. Now the plugin and its commands have no controlling
// terminal (a session of their own), /dev/tty is not granted, and seccomp refuses TIOCSTI
// and TIOCLINUX; nothing a command does reaches the terminal.
func TestBashCannotTypeIntoTheTerminal(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	testuser.Both(t, nil, func(t *testing.T) {
		for _, mode := range modes {
			t.Run("sandbox="+mode, func(t *testing.T) {
				term, err := ptytest.Open()
				if err != nil {
					t.Fatal(err)
				}
				defer term.Close()
				var out bytes.Buffer
				cmd := exec.Command(exe, "-test.run=^$")
				cmd.Env = append(os.Environ(), helperEnv+"=tty", helperModeEnv+"="+mode, helperWorkEnv+"="+t.TempDir())
				cmd.Stdout, cmd.Stderr = &out, &out
				if err := term.Start(cmd); err != nil {
					t.Fatal(err)
				}
				if err := cmd.Wait(); err != nil {
					t.Fatalf("host: %v\n%s", err, out.String())
				}
				seen := term.Seen(5 * time.Second)
				t.Logf("host:\n%s\nterminal: %q", out.String(), seen)
				if !strings.Contains(seen, "CONTROL-TYPED") {
					t.Fatalf("control: a plain child of the host could not type into its terminal, so the test proves nothing (terminal: %q)\n%s", seen, out.String())
				}
				for _, mark := range []string{"INJECTED-BY-BASH", "WRITTEN-BY-BASH"} {
					if strings.Contains(seen, mark) {
						t.Errorf("a Bash command reached the user's terminal: %s appeared there", mark)
					}
				}
				if !strings.Contains(out.String(), `stdout="?\n"`) && !strings.Contains(out.String(), "not a tty") {
					t.Errorf("a Bash command has a controlling terminal:\n%s", out.String())
				}
			})
		}
	})
}
