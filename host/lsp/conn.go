package lsp

import (
	"context"
	"fmt"

	"github.com/sourcegraph/jsonrpc2"
	"github.com/tliron/glsp"
)

// serveConn runs one JSON-RPC connection over rwc until it closes: each request goes to h
// (glsp's dispatch to the protocol's methods), and the answer or error back, as glsp's own
// server does it; exit closes the connection. (glsp v0.2.2 serves a stream only on the
// process's own stdin and stdout, so the few lines that wire jsonrpc2 to the handler are
// here, over the guard.)
func serveConn(ctx context.Context, rwc *guard, h glsp.Handler, log jsonrpc2.Logger) {
	handle := func(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) (any, error) {
		gctx := glsp.Context{
			Method: req.Method,
			Notify: func(method string, params any) {
				if err := conn.Notify(ctx, method, params); err != nil {
					log.Printf("lsp: notify %s: %v", method, err)
				}
			},
			Call: func(method string, params, result any) {
				if err := conn.Call(ctx, method, params, result); err != nil {
					log.Printf("lsp: call %s: %v", method, err)
				}
			},
		}
		if req.Params != nil {
			gctx.Params = *req.Params
		}
		if req.Method == "exit" {
			h.Handle(&gctx)
			return nil, conn.Close()
		}
		r, validMethod, validParams, err := h.Handle(&gctx)
		switch {
		case !validMethod:
			return nil, &jsonrpc2.Error{Code: jsonrpc2.CodeMethodNotFound, Message: fmt.Sprintf("method not supported: %s", req.Method)}
		case !validParams:
			msg := "invalid params"
			if err != nil {
				msg = err.Error()
			}
			return nil, &jsonrpc2.Error{Code: jsonrpc2.CodeInvalidParams, Message: msg}
		case err != nil:
			return nil, &jsonrpc2.Error{Code: jsonrpc2.CodeInvalidRequest, Message: err.Error()}
		}
		return r, nil
	}
	conn := jsonrpc2.NewConn(ctx, jsonrpc2.NewBufferedStream(rwc, jsonrpc2.VSCodeObjectCodec{}), jsonrpc2.HandlerWithError(handle), jsonrpc2.SetLogger(log))
	select {
	case <-conn.DisconnectNotify():
	case <-ctx.Done():
		conn.Close()
		<-conn.DisconnectNotify()
	}
}
