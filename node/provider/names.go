package provider

import (
	"context"
	"errors"
	"time"

	"github.com/tenzrod/tenzrod/consensus/ledger"
)

// bindNames binds each served model's name to its catalog ID on chain
// once the registration has committed, so that gateways resolve the name
// to this ID (DESIGN.md, Models by ID). A name another ID holds is left to
// it: this provider's offer is then found under its ID only.
func (r *registrar) bindNames(ctx context.Context, loaded <-chan struct{}) {
	select {
	case <-ctx.Done():
		return
	case <-loaded:
	}
	d := r.p.d
	for _, o := range r.p.models.offers() {
		bind := &ledger.NameBind{Name: o.Name, MachineID: d.Identity.MachineID()}
		copy(bind.ModelID[:], o.ModelID)
		for attempt := 0; ; attempt++ {
			res, err := d.Account.Submit(ctx, bind)
			var te *ledger.TxError
			switch {
			case err == nil:
				d.Log.Info("chain: model name bound", "name", o.Name, "model", o.ModelID, "height", res.Height)
			case errors.As(err, &te) && te.Code == ledger.CodeNameTaken:
				d.Log.Warn("chain: model name is bound to another model; offering under the ID only", "name", o.Name, "model", o.ModelID)
			case ctx.Err() == nil && attempt < 10:
				select {
				case <-ctx.Done():
					return
				case <-time.After(registerRetry):
				}
				continue
			default:
				d.Log.Warn("chain: model name not bound", "name", o.Name, "err", err)
			}
			break
		}
	}
}
