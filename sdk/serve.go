package sdk

import (
	"fmt"
	"os"
	"runtime/debug"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	pluginv1 "halolang.dev/halo/proto/halo/plugin/v1"
	"halolang.dev/halo/sdk/internal/wire"
)

// Handshake returns the go-plugin handshake a Halo host expects: protocol version 1 of
// proto/halo/plugin/v1 and the magic cookie that marks a process the host started.
func Handshake() plugin.HandshakeConfig {
	return plugin.HandshakeConfig{
		ProtocolVersion:  pluginv1.ProtocolVersion,
		MagicCookieKey:   pluginv1.MagicCookieKey,
		MagicCookieValue: pluginv1.MagicCookieValue,
	}
}

// Serve serves the providers to the Halo host that started this process, and returns when the
// host stops it. It answers only that host: every call must carry the secret the host handed
// the process at start, so another process that reaches the socket cannot drive it. Call it from main and do nothing else there: standard output belongs to the
// handshake, and logs go through Call.Logger. Run by hand (not by a host), the program prints
// a short explanation and exits with status 1.
func Serve(providers ...Provider) {
	logger := hclog.New(&hclog.LoggerOptions{
		Level:      hclog.Trace, // the host filters at its own level
		Output:     os.Stderr,
		JSONFormat: true,
	})
	p, err := Plugin(providers...)
	if err != nil {
		fmt.Fprintf(os.Stderr, "halo plugin: %v\n", err)
		os.Exit(1)
	}
	// The connection secret the host handed this process: every call must carry it. Programs
	// the provider starts do not inherit it.
	token := os.Getenv(pluginv1.TokenEnv)
	_ = os.Unsetenv(pluginv1.TokenEnv)
	wp := p.(*wire.Plugin)
	wp.Logger, wp.Token = logger, token
	// Calls sockets go beside go-plugin's own socket, in the folder the host made for them.
	wp.SocketDir = os.Getenv(plugin.EnvUnixSocketDir)
	tuneGC(os.LookupEnv)
	// It lives as long as the process: Serve returns only when the process is about to exit.
	go exitWithParent(os.Getppid(), logger)
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig:  Handshake(),
		VersionedPlugins: map[int]plugin.PluginSet{pluginv1.ProtocolVersion: {pluginv1.PluginName: p}},
		GRPCServer: func(opts []grpc.ServerOption) *grpc.Server {
			return wire.NewGRPCServer(append(opts, wire.Authenticate(token)...))
		},
		Logger: logger,
	})
}

// Plugin returns the go-plugin plugin (a gRPC one) that serves the providers, checked (a name each, no
// name twice). Serve uses it, and so does sdktest; most authors never call it.
func Plugin(providers ...Provider) (plugin.Plugin, error) {
	ws := make([]wire.Provider, 0, len(providers))
	for _, p := range providers {
		ws = append(ws, p.toWire())
	}
	if _, err := wire.NewServer(ws, nil); err != nil {
		return nil, err
	}
	return &wire.Plugin{Providers: ws}, nil
}

// pluginGCPercent is the garbage collector's target for a plugin (GOGC), unless the plugin's
// environment sets GOGC. A plugin's live heap is small, so at Go's default of 100 the
// collector runs every few dozen calls that carry large arguments, and its fixed cost per
// cycle was a third of a plugin's CPU on 16 KB calls (host/tool/plugin's BenchmarkRoundTrip);
// four times the live heap is still little memory.
const pluginGCPercent = 400

func tuneGC(getenv func(string) (string, bool)) {
	if _, set := getenv("GOGC"); !set {
		debug.SetGCPercent(pluginGCPercent)
	}
}

// exitWithParent ends the plugin when the host that started it is gone, whatever killed it.
// On Linux the host also sets a parent-death signal; elsewhere this is what stops a plugin
// whose host was killed with SIGKILL. A process whose parent dies is re-parented, so its
// parent's pid changes.
func exitWithParent(ppid int, logger hclog.Logger) {
	for range time.Tick(time.Second) {
		if os.Getppid() != ppid {
			logger.Warn("the host that started this plugin is gone; exiting")
			os.Exit(1)
		}
	}
}
