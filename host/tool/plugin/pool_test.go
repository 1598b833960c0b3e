package plugin_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"halolang.dev/halo/errcode"
	"halolang.dev/halo/host/tool"
	"halolang.dev/halo/host/tool/plugin"
	"halolang.dev/halo/host/tool/pool"
)

// pooledProbe is a pool spec for the probe started with args, as a module package's is made:
// a declaration per lease on a client the pool keeps, stopped when its provider asks for a
// process per run.
func pooledProbe(t *testing.T, args []string, opts plugin.Options) pool.Spec {
	return pool.Spec{
		Key: "probe", Name: "Probe",
		New: func() (pool.Resource, error) {
			return newClient(t, plugin.Command{Name: "Probe", Path: bins.probe, Args: args}, opts), nil
		},
		Provider: func(r pool.Resource) (tool.Provider, error) {
			p, err := r.(*plugin.Client).Declare(tool.Declaration{Name: "P", Provider: "Probe"})
			return onClient{p, r.(*plugin.Client)}, err
		},
		Reusable: func(r pool.Resource) bool { return !r.(*plugin.Client).PerRun() },
	}
}

// onClient is a declaration's provider with the client whose process serves it.
type onClient struct {
	tool.Provider
	c *plugin.Client
}

// probeLease leases s, makes a call, and returns the lease and the pid (as the host sees it)
// of the process that answered.
func probeLease(t *testing.T, pl *pool.Pool, s pool.Spec) (tool.Provider, int) {
	t.Helper()
	p, err := pl.Lease(s)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Call(context.Background(), tool.Request{Method: "info", Args: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	return p, p.(interface{ Unwrap() tool.Provider }).Unwrap().(onClient).c.PID()
}

// A pooled plugin serves the next run; one whose provider says it must not be shared across
// runs (sdk.Provider.PerRun) is stopped when its run ends, and the next run gets its own.
func TestPoolKeepsPluginsUnlessPerRun(t *testing.T) {
	asBothUsers(t, func(t *testing.T) {
		pl := pool.New(pool.Options{})
		defer pl.Close()
		kept := pooledProbe(t, nil, plugin.Options{})
		a, pid := probeLease(t, pl, kept)
		a.Close()
		b, again := probeLease(t, pl, kept)
		b.Close()
		if again != pid {
			t.Errorf("the next run got plugin process %d, not the kept %d", again, pid)
		}
		perRun := pooledProbe(t, []string{"--per-run"}, plugin.Options{})
		perRun.Key = "per-run"
		c, first := probeLease(t, pl, perRun)
		c.Close()
		d, second := probeLease(t, pl, perRun)
		d.Close()
		if first == second {
			t.Errorf("a provider that asked for a process per run served two runs from process %d", first)
		}
	})
}

// A plugin that never finishes starting costs the call that started it (TOOL_ERROR, within
// the start timeout), not the pool: the next call tries again and fails the same way.
func TestPoolPluginHangingAtStart(t *testing.T) {
	pl := pool.New(pool.Options{})
	defer pl.Close()
	s := pooledProbe(t, []string{"--hang-start"}, plugin.Options{StartTimeout: 300 * time.Millisecond})
	for i := 0; i < 2; i++ {
		p, err := pl.Lease(s)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		_, err = p.Call(context.Background(), tool.Request{Method: "info"})
		var te *tool.Error
		if !errors.As(err, &te) || errcode.Code(err) != tool.CodeToolError || time.Since(start) > 10*time.Second {
			t.Fatalf("call %d of a plugin that hangs at start: %v after %s", i+1, err, time.Since(start))
		}
		p.Close()
	}
}
