package wire

import (
	"testing"

	"google.golang.org/protobuf/proto"

	pluginv1 "halolang.dev/halo/proto/halo/plugin/v1"
)

// FuzzDecodeCall: whatever decodeCall takes, it decodes as proto.Unmarshal does.
func FuzzDecodeCall(f *testing.F) {
	for _, m := range []*pluginv1.CallsRequest{
		{CallId: 1, Kind: &pluginv1.CallsRequest_Call{Call: &pluginv1.CallRequest{InstanceId: "1", Method: "echo", Args: []byte(`{"data":"x"}`)}}},
		{CallId: 1 << 40, Kind: &pluginv1.CallsRequest_Call{Call: &pluginv1.CallRequest{}}},
		{CallId: 2, Kind: &pluginv1.CallsRequest_Cancel{Cancel: &pluginv1.CancelCall{}}},
		{CallId: 3},
	} {
		b, err := proto.Marshal(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{0x12, 0x02, 0x1a, 0x00, 0x12, 0x00})
	f.Add([]byte{0x12, 0x03, 0x0a, 0x01, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		got, ok := decodeCall(b)
		if !ok {
			return
		}
		want := &pluginv1.CallsRequest{}
		if err := proto.Unmarshal(b, want); err != nil {
			t.Fatalf("decodeCall took what proto.Unmarshal refuses (%v): %x", err, b)
		}
		if !proto.Equal(got, want) {
			t.Fatalf("decodeCall = %v, proto.Unmarshal = %v, of %x", got, want, b)
		}
	})
}

// The arguments of a decoded call share the frame's memory: no copy.
func TestDecodeCallAliases(t *testing.T) {
	b, err := proto.Marshal(&pluginv1.CallsRequest{CallId: 7, Kind: &pluginv1.CallsRequest_Call{Call: &pluginv1.CallRequest{InstanceId: "1", Method: "echo", Args: []byte(`{"data":"x"}`)}}})
	if err != nil {
		t.Fatal(err)
	}
	req, ok := decodeCall(b)
	if !ok {
		t.Fatal("a plain call was not decoded")
	}
	args := req.GetCall().GetArgs()
	if string(args) != `{"data":"x"}` || &args[len(args)-1] != &b[len(b)-1] {
		t.Fatalf("args %q are not the frame's last bytes", args)
	}
	if _, ok := decodeCall([]byte{0x08, 0x01, 0x1a, 0x00}); ok {
		t.Fatal("a cancel was taken for a call")
	}
}
