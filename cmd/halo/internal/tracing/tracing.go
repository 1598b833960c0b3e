// Package tracing gives the commands that run pipelines (halo run, resume, mcp and serve)
// their --otel and --otel-content flags, and opens the OpenTelemetry tracer the flags and
// the standard OTEL_* environment variables ask for (host/telemetry).
package tracing

import (
	"context"
	"time"

	"github.com/spf13/pflag"

	"halolang.dev/halo/cmd/halo/internal/cmdutil"
	"halolang.dev/halo/cmd/halo/internal/version"
	"halolang.dev/halo/host/telemetry"
)

// bare is --otel's value when it is given without one.
const bare = "on"

// Flags are --otel[=ENDPOINT] and --otel-content.
type Flags struct {
	// Endpoint is --otel's value: "" when not given, "on" when given bare.
	Endpoint string
	// Content is --otel-content.
	Content bool
}

// Register adds the flags to fs.
func (fl *Flags) Register(fs *pflag.FlagSet) {
	fs.StringVar(&fl.Endpoint, "otel", "", "export OpenTelemetry traces to the OTLP `ENDPOINT` (bare: OTEL_EXPORTER_OTLP_ENDPOINT, else http://localhost:4318)")
	fs.Lookup("otel").NoOptDefVal = bare
	fs.BoolVar(&fl.Content, "otel-content", false, "put prompts, answers, tool arguments and results (after Redact and Block) into the traces")
}

// Open returns the tracer the flags and the environment f holds ask for, and nil when
// they ask for none (the default: telemetry is off unless OTEL_EXPORTER_OTLP_ENDPOINT,
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or --otel says where traces go).
func (fl *Flags) Open(ctx context.Context, f *cmdutil.Factory) (*telemetry.Tracer, error) {
	cfg, err := telemetry.ConfigFromEnv(f.Env)
	if err != nil {
		return nil, cmdutil.FlagError("%v", err)
	}
	switch fl.Endpoint {
	case "":
	case bare:
		// --otel wins over OTEL_SDK_DISABLED and OTEL_TRACES_EXPORTER=none.
		cfg.Disabled = false
		if !cfg.On() {
			cfg.Endpoint = "http://localhost:4318"
			if cfg.Protocol == telemetry.ProtocolGRPC {
				cfg.Endpoint = "http://localhost:4317"
			}
		}
	default:
		cfg.Disabled = false
		cfg.Endpoint, cfg.TracesEndpoint = fl.Endpoint, ""
	}
	cfg.Content = cfg.Content || fl.Content
	cfg.ServiceVersion = version.Current().Version
	cfg.Logger = f.Logger
	t, err := telemetry.Open(ctx, cfg)
	if err != nil {
		return nil, cmdutil.FlagError("--otel: %v", err)
	}
	return t, nil
}

// Close exports what t still holds and stops it, waiting at most three seconds (a
// collector that cannot be reached costs no more at exit). A nil t is fine.
func Close(t *telemetry.Tracer) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	t.Shutdown(ctx)
}
