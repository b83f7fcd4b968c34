// Package payment implements /tenzro/payment/1.0.0, the stream protocol
// by which a gateway hands the provider that served a call the payment
// record it signed for it (receipt.PaymentRecord, with the
// provider's receipt envelope inside), so that the provider, who wants its
// pay, can settle it on chain.
//
// # Exchange
//
// The gateway opens a stream, writes one Delivery frame (its network name
// and 1..MaxRecords records) and half-closes its side. The provider passes
// each record to its Sink, which persists it, and answers with one Ack
// frame: exactly one Result per record, in order, Code 0 meaning "persisted
// by the provider". Then both ends close. Frames are canonical CBOR
// (receipts/cborx) in uvarint length-prefixed frames (p2p.WriteFrame /
// p2p.ReadFrame); a Delivery is at most MaxFrameSize bytes
// (MaxRecords × (receipt.MaxReceiptBytes + 1 KiB)), an Ack MaxAckSize.
// Deliver splits a longer list into several frames, one stream each.
//
// # Outcomes
//
// Every record's Result is independent of the others'. Transient
// (CodeRetry: the sink failed with an ordinary error, the exchange ran out
// of time, the server is stopping): the gateway delivers the record again
// later. Permanent (any other nonzero code): CodeWrongNetwork for every
// record of a delivery naming another network (checked before anything
// else, p2p.CheckNetwork), CodeMalformed for a record failing CheckRecord,
// and a Sink's *Refusal, whose code passes through (CodeRefused when it
// has none). Codes below 1000 are ledger.Code values, so a refusal names
// the check settlement would fail the record on; the protocol's own are
// 1000 and up. Acked maps results to the records a gateway's outbox stops
// delivering. A Sink must be
// idempotent: a record persisted whose ack was lost is delivered again.
//
// A frame that cannot be a Delivery (oversized, truncated, not canonical
// CBOR, no records or too many) resets the stream and reaches no sink;
// Deliver then returns a transport error, and every record of that frame
// counts as not acked.
//
// # Limits
//
// Streams are attached to the resource manager's ServiceName service
// (p2p.AddServiceLimits sets its per-peer stream and memory limits), and
// the server reserves memory for each frame before reading it. At most
// ServerConfig.MaxPerPeer deliveries of one peer and MaxConcurrent of all
// peers are in progress at once; a stream beyond that is reset before it
// is read. One exchange lasts at most ServerConfig.Timeout (read, sink,
// ack), and the client bounds it by its context or DefaultClientTimeout.
package payment
