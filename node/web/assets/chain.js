'use strict';
// The chain's section (validators, the viewer's account, escrows and
// payments) and the lookup box that verifies a receipt or a payment.
window.Chain = (S, modelName) => {
  const { $, h, fill, short, peer, mono, num, pct, quiet, call } = window.T;

  // ---- chain
  let paymentsDrawn = ''; // which records the payments table shows
  const account = () => { const a = $('account').value.trim().toLowerCase(); return /^[0-9a-f]{64}$/.test(a) ? a : ''; };
  function renderChain() {
    if (S.chain === false) { $('chain-body').hidden = true; quiet('chain-empty', 'This node runs no chain.'); $('chain-sub').textContent = ''; return; }
    $('chain-body').hidden = false; quiet('chain-empty', '');
    const i = S.info;
    $('chain-sub').textContent = i?.chain_id ? `${i.chain_id} · height ${num(i.height)}` : '';
    const vs = S.validators || [];
    const power = vs.reduce((a, v) => a + v.power, 0);
    fill($('validators-table').tBodies[0], vs.map(v => h('tr', {}, h('td', {}, mono(short(v.operator), v.operator)),
      h('td', { class: 'num', title: power ? pct(v.power / power) + ' of the power' : '' }, num(v.power)), h('td', { class: 'num' }, num(v.stake)))));
    const av = $('account-view'), a = S.account;
    if (!account()) { av.replaceChildren(h('p', { class: 'quiet' }, 'Enter your account to see its balance, escrows and payments (kept in this browser only).')); $('payments-table').hidden = true; return; }
    if (!a) { av.replaceChildren(h('p', { class: 'quiet' }, 'loading…')); return; }
    if (a.error) { av.replaceChildren(h('p', { class: 'err' }, a.error)); return; }
    const escrows = (a.escrows || []).map(e => h('tr', {}, h('td', {}, mono(short(e.settler), e.settler)), h('td', { class: 'num' }, num(e.balance)),
      h('td', { class: 'num' }, num(e.balance - Math.min(e.pending || 0, e.balance))), h('td', { class: 'num' }, num(e.pending || 0)),
      h('td', { class: 'num' }, e.unlock_height ? num(e.unlock_height) : '—')));
    av.replaceChildren(h('dl', { class: 'kv' }, h('dt', {}, 'balance'), h('dd', { data: { balance: a.balance } }, `${num(a.balance)} µ`),
      h('dt', {}, 'nonce'), h('dd', {}, num(a.nonce)), h('dt', {}, 'exists'), h('dd', {}, a.exists ? 'yes' : 'no (never funded)')),
    escrows.length ? h('table', { class: 'grid' }, h('thead', {}, h('tr', {}, h('th', {}, 'escrow with settler'), h('th', { class: 'num' }, 'balance µ'),
      h('th', { class: 'num' }, 'available'), h('th', { class: 'num' }, 'withdrawing'), h('th', { class: 'num' }, 'unlocks at'))), h('tbody', {}, escrows))
      : h('p', { class: 'quiet' }, 'No escrow: nobody can settle payments from this account.'));
    const p = S.payments;
    $('payments-table').hidden = !p || p.error || !p.records.length;
    av.append(h('p', { class: p?.error ? 'err' : 'quiet' }, !p ? '' : p.error ? 'payments: ' + p.error :
      p.records.length ? `${num(p.count)} payment${p.count === 1 ? '' : 's'} settled in blocks ${num(p.from)}..${num(p.to)}: ${num(p.total)} µ, fees ${num(p.fees)} µ` :
        `No payment from this account settled in blocks ${num(p.from)}..${num(p.to)}.`));
    const key = p && !p.error ? p.records.length + ':' + (p.records[p.records.length - 1]?.request_digest || '') : '';
    if (p && !p.error && key !== paymentsDrawn) {
      paymentsDrawn = key;
      $('payments-table').tHead.rows[0].cells[0].title = `blocks ${p.from}..${p.to}`;
      fill($('payments-table').tBodies[0], p.records.slice(-50).reverse().map(r => h('tr', { class: 'pick', on: { click: () => lookup(r.request_digest) } },
        h('td', { class: 'num' }, num(r.height)), h('td', {}, mono(short(r.provider), r.provider)), h('td', {}, mono(short(r.request_digest), r.request_digest)),
        h('td', { class: 'num' }, num(r.price)), h('td', { class: 'num' }, num(r.fee)), h('td', { class: 'num' }, num(r.units)))));
    }
  }

  // ---- lookup and verification
  const kv = pairs => h('dl', { class: 'kv' }, pairs.filter(Boolean).flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
  function receiptView(res) {
    const r = res.receipt || {};
    return [h('p', { class: 'verdict ' + (res.valid ? 'yes' : 'no'), data: { verdict: res.valid ? 'valid' : 'invalid' } },
      res.valid ? '✓ receipt verifies against the machine this node pins for its provider' : '✗ receipt does not verify: ' + (res.problem || 'unknown')),
    kv([['provider', r.provider_peer ? peer(r.provider_peer) : '—'], ['machine', mono(r.machine_id || '—')], res.pinned_to && ['pinned to', mono(res.pinned_to)],
      ['model', modelName(r.model_id || '')], ['engine', r.engine || '—'], ['nonce', mono(r.nonce || '—')],
      ['units', r.units ? `${num(r.units.input_tokens)} in · ${num(r.units.output_tokens)} out` : '—'], ['finish', r.finish_reason || '—'],
      ['signed at', r.time_ms ? new Date(r.time_ms).toISOString() : '—'],
      res.stored && ['stored here', (res.stored.verified ? 'verified' : 'refused') + (res.stored.reason ? ': ' + res.stored.reason : '')]])];
  }
  async function findPayment(digest) {
    const seen = S.recent.find(r => r.request_digest === digest);
    const where = [];
    if (account()) where.push({ payer: account() });
    const machine = seen && S.providers.find(p => p.peer_id === seen.provider)?.machine_id;
    if (machine) where.push({ provider: machine });
    for (const params of where) {
      const res = await call('tenzro_getPayments', params);
      const rec = res.records.find(r => r.request_digest === digest);
      if (rec) return { rec, res, seen };
    }
    return { seen, searched: where.length };
  }
  async function lookup(id) {
    const out = $('lookup-out');
    id = (id || '').trim();
    $('lookup-id').value = id;
    if (!id) { out.replaceChildren(); return; }
    out.replaceChildren(h('p', { class: 'quiet' }, 'checking…'));
    try {
      if (/^[0-9a-fA-F]{32}$/.test(id)) {
        out.replaceChildren(...receiptView(await call('tenzro_getReceipt', { nonce: id.toLowerCase() })));
      } else if (/^[0-9a-fA-F]{64}$/.test(id)) {
        const d = id.toLowerCase(), f = await findPayment(d);
        const parts = [];
        if (f.rec) {
          const r = f.rec;
          parts.push(h('p', { class: 'verdict yes', data: { verdict: 'settled' } }, `✓ payment settled on chain at height ${num(r.height)}`),
            kv([['price', `${num(r.price)} µ (fee ${num(r.fee)})`], ['payer', mono(r.payer)], ['provider machine', mono(r.provider)],
              ['settler', mono(r.settler)], ['units', num(r.units)], ['transaction', mono(r.tx_hash)]]));
        } else {
          parts.push(h('p', { class: 'verdict warn', data: { verdict: 'unsettled' } }, S.chain === false ? 'This node runs no chain: payments are kept off chain here.' :
            f.searched ? `Not settled in the last blocks searched (the provider settles within a few blocks; a record not yet settled is still owed).` :
              'Enter your account above (or pick a recent request) to search its payments.'));
        }
        if (f.seen?.nonce) parts.push(h('h3', {}, 'its receipt'), ...receiptView(await call('tenzro_getReceipt', { nonce: f.seen.nonce })));
        out.replaceChildren(...parts);
      } else {
        out.replaceChildren(...receiptView(await call('tenzro_verifyReceipt', { envelope: id })));
      }
    } catch (e) {
      out.replaceChildren(h('p', { class: 'err' }, e.message));
    }
  }

  return { account, renderChain, lookup, resetPayments: () => { paymentsDrawn = ''; } };
};
