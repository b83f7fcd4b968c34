package ledger_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/ledgertest"
	"github.com/tenzrod/tenzrod/receipts/hwkey"
)

// TestRegistrationProvesPossession: machines with TPM-simulator hardware
// keys. A victim registers; an attacker who knows only the victim's public
// keys (and its earlier transaction, signatures included) cannot register
// the victim's machine or peer ID under its own account, on this chain or
// by replaying from another; each attempt is refused with its code and the
// state is exactly that of a twin chain that saw none of them.
func TestRegistrationProvesPossession(t *testing.T) {
	victimOp, gv := ledgertest.Signer(testChain, "victim", 10_000)
	attacker, ga := ledgertest.Signer(testChain, "attacker", 10_000)
	mk := func() *chain { return newChain(t, "", genesisTime, ledgertest.Params(), 1, gv, ga) }
	c, twin := mk(), mk()
	sim := func() *machine {
		return newMachineOn(t, hwkey.BackendTPMSim, genesisTime.Add(-time.Hour), genesisTime.Add(time.Hour))
	}
	victim, own := sim(), sim()
	reg := victim.register(t, victimOp, 1000, 60)
	c.mustApply(c.SignAt(victimOp, 0, reg))
	twin.mustApply(twin.SignAt(victimOp, 0, reg))

	// Hijack the machine: the victim's public keys and signatures, the
	// attacker's own peer, signed by the attacker's peer key.
	hijack := *reg
	hijack.PeerID = own.PeerID.String()
	signPeer(t, &hijack, own.PeerKey, attacker.Account())
	// The victim's registration replayed verbatim from the attacker.
	replay := *reg
	// The victim's peer ID bound to a machine the attacker made up (its
	// own keys, which it can sign with), without the victim's peer key.
	stealPeer := own.unsigned(t, 1000, 60)
	stealPeer.PeerID = victim.PeerID.String()
	own.signMachine(t, stealPeer, attacker.Account())
	signPeer(t, stealPeer, own.PeerKey, attacker.Account())
	// The attacker's ML-DSA-65 signature is fine but the hardware one is
	// lifted: the machine's keys must each sign.
	mixed := own.register(t, attacker, 1000, 60)
	victimSigs := victim.register(t, attacker, 1000, 60)
	mixed.HWSig = victimSigs.HWSig
	mixedPQ := own.register(t, attacker, 1000, 60)
	mixedPQ.PQSig = victimSigs.PQSig
	// Signed for another chain.
	other := own.unsigned(t, 1000, 60)
	payload, err := (&ledger.RegistrationPayload{ChainID: "other-chain", Operator: attacker.Account(),
		MachineID: other.MachineID, PeerID: other.PeerID}).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if other.HWSig, other.PQSig, err = own.ID.SignRegistration(payload); err != nil {
		t.Fatal(err)
	}
	signPeer(t, other, own.PeerKey, attacker.Account())

	before := c.l.AppHash()
	wantCodes(t, c, [][]byte{
		c.SignAt(attacker, 0, &hijack),
		c.SignAt(attacker, 0, &replay),
		c.SignAt(attacker, 0, stealPeer),
		c.SignAt(attacker, 0, mixed),
		c.SignAt(attacker, 0, mixedPQ),
		c.SignAt(attacker, 0, other),
	}, ledger.CodeBadHWSig, ledger.CodeBadHWSig, ledger.CodeBadPeerSig, ledger.CodeBadHWSig, ledger.CodeBadPQSig, ledger.CodeBadHWSig)
	twin.block()
	if !bytes.Equal(c.l.AppHash(), twin.l.AppHash()) {
		t.Fatalf("refused registrations changed state: %x, twin %x (before %x)", c.l.AppHash(), twin.l.AppHash(), before)
	}
	var got ledger.Provider
	if !c.get(ledger.KeyProvider(victim.machineID()), &got) || got.Operator != victimOp.Account() || got.PeerID != victim.PeerID.String() {
		t.Fatalf("victim's registration = %+v", got)
	}
	if c.get(ledger.KeyProvider(own.machineID()), &got) {
		t.Fatalf("attacker's made-up machine registered: %+v", got)
	}
	// The same refusals come from the mempool check.
	if code := ledger.CodeOf(c.l.Check(c.SignAt(attacker, 0, stealPeer))); code != ledger.CodeBadPeerSig {
		t.Fatalf("Check: %v, want bad peer signature", code)
	}
}

// TestRegistrationTaken: keys that do sign for another operator (a machine
// sold with its keys, a peer key copied) still cannot take over what is
// registered: the machine and the peer ID stay with their first operator.
func TestRegistrationTaken(t *testing.T) {
	first, gf := ledgertest.Signer(testChain, "first", 10_000)
	second, gs := ledgertest.Signer(testChain, "second", 10_000)
	c := newChain(t, "", genesisTime, ledgertest.Params(), 1, gf, gs)
	m, n := newMachine(t), newMachine(t)
	c.mustApply(c.SignAt(first, 0, m.register(t, first, 1000, 60)))
	takeMachine := m.register(t, second, 1000, 60)
	takePeer := n.unsigned(t, 1000, 60)
	takePeer.PeerID = m.PeerID.String()
	n.signMachine(t, takePeer, second.Account())
	signPeer(t, takePeer, m.PeerKey, second.Account())
	wantCodes(t, c, [][]byte{
		c.SignAt(second, 0, takeMachine),
		c.SignAt(second, 0, takePeer),
	}, ledger.CodeMachineTaken, ledger.CodePeerTaken)
	if a := c.account(second.Account()); a.Balance != 10_000 || a.Nonce != 0 {
		t.Fatalf("refused registrations touched the account: %+v", a)
	}
	// n with its own peer is still free to register.
	c.mustApply(c.SignAt(second, 0, n.register(t, second, 1000, 60)))
}
