'use strict';
// The market's sections: node, providers, router metrics with the hedge
// win rate, latency per provider, recent requests, quotes, price feed.
// S is the page's state; lookup verifies a receipt (chain.js).
window.Market = (S, lookup) => {
  const { WINDOW_MS, RATE_MS, $, h, fill, short, peer, mono, num, ms, pct, ago, clock, pill, quiet } = window.T;

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
        h('td', { data: { tee: p.attested ? p.attested.kind : '' } }, p.attested ? (p.attested.kind === 'test'
          ? h('span', { class: 'warn', title: `TEST-ONLY devnet attestation: proves nothing about confidentiality\nmeasurement ${p.attested.measurement}` }, `TEST-ONLY ${short(p.attested.measurement)}`)
          : h('span', { class: 'yes', title: `${p.attested.signer} · ${p.attested.product_line}\nmeasurement ${p.attested.measurement}` }, `${p.attested.kind} ${short(p.attested.measurement)}`)) : '—'),
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

  return { renderNode, renderQuoteModels, renderProviders, renderMetrics, renderLatency, renderRecent, renderQuotes, renderFeed, quoteParams, modelName };
};
