'use strict';
// The node's live page: one JSON-RPC batch a second to /rpc on this origin,
// paused while the tab is hidden. Every value a provider or a buyer
// controls is set as text, never parsed as HTML.
(() => {
  const REFRESH_MS = 1000, WINDOW_MS = 5 * 60 * 1000, RATE_MS = 60 * 1000, CHAIN_EVERY = 3;
  const $ = id => document.getElementById(id);

  // h builds an element: h('td', {class: 'num', title: 'x'}, 'text', child…).
  function h(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'data') for (const [dk, dv] of Object.entries(v)) e.dataset[dk] = dv;
      else if (k === 'on') for (const [ev, fn] of Object.entries(v)) e.addEventListener(ev, fn);
      else e.setAttribute(k, v === true ? '' : v);
    }
    for (const c of kids.flat()) if (c !== undefined && c !== null) e.append(c instanceof Node ? c : String(c));
    return e;
  }
  const fill = (tbody, rows) => tbody.replaceChildren(...rows);
  const short = id => !id ? '—' : id.length > 14 ? id.slice(0, 6) + '…' + id.slice(-6) : id;
  const peer = id => h('span', { class: 'peer', title: id, data: { peer: id || '' } }, short(id));
  const mono = (v, full) => h('span', { class: 'mono', title: full || v }, v);
  const num = v => v === undefined || v === null ? '—' : Number(v).toLocaleString('en-US');
  const ms = v => v > 0 ? Plot.fmtMs(v) : '—';
  const pct = v => (v * 100).toFixed(v >= 0.995 || v === 0 ? 0 : 1) + '%';
  const ago = tMs => { const s = Math.max(0, (Date.now() - tMs) / 1000); return s < 90 ? s.toFixed(0) + ' s' : (s / 60).toFixed(0) + ' min'; };
  const clock = tMs => new Date(tMs).toLocaleTimeString('en-GB', { hour12: false });
  const pill = (text, cls, title) => h('span', { class: 'pill ' + cls, title }, text);
  const quiet = (id, msg) => { const p = $(id); p.hidden = !msg; p.textContent = msg || ''; };

  async function batch(calls) {
    const body = calls.map(([method, params], i) => ({ jsonrpc: '2.0', id: i + 1, method, params: params || {} }));
    const r = await fetch('/rpc', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body), cache: 'no-store' });
    if (!r.ok) throw new Error('HTTP ' + r.status);
    const byId = new Map((await r.json()).map(x => [x.id, x]));
    return body.map(b => byId.get(b.id) || { error: { code: -32603, message: 'no answer' } });
  }
  async function call(method, params) {
    const [x] = await batch([[method, params]]);
    if (x.error) throw new Error(x.error.message);
    return x.result;
  }

  const S = {
    tick: 0, info: null, providers: [], metrics: null, metricsErr: null, recent: [], lastSeq: 0, routes: true,
    lat: null, feed: null, validators: null, chain: null, account: null, payments: null, quotes: null, quotesErr: null,
    hedge: [], price: new Map(), peers: [], // price: provider|model → [[t, p50]]
  };

  // ---- node and header
  function renderNode() {
    const i = S.info;
    if (!i) return;
    const hw = i.hardware_key ? 'hardware' : 'software key (not hardware-attested)';
    const rows = [['role', i.role], ['peer', mono(i.peer_id)], ['machine', mono(i.machine_id)], ['key', i.key_backend + ' · ' + hw],
      ['version', i.version], ['network', i.network], ['chain', i.chain_id ? i.chain_id + ' · height ' + num(i.height) : 'none'],
      ['listening', h('span', { title: (i.listen_addrs || []).join('\n') }, (i.listen_addrs || []).length + ' addresses')],
      ['peers', h('span', { title: (S.peers || []).map(p => `${p.peer_id} ${p.direction} ${p.latency_ms.toFixed(1)} ms ${p.agent || ''}`).join('\n') },
        `${(S.peers || []).length} connected`)],
      ['providers', `${S.providers.filter(p => p.status === 'up').length} up of ${S.providers.length} known`],
      ['open breakers', String(Object.values(S.metrics?.providers || {}).filter(c => c.breaker && c.breaker.state !== 'closed').length)]];
    $('node-info').replaceChildren(...rows.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
    $('hdr').replaceChildren(h('span', {}, h('b', {}, i.role)), h('span', {}, 'peer ', peer(i.peer_id)),
      h('span', {}, i.network), h('span', {}, i.version),
      i.chain_id ? h('span', {}, 'height ', h('b', { id: 'hdr-height' }, num(i.height))) : null);
    document.title = `tenzrod · ${i.role} · ${short(i.peer_id)}`;
  }

  // ---- providers
  function breakerCell(p) {
    const b = S.metrics?.providers?.[p.peer_id]?.breaker;
    const state = b?.state || p.breaker;
    if (!state) return h('td', { class: 'mute', title: 'no attempt routed to it yet' }, '—');
    let title = '', text = state;
    if (b) {
      title = `opened ${b.opens} times · ${b.consecutive_failures} consecutive failures`;
      if (b.last_failure) title += `\nlast failure ${b.last_failure_at ? clock(Date.parse(b.last_failure_at)) : ''}: ${b.last_failure}`;
      if (state === 'open' && b.open_until) {
        const left = Math.max(0, (Date.parse(b.open_until) - Date.now()) / 1000);
        text += ' · ' + left.toFixed(0) + ' s';
        title += `\nopen until ${clock(Date.parse(b.open_until))}`;
      }
    }
    return h('td', { class: 'b-' + state, title, data: { breaker: state } }, text);
  }
  function renderProviders() {
    const ps = S.providers;
    const up = ps.filter(p => p.status === 'up').length;
    $('providers-sub').textContent = ps.length ? `${up} up of ${ps.length}` : '';
    quiet('providers-empty', ps.length ? '' : 'No provider known yet: none has announced itself or been found in the DHT.');
    fill($('providers-table').tBodies[0], ps.map(p => {
      const m = S.metrics?.providers?.[p.peer_id];
      const models = (p.models || []).map(x => (x.name || short(x.model_id)) + (x.state && x.state !== 'warm' ? ` (${x.state})` : ''));
      return h('tr', { data: { peer: p.peer_id, status: p.status } },
        h('td', {}, peer(p.peer_id)),
        h('td', {}, pill(p.status, 's-' + p.status)),
        h('td', { class: 'num' }, `${p.in_flight}/${p.capacity}`),
        h('td', { class: 'num' }, num(p.queue_depth)),
        h('td', { class: 'num', title: m ? `${m.latency_samples} samples` : 'not measured by this node' }, m ? ms(m.p95_ms) : '—'),
        breakerCell(p),
        h('td', { class: 'num' + (p.standing_bp === undefined ? ' mute' : '') }, p.standing_bp === undefined ? '—' : (p.standing_bp / 100).toFixed(1) + '%'),
        h('td', {}, p.registered === undefined ? h('span', { class: 'mute', title: 'this node runs no chain' }, '—') : p.registered ? h('span', { class: 'yes' }, 'yes') : h('span', { class: 'no' }, 'no')),
        h('td', { class: p.key_backend === 'software' ? 'warn' : '' }, p.key_backend || '—'),
        h('td', {}, p.region ? h('span', { class: 'claim' }, p.region) : '—'),
        h('td', {}, p.hardware_class?.value ? h('span', { class: p.hardware_class.claimed ? 'claim' : '' }, p.hardware_class.value) : '—'),
        h('td', { title: (p.models || []).map(x => x.model_id).join('\n') }, models.join(', ') || '—'),
        h('td', { class: 'num' + (p.heartbeat_age_ms > 3000 ? ' warn' : '') }, p.last_heartbeat_ms ? ago(p.last_heartbeat_ms) : '—'));
    }));
  }

  // ---- router metrics and the hedge win rate
  function rateOver(key, spanMs) {
    const s = S.hedge, now = s.length && s[s.length - 1];
    if (!now) return null;
    let past = s[0];
    for (const x of s) if (x.t >= now.t - spanMs) { past = x; break; }
    return now.m[key] - past.m[key];
  }
  function renderMetrics() {
    const m = S.metrics;
    $('plot-hedge').closest('figure').hidden = !S.routes;
    if (!m) {
      $('metrics-sub').textContent = '';
      $('metrics-body').replaceChildren(h('p', { class: 'quiet' }, S.metricsErr || 'loading…'));
      Plot.note($('plot-hedge'), S.routes ? 'no data yet' : 'this node routes no requests');
      return;
    }
    const paid = Object.values(m.providers || {}).reduce((a, c) => a + (c.paid || 0), 0);
    const tile = (label, v, key, title) => {
      const d = key ? rateOver(key, RATE_MS) : null;
      return h('div', { class: 'metric', title, data: { metric: key || label } }, h('div', { class: 'v' }, num(v), d ? h('span', { class: 'd' }, `+${num(d)}/min`) : null), h('div', { class: 'l' }, label));
    };
    const won = m.hedges_dispatched ? pct(m.hedges_won / m.hedges_dispatched) : '—';
    const tiles = h('div', { class: 'metrics' },
      tile('requests routed', m.requests_routed, 'requests_routed'),
      tile('hedges dispatched', m.hedges_dispatched, 'hedges_dispatched'),
      tile(`hedges won (${won})`, m.hedges_won, 'hedges_won'),
      tile('failovers', m.failovers, 'failovers', 'failover rounds after both the primary and its hedge failed'),
      tile('continuations', m.continuations, 'continuations', 'streams continued on another provider after breaking mid-answer'),
      tile('deadline misses', m.deadline_misses, 'deadline_misses'),
      tile('bad receipts', m.bad_receipts, 'bad_receipts', 'receipts that failed verification (not paid)'),
      tile('paid µ', paid, null, 'micro-units paid to providers since this node started'));
    const rows = Object.entries(m.providers || {}).sort(([a], [b]) => a < b ? -1 : 1).map(([id, c]) =>
      h('tr', { data: { peer: id } }, h('td', {}, peer(id)), h('td', { class: 'num' }, num(c.attempts)), h('td', { class: 'num' }, num(c.won)),
        h('td', { class: 'num' }, num(c.hedges_won)), h('td', { class: 'num' + (c.failures ? ' err' : '') }, num(c.failures)),
        h('td', { class: 'num' }, num(c.throttled)), h('td', { class: 'num' }, num(c.refused)), h('td', { class: 'num' }, num(c.cancelled)),
        h('td', { class: 'num' }, num(c.paid)), h('td', { class: 'mute', title: c.breaker?.last_failure || '' }, c.breaker?.last_failure ? c.breaker.last_failure.slice(0, 60) : '')));
    const table = rows.length ? h('div', { class: 'scroll' }, h('table', { class: 'grid' },
      h('thead', {}, h('tr', {}, ['provider', 'attempts', 'won', 'hedge won', 'failed', 'throttled', 'refused', 'cancelled', 'paid µ', 'last failure'].map((t, i) => h('th', { class: i && i < 9 ? 'num' : '' }, t)))),
      h('tbody', {}, rows))) : h('p', { class: 'quiet' }, 'Nothing routed yet.');
    $('metrics-sub').textContent = `since start · ${num(m.requests_routed)} requests`;
    $('metrics-body').replaceChildren(tiles, table);
    // Win rate over a trailing minute at each sample; a gap where no
    // hedge went out in that minute.
    const pts = S.hedge.map((x, i) => {
      let j = i;
      while (j > 0 && S.hedge[j - 1].t >= x.t - RATE_MS) j--;
      const d = x.m.hedges_dispatched - S.hedge[j].m.hedges_dispatched, w = x.m.hedges_won - S.hedge[j].m.hedges_won;
      return [x.t, d > 0 ? Math.min(1, w / d) : null];
    });
    Plot.lines($('plot-hedge'), [{ cls: 'c3', points: pts }], { now: Date.now(), windowMs: WINDOW_MS, ymin: 0, ymax: 1, yfmt: v => pct(v), empty: 'no hedge dispatched in the last minutes' });
  }

  // ---- latency small multiples
  function renderLatency() {
    const box = $('latency-plots');
    if (!S.routes) { box.replaceChildren(); quiet('latency-empty', 'This node routes no requests, so it measures no provider latency.'); return; }
    // Every known provider gets a plot, measured or not: nothing hidden.
    const byPeer = new Map((S.lat?.providers || []).map(v => [v.provider, v]));
    for (const p of S.providers) if (!byPeer.has(p.peer_id)) byPeer.set(p.peer_id, { provider: p.peer_id, samples_ms: [], count: 0, p95_ms: 0, hedge_delay_ms: S.lat?.hedge_max_ms || 0 });
    const ls = [...byPeer.values()].sort((a, b) => a.provider < b.provider ? -1 : 1);
    quiet('latency-empty', ls.length ? '' : 'No provider known yet.');
    const keep = new Map([...box.children].map(c => [c.dataset.peer, c]));
    const kids = ls.map(v => {
      let c = keep.get(v.provider);
      if (!c) {
        c = h('div', { class: 'small', data: { peer: v.provider } }, h('h3', {}, peer(v.provider), h('span', { class: 'sub' })), document.createElementNS('http://www.w3.org/2000/svg', 'svg'));
      }
      c.querySelector('.sub').textContent = `n ${num(v.count)} · p95 ${ms(v.p95_ms)} · hedge ${ms(v.hedge_delay_ms)}`;
      c.querySelector('.sub').title = `${num(v.count)} observations over the tracker's life; the plot holds the latest ${v.samples_ms.length}` +
        (v.censored?.length ? `, ${v.censored.length} of them cancelled attempts slower than the p95 (grey)` : '');
      return c;
    });
    box.replaceChildren(...kids);
    ls.forEach((v, i) => Plot.histogram(kids[i].querySelector('svg'), v.samples_ms, v.censored, v.p95_ms, v.hedge_delay_ms));
  }

  // ---- recent requests
  let recentDrawn = -1; // the lastSeq the table shows: rows are rebuilt only when new ones came
  function renderRecent() {
    const rs = S.recent;
    if (recentDrawn === S.lastSeq && S.routes) return;
    recentDrawn = S.lastSeq;
    $('recent-sub').textContent = rs.length ? `last ${rs.length} · newest first · click a row to verify its receipt` : '';
    quiet('recent-empty', !S.routes ? 'This node routes no requests.' : rs.length ? '' : 'No request routed yet.');
    $('recent-table').hidden = !rs.length;
    fill($('recent-table').tBodies[0], rs.map(r => {
      const receipt = r.nonce || r.receipt_problem ? (r.receipt_verified ? pill('verified', 'yes', 'nonce ' + r.nonce) : pill('refused', 'no', r.receipt_problem)) : h('span', { class: 'mute' }, '—');
      return h('tr', { class: r.nonce ? 'pick' : '', data: { seq: r.seq, provider: r.provider || '', verified: String(!!r.receipt_verified), nonce: r.nonce || '' },
        on: r.nonce ? { click: () => lookup(r.nonce) } : undefined },
        h('td', { title: new Date(r.time_ms).toISOString() }, clock(r.time_ms)),
        h('td', {}, r.model + (r.stream ? ' ·stream' : '') + (r.probe ? ' ·probe' : '')),
        h('td', {}, r.provider ? peer(r.provider) : '—'),
        h('td', { class: 'num' }, r.attempts || '—'),
        h('td', {}, r.hedged ? pill('hedged', 'c3') : ''),
        h('td', {}, r.continued ? pill('continued', 'warn') : ''),
        h('td', { class: 'num' }, r.price ? num(r.price) : '—'),
        h('td', { class: 'num' }, r.price ? `${num(r.input_tokens)}/${num(r.output_tokens)}` : '—'),
        h('td', { class: 'num' }, num(Math.round(r.duration_ms))),
        h('td', {}, receipt),
        h('td', { class: 'err', title: r.error || '' }, r.error ? r.error.slice(0, 80) : ''));
    }));
  }

  // ---- quotes
  function modelNames() {
    const names = new Set();
    for (const p of S.providers) for (const m of p.models || []) names.add(m.name || m.model_id);
    return [...names].sort();
  }
  function renderQuoteModels() {
    const sel = $('quote-model'), names = modelNames(), cur = sel.value;
    if (names.join('\n') === [...sel.options].map(o => o.value).join('\n')) return;
    sel.replaceChildren(...names.map(n => h('option', { value: n, selected: n === cur }, n)));
  }
  function quoteParams() {
    const model = $('quote-model').value;
    if (!model) return null;
    return { model, verification: $('quote-level').value,
      units: { input_tokens: Math.max(0, parseInt($('quote-in').value, 10) || 0), output_tokens: Math.max(0, parseInt($('quote-out').value, 10) || 0) } };
  }
  function renderQuotes() {
    const q = S.quotes || [];
    quiet('quotes-empty', S.quotesErr ? S.quotesErr : !$('quote-model').value ? 'No model offered yet.' : q.length ? '' : 'No provider quotes this model at this level now.');
    fill($('quotes-table').tBodies[0], q.map(l => h('tr', { data: { peer: l.provider } },
      h('td', {}, peer(l.provider)), h('td', {}, pill(l.status, 's-' + l.status)), h('td', { class: 'num' }, `${l.in_flight}/${l.capacity}`),
      h('td', { class: 'num' }, num(l.price)), h('td', { class: 'num' }, num(l.breakdown?.input_tokens)),
      h('td', { class: 'num' }, num(l.breakdown?.output_tokens)), h('td', { class: 'num' }, num(l.surcharge)))));
  }

  // ---- price feed and price per token
  function modelName(id) {
    for (const p of S.providers) for (const m of p.models || []) if (m.model_id === id) return m.name || short(id);
    return short(id);
  }
  function renderFeed() {
    const es = S.feed?.entries || [];
    $('feed-sub').textContent = S.feed ? `window ${Math.round(S.feed.window_ms / 60000)} min · attested with ≥ ${S.feed.min_observers} observers` : '';
    quiet('feed-empty', es.length ? '' : 'No price observation yet: validators publish them from their probe calls.');
    fill($('feed-table').tBodies[0], es.map(e => h('tr', { data: { peer: e.provider } },
      h('td', {}, peer(e.provider)), h('td', {}, modelName(e.model)),
      h('td', {}, e.attested ? pill('attested', 'yes', e.observers.join('\n')) : h('span', { class: 'mute', title: e.observers.join('\n') }, `${e.observers.length}`)),
      h('td', { class: 'num' }, num(e.count)), h('td', { class: 'num' }, pct(e.success_rate)),
      h('td', { class: 'num' }, e.price_per_unit_p50.toFixed(2)), h('td', { class: 'num' }, e.price_per_unit_p95.toFixed(2)),
      h('td', { class: 'num' }, ms(e.latency_p50_ms)), h('td', { class: 'num' }, ms(e.latency_p95_ms)))));
    const keys = [...S.price.keys()].sort();
    const colour = new Map(keys.map((k, i) => [k.split('|')[0], 'c' + (i % 6)]));
    const series = keys.map(k => ({ cls: colour.get(k.split('|')[0]), points: S.price.get(k) }));
    const provs = [...new Set(S.recent.map(r => r.provider).filter(Boolean))].sort();
    provs.forEach(p => { if (!colour.has(p)) colour.set(p, 'c' + (colour.size % 6)); });
    const dots = S.recent.filter(r => r.price && r.input_tokens + r.output_tokens > 0)
      .map(r => [r.time_ms, r.price / (r.input_tokens + r.output_tokens), colour.get(r.provider)]);
    Plot.lines($('plot-price'), series, { now: Date.now(), windowMs: WINDOW_MS, yfmt: v => v.toFixed(v < 10 ? 2 : 0), dots, empty: 'no price observed or billed in the last minutes' });
    $('price-legend').replaceChildren(...[...colour].map(([p, c]) => h('span', { class: c, title: p }, short(p))));
  }

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

  // ---- the refresh loop
  async function refresh() {
    S.tick++;
    const calls = [['tenzro_nodeInfo'], ['tenzro_listProviders'], ['tenzro_listPeers']];
    if (S.routes) calls.push(['tenzro_getRouterMetrics'], ['tenzro_listRecentRequests', { after: S.lastSeq }], ['tenzro_getLatencies']);
    calls.push(['tenzro_getPriceFeed']);
    const q = quoteParams();
    if (q) calls.push(['tenzro_quoteInference', q]);
    const chainTick = S.chain !== false && (S.tick % CHAIN_EVERY === 1);
    if (chainTick) calls.push(['tenzro_listValidators']);
    const acct = account();
    if (S.chain !== false && acct) {
      calls.push(['tenzro_getAccount', { account: acct }]);
      if (chainTick || !S.payments) calls.push(['tenzro_getPayments', { payer: acct }]);
    }
    const res = await batch(calls);
    const got = {};
    calls.forEach(([m], i) => { got[m] = res[i]; });
    const now = Date.now();
    S.info = got.tenzro_nodeInfo.result || S.info;
    S.providers = got.tenzro_listProviders.result || [];
    S.peers = got.tenzro_listPeers.result || S.peers;
    if (S.routes) {
      const m = got.tenzro_getRouterMetrics;
      if (m.error) {
        S.metrics = null; S.metricsErr = m.error.message;
        if (m.error.code === -32000 && /does not route/.test(m.error.message)) S.routes = false;
      } else {
        S.metrics = m.result;
        S.hedge.push({ t: now, m: S.metrics });
      }
      const r = got.tenzro_listRecentRequests.result;
      if (r && r.requests.length) {
        S.recent = r.requests.concat(S.recent).slice(0, r.kept);
        S.lastSeq = r.last;
      }
      S.lat = got.tenzro_getLatencies.result || S.lat;
    } else {
      S.metricsErr = 'This node is a provider: it routes no requests, so it keeps no router metrics.';
    }
    while (S.hedge.length && S.hedge[0].t < now - WINDOW_MS - RATE_MS) S.hedge.shift();
    S.feed = got.tenzro_getPriceFeed.result || null;
    for (const e of S.feed?.entries || []) {
      const k = e.provider + '|' + e.model;
      if (!S.price.has(k)) S.price.set(k, []);
      S.price.get(k).push([now, e.price_per_unit_p50]);
    }
    for (const [k, pts] of S.price) { while (pts.length && pts[0][0] < now - WINDOW_MS) pts.shift(); if (!pts.length) S.price.delete(k); }
    if (q) { const x = got.tenzro_quoteInference; S.quotes = x.result || []; S.quotesErr = x.error?.message || null; }
    if (chainTick) {
      const v = got.tenzro_listValidators;
      if (v.error && v.error.code === -32000 && /no chain/.test(v.error.message)) S.chain = false;
      else { S.chain = true; S.validators = v.result || S.validators; }
    }
    if (got.tenzro_getAccount) S.account = got.tenzro_getAccount.result || { error: got.tenzro_getAccount.error.message };
    if (got.tenzro_getPayments) S.payments = got.tenzro_getPayments.result || { error: got.tenzro_getPayments.error.message };
    renderNode(); renderQuoteModels(); renderProviders(); renderMetrics(); renderLatency(); renderRecent(); renderQuotes(); renderFeed(); renderChain();
  }

  function setLive(state, text) { const l = $('live'); l.dataset.state = state; l.textContent = text; }
  let timer = 0, running = false;
  async function loop() {
    clearTimeout(timer);
    if (document.hidden) { setLive('paused', 'paused while the tab is hidden'); return; }
    if (running) return;
    running = true;
    const t0 = performance.now();
    try {
      await refresh();
      setLive('live', 'live · ' + clock(Date.now()));
      document.body.dataset.refreshes = S.tick; // for whoever waits for the next picture (the browser tests)
    } catch (e) {
      setLive('error', 'node unreachable: ' + e.message);
    } finally {
      running = false;
    }
    timer = setTimeout(loop, Math.max(50, REFRESH_MS - (performance.now() - t0)));
  }
  document.addEventListener('visibilitychange', () => { if (!document.hidden) loop(); else { clearTimeout(timer); setLive('paused', 'paused while the tab is hidden'); } });

  // ---- inputs
  const params = new URLSearchParams(location.search);
  $('account').value = params.get('account') || localStorage.getItem('tenzro.account') || '';
  $('account').addEventListener('input', () => {
    const a = account();
    if (a || !$('account').value) localStorage.setItem('tenzro.account', a);
    S.account = null; S.payments = null; paymentsDrawn = ''; renderChain();
  });
  $('account-form').addEventListener('submit', e => e.preventDefault());
  for (const id of ['quote-model', 'quote-in', 'quote-out', 'quote-level']) $(id).addEventListener('change', () => { S.quotes = null; loop(); });
  $('quote-form').addEventListener('submit', e => e.preventDefault());
  $('lookup-form').addEventListener('submit', e => { e.preventDefault(); lookup($('lookup-id').value); });
  $('foot').textContent = 'JSON-RPC on this origin only (/rpc) · refreshes every second while visible · µ = micro-units';
  if (params.get('lookup')) lookup(params.get('lookup'));
  loop();
})();
