package payment

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/receipt"
)

// TestDeliverPersists sends more records than one frame holds: every one
// reaches the sink intact, from the gateway's peer, and is acked in order.
func TestDeliverPersists(t *testing.T) {
	client, server := newPair(t)
	sink := newSink(nil)
	srv := serve(t, server, ServerConfig{}, sink)
	recs := records(t, 2*MaxRecords+3, 300)

	results, err := Deliver(t.Context(), client, testNetwork, server.ID(), recs)
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != len(recs) {
		t.Fatalf("%d results for %d records", len(results), len(recs))
	}
	for i, r := range results {
		if !r.OK() {
			t.Fatalf("record %d: %+v", i, r)
		}
	}
	for i, ok := range Acked(results) {
		if !ok {
			t.Fatalf("record %d not acked", i)
		}
	}
	if n, calls := sink.count(); n != len(recs) || calls != len(recs) {
		t.Fatalf("sink persisted %d records in %d calls, want %d", n, calls, len(recs))
	}
	for i := range recs {
		if got := sink.got[recs[i].RequestDigest]; !reflect.DeepEqual(got, recs[i]) {
			t.Fatalf("record %d arrived altered", i)
		}
	}
	if sink.from[client.ID()] != len(recs) {
		t.Fatalf("records by sender: %v, want all from %s", sink.from, client.ID())
	}
	if st := srv.Stats(); st.Deliveries != 3 || st.Accepted != uint64(len(recs)) || st.Refused+st.Transient+st.Reset != 0 {
		t.Fatalf("stats %+v, want 3 deliveries of %d accepted records", st, len(recs))
	}
	// Delivering again is safe: the sink is idempotent, every record acks.
	results, err = Deliver(t.Context(), client, testNetwork, server.ID(), recs[:5])
	if err != nil || len(results) != 5 || !results[4].OK() {
		t.Fatalf("redelivery: %+v %v", results, err)
	}
}

// TestDeliverFullFrames sends frames of MaxRecords records with receipts
// of the largest size the chain takes: they fit the frame cap.
func TestDeliverFullFrames(t *testing.T) {
	client, server := newPair(t)
	sink := newSink(nil)
	serve(t, server, ServerConfig{}, sink)
	recs := records(t, MaxRecords, receipt.MaxReceiptBytes)
	b, err := encodeDelivery(&Delivery{Network: testNetwork, Records: recs})
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > MaxFrameSize || len(b) < MaxRecords*receipt.MaxReceiptBytes {
		t.Fatalf("full frame is %d bytes, cap %d", len(b), MaxFrameSize)
	}
	results, err := Deliver(t.Context(), client, testNetwork, server.ID(), recs)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := sink.count(); n != MaxRecords || !results[MaxRecords-1].OK() {
		t.Fatalf("sink holds %d records, want %d; last result %+v", n, MaxRecords, results[MaxRecords-1])
	}
}

// TestWrongNetwork: every record of another network's delivery is refused
// with CodeWrongNetwork, permanently, and none reaches the sink.
func TestWrongNetwork(t *testing.T) {
	client, server := newPair(t)
	sink := newSink(nil)
	srv := serve(t, server, ServerConfig{Network: "mainnet"}, sink)
	results, err := Deliver(t.Context(), client, "other-net", server.ID(), records(t, 3, 64))
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range results {
		if r.Code != CodeWrongNetwork || !r.Permanent() || !strings.Contains(r.Reason, "other-net") {
			t.Fatalf("record %d: %+v, want a permanent CodeWrongNetwork naming the network", i, r)
		}
	}
	if _, calls := sink.count(); calls != 0 {
		t.Fatalf("sink called %d times", calls)
	}
	if st := srv.Stats(); st.Refused != 3 || st.Accepted != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// TestSinkOutcomesPassThrough: per-record outcomes are independent; a
// Sink's refusal code reaches the gateway, a refusal without a code is
// CodeRefused, an ordinary error is transient with the cause kept local,
// and a record failing the stateless checks never reaches the sink.
func TestSinkOutcomesPassThrough(t *testing.T) {
	client, server := newPair(t)
	sink := newSink(func(_ context.Context, rec *receipt.PaymentRecord) error {
		switch index(rec) {
		case 1:
			return &Refusal{Code: uint32(ledger.CodeBadRecordSig), Reason: "not signed by the escrow's settler"}
		case 2:
			return fmt.Errorf("collector: %w", &Refusal{Reason: "unknown settler"})
		case 3:
			return errors.New("disk full at /var/secret/path")
		case 4:
			return &Refusal{Code: CodeRetry, Reason: "collector busy"}
		}
		return nil
	})
	serve(t, server, ServerConfig{}, sink)
	recs := records(t, 7, 64)
	recs[5].Price = 0 // CheckRecord fails it
	// Sent as a raw frame so the server, not Deliver, has to check it.
	b, err := encodeDelivery(&Delivery{Network: testNetwork, Records: recs})
	if err != nil {
		t.Fatal(err)
	}
	ackB, err := rawStream(t, client, server.ID(), frameOf(b))
	if err != nil {
		t.Fatal(err)
	}
	ack, err := DecodeAck(ackB, len(recs))
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		code   uint32
		reason string
	}{{0, ""}, {uint32(ledger.CodeBadRecordSig), "settler"}, {CodeRefused, "unknown settler"}, {CodeRetry, "could not persist"},
		{CodeRetry, "collector busy"}, {CodeMalformed, "price 0"}, {0, ""}}
	for i, w := range want {
		r := ack.Results[i]
		if r.Code != w.code || !strings.Contains(r.Reason, w.reason) {
			t.Errorf("record %d: %+v, want code %d with %q", i, r, w.code, w.reason)
		}
	}
	if strings.Contains(ack.Results[3].Reason, "/var/secret") {
		t.Errorf("a transient error's cause leaked to the gateway: %q", ack.Results[3].Reason)
	}
	if got, want := Acked(ack.Results), []bool{true, true, true, false, false, true, true}; !reflect.DeepEqual(got, want) {
		t.Errorf("Acked = %v, want %v", got, want)
	}
	if n, calls := sink.count(); n != 2 || calls != 6 {
		t.Errorf("sink persisted %d in %d calls, want 2 in 6 (the malformed record never reaches it)", n, calls)
	}
	// A second delivery answers the same per record, in the outbox's form.
	res, err := Deliver(t.Context(), client, testNetwork, server.ID(), append(recs[:5:5], recs[6]))
	if acked := Acked(res); err != nil || !reflect.DeepEqual(acked, []bool{true, true, true, false, false, true}) {
		t.Errorf("Acked(Deliver): %v %v", acked, err)
	}
}

// TestDeliverChecksRecordsLocally: Deliver does not send a record that
// can never settle; it answers CodeMalformed for it and sends the rest.
func TestDeliverChecksRecordsLocally(t *testing.T) {
	client, server := newPair(t)
	sink := newSink(nil)
	serve(t, server, ServerConfig{}, sink)
	recs := records(t, 4, 64)
	recs[0].Receipt = make([]byte, receipt.MaxReceiptBytes+1)
	recs[1].Receipt[0] ^= 1 // no longer hashes to ReceiptHash
	recs[2].Sig = recs[2].Sig[:10]
	results, err := Deliver(t.Context(), client, testNetwork, server.ID(), recs)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"limit", "hash", "signature"} {
		if results[i].Code != CodeMalformed || !strings.Contains(results[i].Reason, want) {
			t.Errorf("record %d: %+v, want CodeMalformed mentioning %q", i, results[i], want)
		}
	}
	if !results[3].OK() {
		t.Errorf("good record: %+v", results[3])
	}
	if n, calls := sink.count(); n != 1 || calls != 1 {
		t.Errorf("sink persisted %d in %d calls, want the good record only", n, calls)
	}
	// Nothing valid to send: no stream at all, no error.
	results, err = Deliver(t.Context(), client, testNetwork, server.ID(), recs[:1])
	if err != nil || len(results) != 1 || results[0].Code != CodeMalformed {
		t.Fatalf("only a malformed record: %+v %v", results, err)
	}
}
