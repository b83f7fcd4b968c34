// Package sessioncache is /tenzro/session-cache/1.0.0: how a session's
// primary hands its state to the session's standby successor, and how a
// gateway assigns and checks that successor (DESIGN.md "Sessions and
// successors").
//
// Client API (each call one stream, one request frame, one answer frame):
//
//	Assign(ctx, h, to, Assignment{SessionID, ModelID, PrimaryPeer, PrimaryMachine, Payer, StreamID}) error
//	    gateway → successor: the statement, signed by the gateway's libp2p
//	    host key, naming the machine that will send the session's state.
//	Challenge(ctx, h, to, sessionID) (turn, stateHash, err)
//	    gateway → successor: the successor proves, signed by its session
//	    key, which turn it holds and the SHA-256 of that state; a gateway
//	    stops the standby stream of one that cannot.
//	Seal(sess, successorKey, &State{...}) ([]byte, error) and
//	SendState(ctx, h, to, sealed) error
//	    primary → successor, after each turn: the state (model ID, token
//	    IDs of the conversation so far, sampling, turn) sealed with HPKE
//	    (KEM X-Wing, HKDF-SHA256, AES-128-GCM) to the successor's announced
//	    key, AAD = session ID ‖ turn ‖ SHA-256(state), in an envelope signed
//	    by the primary's certified session key.
//
// The successor side is a Holder (keys, the sessions it stands by for,
// the latest state of each, in memory within a bound and, with a Store,
// on disk as received, so a restart re-verifies them and stays warm)
// behind a Server.
// The Holder accepts a state only when it is sealed to its own key,
// unaltered, signed by the machine the session's assignment named as
// primary (and sent from that peer), for the assigned model, and newer
// than the turn it holds; every refusal is counted by reason
// (tenzro_session_cache_rejected_total{reason}).
//
// Frames are uvarint length-prefixed Core Deterministic CBOR, at most
// MaxFrameSize bytes; a malformed or oversized frame resets the stream.
// Streams attach to the resource manager's session-cache service, whose
// per-peer limits p2p.AddServiceLimits sets, and the server caps streams
// per peer and in all.
package sessioncache
