package pluginv1

// The generators (buf, protoc-gen-go, protoc-gen-go-grpc) are pinned in scripts/proto.sh and
// buf.gen.yaml and run through `go run`, so regenerating needs only Go. generate_test.go fails
// when the committed files do not match plugin.proto.
//go:generate ../../../../scripts/proto.sh
