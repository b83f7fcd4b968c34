package main

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/p2p/payment"
	"github.com/tenzrod/tenzrod/receipts/cborx"
	"github.com/tenzrod/tenzrod/receipts/receipt"
)

// maxRecordText bounds one --record argument or file.
const maxRecordText = 1 << 20

func newTxSettleCmd() *cobra.Command {
	var (
		o       txOpts
		records []string
	)
	cmd := &cobra.Command{
		Use:   "settle --key FILE --record RECORD [--record RECORD …]",
		Short: "Settle signed payment records yourself (a buyer's records if their gateway and provider never do)",
		Long: `settle submits payment records in one Settlement transaction. Anyone may:
each record carries its settler's signature and the provider's receipt, and
the chain checks both. A buyer holds every record it paid for — the
response's tenzro.payment.signed.record — so its payments settle even when
the gateway that signed them and the provider that served them are gone.

RECORD is the record's base64 (as the response carries it), or @FILE: a file
holding that base64 or a whole chat completion response (its
tenzro.payment.signed.record is taken). A record settled before is reported
as a duplicate, not an error; any other skip (expired, bad signature, escrow
short, …) exits non-zero with its code.`,
		Example: `  curl -s $GW/v1/chat/completions -H "Authorization: Bearer $TOKEN" -d '{…}' > answer.json
  tenzrod tx settle --api $GW --key me.key --record @answer.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(records) == 0 {
				return errors.New("--record is required: a payment record's base64, or @FILE")
			}
			recs := make([]receipt.PaymentRecord, len(records))
			for i, r := range records {
				rec, err := parseRecordArg(r)
				if err != nil {
					return fmt.Errorf("--record %d: %w", i+1, err)
				}
				recs[i] = *rec
			}
			if len(recs) > ledger.MaxRecordsPerTx {
				return fmt.Errorf("--record: %d records, at most %d per transaction", len(recs), ledger.MaxRecordsPerTx)
			}
			s, err := o.open(cmd)
			if err != nil {
				return err
			}
			if err := s.submit(fmt.Sprintf("settle %d payment record(s)", len(recs)), &ledger.Settlement{Records: recs}); err != nil {
				return err
			}
			return checkSettleReport(s.last.Data)
		},
	}
	o.register(cmd)
	cmd.Flags().StringArrayVar(&records, "record", nil, "a payment record: base64, or @FILE (base64 or a chat completion response); repeatable")
	return cmd
}

// parseRecordArg reads one record given as base64 or @FILE.
func parseRecordArg(arg string) (*receipt.PaymentRecord, error) {
	text := arg
	if path, ok := strings.CutPrefix(arg, "@"); ok {
		if st, err := os.Stat(path); err != nil {
			return nil, err
		} else if st.Size() > maxRecordText {
			return nil, fmt.Errorf("%s is %d bytes, more than %d", path, st.Size(), maxRecordText)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		text = strings.TrimSpace(string(b))
		if strings.HasPrefix(text, "{") {
			var resp struct {
				Tenzro struct {
					Payment struct {
						Signed *struct {
							Record []byte `json:"record"`
						} `json:"signed"`
					} `json:"payment"`
				} `json:"tenzro"`
			}
			if err := json.Unmarshal(b, &resp); err != nil {
				return nil, fmt.Errorf("%s: not a chat completion response: %w", path, err)
			}
			if resp.Tenzro.Payment.Signed == nil || len(resp.Tenzro.Payment.Signed.Record) == 0 {
				return nil, fmt.Errorf("%s: the response carries no tenzro.payment.signed.record (an off-chain gateway, or an unpaid call)", path)
			}
			return decodeRecord(resp.Tenzro.Payment.Signed.Record)
		}
	}
	raw, err := base64.StdEncoding.DecodeString(text)
	if err != nil {
		return nil, fmt.Errorf("not base64: %w", err)
	}
	return decodeRecord(raw)
}

// decodeRecord decodes a record's canonical CBOR and checks what needs no
// chain (price, receipt present and hashing right, signature size).
func decodeRecord(raw []byte) (*receipt.PaymentRecord, error) {
	var rec receipt.PaymentRecord
	if err := cborx.UnmarshalCanonical(raw, maxRecordText, &rec); err != nil {
		return nil, fmt.Errorf("not a payment record: %w", err)
	}
	if err := payment.CheckRecord(&rec); err != nil {
		return nil, err
	}
	return &rec, nil
}

// checkSettleReport fails on a record the chain skipped for any reason but
// having been settled already.
func checkSettleReport(dataHex string) error {
	data, err := hex.DecodeString(dataHex)
	if err != nil || len(data) == 0 {
		return fmt.Errorf("tx: settle: the node returned no settlement report")
	}
	rep, err := ledger.DecodeSettleReport(data)
	if err != nil {
		return err
	}
	var bad []string
	for _, sk := range rep.Skipped {
		if sk.Code != ledger.CodeDuplicateRecord {
			bad = append(bad, fmt.Sprintf("record %d: %s (code %d): %s", sk.Index+1, sk.Code, uint32(sk.Code), sk.Reason))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("tx: settle: %d of %d record(s) skipped (record fees paid for them: %d µ): %s",
			len(bad), int(rep.Settled)+len(rep.Skipped), rep.Fee, strings.Join(bad, "; "))
	}
	return nil
}
