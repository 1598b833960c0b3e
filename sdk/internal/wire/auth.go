package wire

import (
	"context"
	"crypto/subtle"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	pluginv1 "halolang.dev/halo/proto/halo/plugin/v1"
)

// Authenticate returns the server options that refuse every call, on every service of the
// plugin's gRPC server (go-plugin's controller, stdio, broker and health services included),
// that does not carry token under pluginv1.TokenMetadata: the secret the host handed this
// process at start (pluginv1.TokenEnv). Another process that reaches the plugin's socket (a
// hostile plugin that read its path in /proc/net/unix) gets UNAUTHENTICATED and nothing else.
// An empty token authenticates nothing: a process started by sdktest, or by hand.
//
// The check runs once per RPC: the host's Calls stream, which carries every call, pays for it
// once.
func Authenticate(token string) []grpc.ServerOption {
	if token == "" {
		return nil
	}
	want := []byte(token)
	check := func(ctx context.Context) error {
		md, _ := metadata.FromIncomingContext(ctx)
		got := md.Get(pluginv1.TokenMetadata)
		if len(got) != 1 || subtle.ConstantTimeCompare([]byte(got[0]), want) != 1 {
			return status.Error(codes.Unauthenticated, "this plugin serves only the Halo host that started it")
		}
		return nil
	}
	return []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			if err := check(ctx); err != nil {
				return nil, err
			}
			return h(ctx, req)
		}),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			if err := check(ss.Context()); err != nil {
				return err
			}
			return h(srv, ss)
		}),
	}
}
