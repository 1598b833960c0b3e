package plugin

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"

	pluginv1 "halolang.dev/halo/proto/halo/plugin/v1"
)

// Every connection to a plugin is authenticated both ways, so that no other process that
// reaches the socket can drive the plugin, and the host talks to no one but its plugin:
//
//   - The host starts each plugin process with a new random secret (pluginv1.TokenEnv) and
//     sends it with every call on the connection (pluginv1.TokenMetadata, as gRPC per-call
//     credentials); the SDK refuses calls without it. A Bash command that finds a sibling
//     plugin's socket in /proc/net/unix and connects (Landlock before ABI 9 does not mediate
//     connect on pathname sockets) can no longer configure or call it.
//   - Before sending anything, the host checks that the process listening on the socket is the
//     plugin it started (SO_PEERCRED on Linux, LOCAL_PEERPID on macOS): a process that
//     replaced the socket file (one whose Bash write: folder holds the socket folder, say)
//     gets neither the secret nor a declaration.
//
// The secret never appears on a command line, in a log or in an error. The connection is
// authenticated once per stream: the Calls stream that carries every call of a process pays
// for it once.

// newToken returns a new connection secret: 32 random bytes in hexadecimal.
func newToken() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("connection secret: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// tokenCredentials sends the plugin's secret with every call (grpc.PerRPCCredentials).
type tokenCredentials string

func (t tokenCredentials) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{pluginv1.TokenMetadata: string(t)}, nil
}

// RequireTransportSecurity is false: the connection is a Unix socket in a folder only the
// host's user may enter, and the peer is checked at connect (dialPlugin).
func (tokenCredentials) RequireTransportSecurity() bool { return false }

// dialPlugin connects to the socket of the plugin process pid at addr, and refuses a socket
// that another process listens on.
func dialPlugin(ctx context.Context, addr string, pid int) (net.Conn, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", addr)
	if err != nil {
		return nil, err
	}
	peer, ok, err := peerPID(conn)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("who listens on %s: %w", addr, err)
	}
	if ok && peer != pid {
		conn.Close()
		return nil, fmt.Errorf("the socket %s is served by process %d, not by the plugin (process %d): refusing to talk to it", addr, peer, pid)
	}
	return conn, nil
}
