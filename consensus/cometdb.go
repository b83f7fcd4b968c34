package consensus

import (
	"fmt"

	"github.com/cockroachdb/pebble"
	dbm "github.com/cometbft/cometbft-db"
	cmtcfg "github.com/cometbft/cometbft/config"
)

// cometMemTable is the memtable of CometBFT's own pebble databases
// (blocks, state, transaction index, evidence). Pebble preallocates each
// write-ahead log it keeps at 1.1 × the memtable, and a node keeps a few
// per database: at pebble's default 4 MB that is most of a devnet's disk
// (a block here is a few kilobytes). 1 MB still takes hundreds of blocks
// per flush; a batch larger than the memtable is flushed as it is.
const cometMemTable = 1 << 20

// openCometDB opens one of CometBFT's databases: pebble with the smaller
// memtable, any other configured backend as CometBFT would.
func openCometDB(ctx *cmtcfg.DBContext) (dbm.DB, error) {
	if dbm.BackendType(ctx.Config.DBBackend) != dbm.PebbleDBBackend {
		return cmtcfg.DefaultDBProvider(ctx)
	}
	db, err := dbm.NewPebbleDBWithOpts(ctx.ID, ctx.Config.DBDir(), &pebble.Options{MemTableSize: cometMemTable})
	if err != nil {
		return nil, fmt.Errorf("consensus: open %s database: %w", ctx.ID, err)
	}
	return db, nil
}
