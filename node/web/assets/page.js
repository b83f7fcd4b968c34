'use strict';
// The node's live page: one JSON-RPC batch a second to /rpc on this origin,
// paused while the tab is hidden. The sections live in market.js and
// chain.js, the helpers in dom.js, the plots in plot.js.
(() => {
  const REFRESH_MS = 1000, CHAIN_EVERY = 3;
  const { WINDOW_MS, RATE_MS, $, clock, batch } = window.T;
  const S = {
    tick: 0, info: null, providers: [], metrics: null, metricsErr: null, recent: [], lastSeq: 0, routes: true,
    lat: null, feed: null, validators: null, chain: null, account: null, payments: null, quotes: null, quotesErr: null,
    hedge: [], price: new Map(), peers: [], // price: provider|model → [[t, p50]]
  };
  const chain = window.Chain(S, id => market.modelName(id));
  const market = window.Market(S, id => chain.lookup(id));
  const { renderNode, renderQuoteModels, renderProviders, renderMetrics, renderLatency, renderRecent, renderQuotes, renderFeed, quoteParams } = market;
  const { account, renderChain, lookup } = chain;

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
    S.account = null; S.payments = null; chain.resetPayments(); renderChain();
  });
  $('account-form').addEventListener('submit', e => e.preventDefault());
  for (const id of ['quote-model', 'quote-in', 'quote-out', 'quote-level']) $(id).addEventListener('change', () => { S.quotes = null; loop(); });
  $('quote-form').addEventListener('submit', e => e.preventDefault());
  $('lookup-form').addEventListener('submit', e => { e.preventDefault(); lookup($('lookup-id').value); });
  $('foot').textContent = 'JSON-RPC on this origin only (/rpc) · refreshes every second while visible · µ = micro-units';
  if (params.get('lookup')) lookup(params.get('lookup'));
  loop();
})();

