package ledger_test

import (
	"math/big"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/ledgertest"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// streamModel is what the test expects one stream to hold.
type streamModel struct {
	id                       terms.Hash32
	payer, settler, operator int // indexes into the test's signers
	rate, deposit            uint64
	claimed, refunded        uint64
	open                     int64
	closed                   bool
}

// accrual is min(deposit, ⌊rate × (t − open) / 3600⌋) in big integers: an
// oracle independent of the ledger's 128-bit arithmetic.
func accrual(rate, deposit uint64, open, t int64) uint64 {
	if t <= open {
		return 0
	}
	q := new(big.Int).Mul(new(big.Int).SetUint64(rate), big.NewInt(t-open))
	q.Quo(q, big.NewInt(3600))
	if q.Cmp(new(big.Int).SetUint64(deposit)) >= 0 {
		return deposit
	}
	return q.Uint64()
}

// pick returns a random stream, an open one three times in four when
// there is one.
func pick(streams []*streamModel, rng *rand.Rand) *streamModel {
	if rng.IntN(4) > 0 {
		var open []*streamModel
		for _, s := range streams {
			if !s.closed {
				open = append(open, s)
			}
		}
		if len(open) > 0 {
			return open[rng.IntN(len(open))]
		}
	}
	return streams[rng.IntN(len(streams))]
}

// TestStreamProperty drives a real Ledger through random blocks, with
// random gaps of block time, of escrow funding and stream opens, claims
// and stops, valid and not (wrong signer, unknown payee or stream, over
// the escrow, nothing accrued, after the stop). A model predicts every
// transaction's code; after every block each stream matches the model,
// deposit = claimed + refunded + balance, nothing is claimed beyond
// ⌊rate × elapsed / 3600⌋ or the deposit, a closed stream never pays
// again, and the money in accounts, escrows and streams is what genesis
// created.
func TestStreamProperty(t *testing.T) {
	const txFee = 3
	params := ledgertest.Params()
	params.FeePerTx = txFee
	// signers: 0..2 buyers, 3..4 gateways, 5..6 operators.
	names := []string{"buyer-a", "buyer-b", "buyer-c", "gateway-a", "gateway-b", "operator-a", "operator-b"}
	var sg []*ledger.Signer
	var accts []ledger.GenesisAccount
	for _, name := range names {
		s, g := ledgertest.Signer(testChain, name, 1<<40)
		sg, accts = append(sg, s), append(accts, g)
	}
	const firstGW, firstOp = 3, 5
	c := newChain(t, "", genesisTime, params, 1, accts...)
	machines := []*machine{newMachine(t), newMachine(t)}
	c.mustApply(c.sign(sg[firstOp], machines[0].register(t, sg[firstOp], 1000, 60)),
		c.sign(sg[firstOp+1], machines[1].register(t, sg[firstOp+1], 1000, 60)))
	stranger := newMachine(t).machineID()

	total := func() uint64 {
		var sum uint64
		for _, s := range sg {
			sum += c.account(s.Account()).Balance
			for _, st := range []int{3, 4, -1} {
				set := s.Account()
				if st >= 0 {
					set = sg[st].Account()
				}
				sum += c.escrow(s.Account(), set).Balance
			}
		}
		return sum + c.account(ledger.FeePoolAccount).Balance
	}
	type ekey struct{ payer, settler int }
	escrows := map[ekey]uint64{}
	var streams []*streamModel
	streamTotal := func() uint64 {
		var sum uint64
		for _, s := range streams {
			got, _ := c.stream(s.id)
			sum += got.Balance()
		}
		return sum
	}
	genesisMoney := total()
	nonces := map[int]uint64{}
	for i, s := range sg {
		nonces[i] = c.account(s.Account()).Nonce
	}
	seen := map[ledger.Code]int{}
	var opened, claims, stops int
	rng := rand.New(rand.NewPCG(7, 11))

	for blk := range 150 {
		gap := time.Duration(1+rng.IntN(900)) * time.Second
		if rng.IntN(10) == 0 {
			gap = time.Duration(rng.IntN(3)) * time.Hour
		}
		c.Now = c.Now.Add(gap) // c.block adds the last second
		now := c.Now.Add(time.Second).Unix()
		var txs [][]byte
		var wants []ledger.Code
		var opens []*streamModel // by tx index, nil when not an applied open
		signTx := func(i int, p any, want ledger.Code) {
			txs = append(txs, c.SignAt(sg[i], nonces[i], p))
			nonces[i]++
			wants = append(wants, want)
			opens = append(opens, nil)
			seen[want]++
		}
		for range 1 + rng.IntN(6) {
			switch rng.IntN(5) {
			case 0: // fund an escrow
				b, st := rng.IntN(3), rng.IntN(3)
				k := ekey{b, b}
				settler := terms.AccountID{}
				if st < 2 {
					k.settler = firstGW + st
					settler = sg[k.settler].Account()
				}
				amt := uint64(1 + rng.IntN(1_000_000))
				signTx(b, &ledger.EscrowFund{Amount: amt, Settler: settler}, ledger.CodeOK)
				escrows[k] += amt
			case 1: // open
				b, st := rng.IntN(3), rng.IntN(3)
				k := ekey{b, b}
				if st < 2 {
					k.settler = firstGW + st
				}
				signerIdx := k.settler
				if rng.IntN(8) == 0 {
					signerIdx = []int{b, firstGW, firstOp}[rng.IntN(3)]
				}
				mi := rng.IntN(2)
				payee := machines[mi].machineID()
				if rng.IntN(10) == 0 {
					payee = stranger
				}
				rate := []uint64{1, uint64(1 + rng.IntN(100)), uint64(1 + rng.IntN(10_000_000)), uint64(1 + rng.IntN(10_000_000)), 1<<62 + uint64(rng.IntN(1000))}[rng.IntN(5)]
				avail, have := escrows[k]
				deposit := uint64(1 + rng.IntN(int(avail/4+10)))
				s := &streamModel{payer: b, settler: k.settler, operator: firstOp + mi, rate: rate, deposit: deposit, open: now,
					id: ledger.StreamID(sg[signerIdx].Account(), nonces[signerIdx], sg[b].Account(), sg[k.settler].Account(), payee)}
				var want ledger.Code
				switch {
				case signerIdx != k.settler:
					want = ledger.CodeNotAuthorized
				case !have:
					want = ledger.CodeUnknownEscrow
				case deposit > avail:
					want = ledger.CodeOverdraft
				case payee == stranger:
					want = ledger.CodeUnknownProvider
				}
				signTx(signerIdx, &ledger.StreamOpen{Payer: sg[b].Account(), Settler: sg[k.settler].Account(), Payee: payee, Rate: rate, Deposit: deposit}, want)
				if want == ledger.CodeOK {
					escrows[k] -= deposit
					streams = append(streams, s)
					opens[len(opens)-1] = s
					opened++
				}
			case 2, 3: // claim
				if len(streams) == 0 {
					continue
				}
				s := pick(streams, rng)
				id, who := s.id, s.operator
				if rng.IntN(8) == 0 {
					who = []int{s.payer, s.settler, firstOp + (s.operator-firstOp+1)%2}[rng.IntN(3)]
				}
				if rng.IntN(20) == 0 {
					id = terms.Hash32{0xee, byte(blk)}
				}
				var want ledger.Code
				acc := accrual(s.rate, s.deposit, s.open, now)
				switch {
				case id != s.id:
					want = ledger.CodeUnknownStream
				case s.closed:
					want = ledger.CodeStreamClosed
				case who != s.operator:
					want = ledger.CodeNotPayee
				case acc == s.claimed:
					want = ledger.CodeOverdraft
				}
				signTx(who, &ledger.StreamClaim{ID: id}, want)
				if want == ledger.CodeOK {
					s.claimed = acc
					s.closed = acc == s.deposit
					claims++
				}
			case 4: // stop
				if len(streams) == 0 {
					continue
				}
				s := pick(streams, rng)
				who := []int{s.payer, s.settler}[rng.IntN(2)]
				if rng.IntN(8) == 0 {
					who = s.operator
				}
				var want ledger.Code
				switch {
				case s.closed:
					want = ledger.CodeStreamClosed
				case who != s.payer && who != s.settler:
					want = ledger.CodeNotAuthorized
				}
				signTx(who, &ledger.StreamStop{ID: s.id}, want)
				if want == ledger.CodeOK {
					acc := accrual(s.rate, s.deposit, s.open, now)
					s.claimed, s.refunded, s.closed = acc, s.deposit-acc, true
					escrows[ekey{s.payer, s.settler}] += s.refunded
					stops++
				}
			}
		}
		res := c.block(txs...)
		for i, w := range wants {
			if got := res.Txs[i].Code; got != w {
				t.Fatalf("block %d tx %d: %v (%s), want %v", blk, i, got, res.Txs[i].Log, w)
			}
			if s := opens[i]; s != nil && string(res.Txs[i].Data) != string(s.id[:]) {
				t.Fatalf("block %d tx %d: open's data %x, want %s", blk, i, res.Txs[i].Data, s.id)
			}
		}
		for _, s := range streams {
			got, ok := c.stream(s.id)
			switch {
			case !ok:
				t.Fatalf("block %d: stream %s missing", blk, s.id)
			case got.Claimed != s.claimed || got.Refunded != s.refunded || got.Closed != s.closed || got.Deposit != s.deposit:
				t.Fatalf("block %d: stream %+v, model %+v", blk, got, *s)
			case got.Deposit != got.Claimed+got.Refunded+got.Balance():
				t.Fatalf("block %d: stream %+v breaks deposit = claimed + refunded + balance", blk, got)
			case got.Claimed > accrual(got.Rate, got.Deposit, got.OpenTime, now) || got.Claimed > got.Deposit:
				t.Fatalf("block %d: stream %+v claimed beyond ⌊rate × elapsed / 3600⌋", blk, got)
			case got.Closed && got.Balance() != 0:
				t.Fatalf("block %d: closed stream %+v still holds money", blk, got)
			case (c.raw(ledger.KeyStreamIndex(got.Payer, got.ID)) != nil) == got.Closed:
				t.Fatalf("block %d: stream %+v: index entry present = %v", blk, got, !got.Closed)
			}
		}
		for k, want := range escrows {
			if got := c.escrow(sg[k.payer].Account(), sg[k.settler].Account()); got.Balance != want {
				t.Fatalf("block %d: escrow %v = %+v, model %d", blk, k, got, want)
			}
		}
		if got := total() + streamTotal(); got != genesisMoney {
			t.Fatalf("block %d: accounts + escrows + streams + fee pool = %d, genesis had %d", blk, got, genesisMoney)
		}
		for i, n := range nonces {
			if got := c.account(sg[i].Account()).Nonce; got != n {
				t.Fatalf("block %d: nonce of %s is %d, want %d", blk, names[i], got, n)
			}
		}
	}
	t.Logf("%d opens, %d claims, %d stops; codes %v", opened, claims, stops, seen)
	if opened < 5 || claims < 5 || stops < 3 {
		t.Fatalf("sequence too thin: %d opens, %d claims, %d stops", opened, claims, stops)
	}
	for _, code := range []ledger.Code{ledger.CodeNotAuthorized, ledger.CodeUnknownEscrow, ledger.CodeOverdraft, ledger.CodeUnknownProvider,
		ledger.CodeUnknownStream, ledger.CodeStreamClosed, ledger.CodeNotPayee} {
		if seen[code] == 0 {
			t.Errorf("no transaction refused with %v: the sequence missed a case (%v)", code, seen)
		}
	}
}
