package wire

import (
	"context"
	"net"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	pluginv1 "halolang.dev/halo/proto/halo/plugin/v1"
)

// TestAuthenticate: a server with the host's secret refuses unary and streaming calls, of its
// own service and of any other on the server (go-plugin's health check, here), that do not
// carry it, and serves those that do.
func TestAuthenticate(t *testing.T) {
	srv, err := NewServer([]Provider{newTestProvider().provider()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	const secret = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	gs := NewGRPCServer(Authenticate(secret))
	pluginv1.RegisterPluginServiceServer(gs, srv)
	healthpb.RegisterHealthServer(gs, health.NewServer())
	sock := filepath.Join(t.TempDir(), "s")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	go gs.Serve(ln) // ends with Stop below
	defer gs.Stop()
	conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c := pluginv1.NewPluginServiceClient(conn)
	h := healthpb.NewHealthClient(conn)

	for _, tc := range []struct {
		name  string
		token []string
		want  codes.Code
	}{
		{"no token", nil, codes.Unauthenticated},
		{"wrong token", []string{secret[:63] + "0"}, codes.Unauthenticated},
		{"a prefix", []string{secret[:32]}, codes.Unauthenticated},
		{"twice", []string{secret, secret}, codes.Unauthenticated},
		{"empty", []string{""}, codes.Unauthenticated},
		{"the token", []string{secret}, codes.OK},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		for _, v := range tc.token {
			ctx = metadata.AppendToOutgoingContext(ctx, pluginv1.TokenMetadata, v)
		}
		_, err := c.Describe(ctx, &pluginv1.DescribeRequest{})
		if status.Code(err) != tc.want {
			t.Errorf("%s: Describe: %v, want %s", tc.name, err, tc.want)
		}
		_, err = h.Check(ctx, &healthpb.HealthCheckRequest{})
		if status.Code(err) != tc.want {
			t.Errorf("%s: health Check: %v, want %s", tc.name, err, tc.want)
		}
		stream, err := c.Calls(ctx)
		if err == nil {
			// A Send that finds the stream ended says io.EOF; Recv gives its status.
			_ = stream.Send(&pluginv1.CallsRequest{CallId: 1, Kind: &pluginv1.CallsRequest_Call{Call: &pluginv1.CallRequest{InstanceId: "none", Method: "echo"}}})
			_, err = stream.Recv()
		}
		if tc.want != codes.OK && status.Code(err) != tc.want {
			t.Errorf("%s: Calls: %v, want %s", tc.name, err, tc.want)
		}
		if tc.want == codes.OK && status.Code(err) == codes.Unauthenticated {
			t.Errorf("%s: Calls refused the token: %v", tc.name, err)
		}
		cancel()
	}
}

// TestAuthenticateNothingWithoutToken: a process started without a secret (by sdktest, or by
// hand) serves any caller.
func TestAuthenticateNothingWithoutToken(t *testing.T) {
	if opts := Authenticate(""); opts != nil {
		t.Fatalf("Authenticate(\"\") = %d options, want none", len(opts))
	}
}
