package rpc

// Registry collects the methods the parts of a node contribute; *Server
// is one.
type Registry interface {
	Register(name string, h Handler)
}

// Contributor is a part of a node with JSON-RPC methods of its own: the
// node's assembly hands each one the registry, so the methods live with
// the part that answers them.
type Contributor interface {
	RegisterRPC(r Registry)
}
