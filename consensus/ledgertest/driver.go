package ledgertest

import (
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/consensus/ledger"
)

// Driver is what a test chain keeps whatever executes its blocks (a
// Ledger directly, or a consensus App through its ABCI calls): the test,
// the block clock and the genesis validators' operators.
type Driver struct {
	T    testing.TB
	Now  time.Time
	Vals []*ledger.Signer // validator operators, equal power
}

// NewDriver is the driver of a chain whose genesis is at genesis with
// nVals validators and the funded accts, and the app genesis to
// initialise the chain with.
func NewDriver(t testing.TB, genesis time.Time, params ledger.Params, nVals int, accts ...ledger.GenesisAccount) (Driver, ledger.AppGenesis) {
	g, vals := Genesis(Chain, params, nVals, accts...)
	return Driver{T: t, Now: genesis, Vals: vals}, g
}

// Tick moves the clock to the next block's time, one second on.
func (d *Driver) Tick() time.Time {
	d.Now = d.Now.Add(time.Second)
	return d.Now
}

// SignAt signs payload by s at nonce, failing the test on error.
func (d *Driver) SignAt(s *ledger.Signer, nonce uint64, payload any) []byte {
	d.T.Helper()
	return SignTx(d.T, s, nonce, payload)
}
