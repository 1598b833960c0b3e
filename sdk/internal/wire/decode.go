package wire

import (
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"

	pluginv1 "halolang.dev/halo/proto/halo/plugin/v1"
)

// decodeCall decodes a CallsRequest that starts a call, as the host sends it, with the call's
// arguments aliasing b rather than copied out of it (protobuf's Unmarshal always copies). It
// reports false for anything else, or any shape it does not expect (a cancel, an unknown or
// repeated field, a string that is not UTF-8): proto.Unmarshal then decodes the message.
// FuzzDecodeCall holds it to proto.Unmarshal's results.
func decodeCall(b []byte) (*pluginv1.CallsRequest, bool) {
	var id uint64
	var call *pluginv1.CallRequest
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, false
		}
		b = b[n:]
		switch {
		case num == 1 && typ == protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return nil, false
			}
			id, b = v, b[n:]
		case num == 2 && typ == protowire.BytesType && call == nil:
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return nil, false
			}
			c, ok := decodeCallRequest(v)
			if !ok {
				return nil, false
			}
			call, b = c, b[n:]
		default:
			return nil, false
		}
	}
	if call == nil {
		return nil, false
	}
	return &pluginv1.CallsRequest{CallId: id, Kind: &pluginv1.CallsRequest_Call{Call: call}}, true
}

func decodeCallRequest(b []byte) (*pluginv1.CallRequest, bool) {
	var instance, method string
	var args []byte
	var seen [4]bool
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 || typ != protowire.BytesType || num < 1 || num > 3 || seen[num] {
			return nil, false
		}
		seen[num] = true
		b = b[n:]
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return nil, false
		}
		b = b[n:]
		switch num {
		case 1, 2:
			if !utf8.Valid(v) {
				return nil, false
			}
			if num == 1 {
				instance = string(v)
			} else {
				method = string(v)
			}
		case 3:
			if len(v) > 0 {
				args = v
			}
		}
	}
	return &pluginv1.CallRequest{InstanceId: instance, Method: method, Args: args}, true
}
