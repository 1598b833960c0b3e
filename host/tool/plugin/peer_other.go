//go:build !linux && !darwin

package plugin

import "net"

// peerPID cannot tell who listens on a socket here: the connection rests on the private
// socket folder and the connection secret alone.
func peerPID(net.Conn) (int, bool, error) { return 0, false, nil }
