'use strict';
// The page's DOM and RPC helpers, shared by its sections. Every value a
// provider or a buyer controls is set as text, never parsed as HTML.
window.T = (() => {
  const WINDOW_MS = 5 * 60 * 1000, RATE_MS = 60 * 1000; // what the plots show; the span of a rate
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
  return { WINDOW_MS, RATE_MS, $, h, fill, short, peer, mono, num, ms, pct, ago, clock, pill, quiet, batch, call };
})();
