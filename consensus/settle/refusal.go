package settle

import (
	"fmt"

	"github.com/tenzrod/tenzrod/consensus/ledger"
)

// Refusal is a record the collector will never accept: the sender must
// not retry it. Code is a ledger.Code naming the reason.
type Refusal struct {
	Code   uint32
	Reason string
}

func (r *Refusal) Error() string {
	return fmt.Sprintf("settle: record refused: %s: %s", ledger.Code(r.Code), r.Reason)
}

func refuse(c ledger.Code, format string, args ...any) *Refusal {
	return &Refusal{Code: uint32(c), Reason: fmt.Sprintf(format, args...)}
}
