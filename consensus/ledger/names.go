package ledger

import (
	"github.com/tenzrod/tenzrod/receipts/cborx"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// MaxNameBytes bounds a model name.
const MaxNameBytes = 64

// maxNameRecordBytes bounds an encoded NameRecord.
const maxNameRecordBytes = 512

// NameBind binds model name Name (e.g. "tenzro-devnet") to the catalog
// model ID ModelID. The signer must operate MachineID, a registered
// provider whose bond is live: the operator who first binds a name owns
// it. Binding a taken name to another ID is refused (CodeNameTaken); to
// the same ID it applies and changes nothing. Only governance
// (NameProposal) can rebind a name.
type NameBind struct {
	Name      string             `cbor:"1,keyasint"`
	ModelID   terms.Hash32       `cbor:"2,keyasint"`
	MachineID identity.MachineID `cbor:"3,keyasint"`
}

func (p *NameBind) validate() error {
	if err := CheckName(p.Name); err != nil {
		return err
	}
	if p.ModelID == (terms.Hash32{}) {
		return reject(CodeMalformed, "name %q: model ID is zero", p.Name)
	}
	return nil
}

// NameProposal proposes rebinding Name to ModelID (a zero ModelID removes
// the binding). It is voted on with ParamVote like a parameter proposal
// and counts as the proposer's yes vote.
type NameProposal struct {
	Name    string       `cbor:"1,keyasint"`
	ModelID terms.Hash32 `cbor:"2,keyasint"`
}

func (p *NameProposal) validate() error { return CheckName(p.Name) }

// NameRecord is a name's binding as stored under KeyName. Operator is the
// account that bound it (zero when governance did); Height is when the
// binding last changed.
type NameRecord struct {
	Name      string             `cbor:"1,keyasint" json:"name"`
	ModelID   terms.Hash32       `cbor:"2,keyasint" json:"model_id"`
	Operator  terms.AccountID    `cbor:"3,keyasint" json:"operator"`
	MachineID identity.MachineID `cbor:"4,keyasint" json:"machine_id"`
	Height    int64              `cbor:"5,keyasint" json:"height"`
}

// KeyName is the state key of a model name's record.
func KeyName(name string) []byte { return cat("n/", []byte(name)) }

// NamePrefix is the prefix of every name record key.
func NamePrefix() []byte { return []byte("n/") }

// CheckName checks a model name's syntax: 1 to MaxNameBytes bytes of
// printable ASCII without spaces or '/' (names appear in query paths).
func CheckName(name string) error {
	if len(name) == 0 || len(name) > MaxNameBytes {
		return reject(CodeMalformed, "model name of %d bytes, want 1..%d", len(name), MaxNameBytes)
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c <= ' ' || c > '~' || c == '/' {
			return reject(CodeMalformed, "model name %q: byte %#x at %d is not printable ASCII without space or '/'", name, c, i)
		}
	}
	return nil
}

// DecodeNameRecord parses a stored name record (canonical CBOR) and checks
// its name and model ID; failures are CodeMalformed *TxError.
func DecodeNameRecord(b []byte) (NameRecord, error) {
	var r NameRecord
	if err := cborx.UnmarshalCanonical(b, maxNameRecordBytes, &r); err != nil {
		return r, reject(CodeMalformed, "name record: %v", err)
	}
	if err := CheckName(r.Name); err != nil {
		return r, err
	}
	if r.ModelID == (terms.Hash32{}) {
		return r, reject(CodeMalformed, "name record %q: model ID is zero", r.Name)
	}
	return r, nil
}

func (r *txRun) bindName(p *NameBind) error {
	prov, err := r.operatedProvider(p.MachineID)
	if err != nil {
		if c := CodeOf(err); c == CodeUnknownProvider || c == CodeNotAuthorized {
			return reject(CodeNoProvider, "name %q: %v", p.Name, err)
		}
		return err
	}
	params, err := r.loadParams()
	if err != nil {
		return err
	}
	if prov.UnbondAt != 0 || prov.Bond < params.MinServingBond {
		return reject(CodeNoProvider, "name %q: provider %s is not bonded (bond %d, minimum %d, unbond at %d)",
			p.Name, p.MachineID, prov.Bond, params.MinServingBond, prov.UnbondAt)
	}
	var cur NameRecord
	ok, err := Load(r.st, KeyName(p.Name), &cur)
	if err != nil {
		return err
	}
	switch {
	case ok && cur.ModelID == p.ModelID:
		return nil
	case ok:
		return reject(CodeNameTaken, "name %q is bound to model %s by %s", p.Name, cur.ModelID, cur.Operator)
	}
	return Save(r.st, KeyName(p.Name), NameRecord{Name: p.Name, ModelID: p.ModelID,
		Operator: r.tx.Body.Signer, MachineID: p.MachineID, Height: r.blk.Height})
}

// rebindName applies a passed NameProposal.
func (r *txRun) rebindName(p *NameProposal) error {
	if p.ModelID == (terms.Hash32{}) {
		r.st.Del(KeyName(p.Name))
		return nil
	}
	return Save(r.st, KeyName(p.Name), NameRecord{Name: p.Name, ModelID: p.ModelID, Height: r.blk.Height})
}
