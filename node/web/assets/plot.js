'use strict';
// Inline SVG plots drawn from data the page already fetched: no library.
// Each draw sizes the viewBox to the element's pixels, so text stays crisp.
window.Plot = (() => {
  const NS = 'http://www.w3.org/2000/svg';

  function el(tag, attrs, parent, text) {
    const e = document.createElementNS(NS, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }

  function frame(svg) {
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    const w = Math.max(svg.clientWidth || 300, 120), h = Math.max(svg.clientHeight || 110, 60);
    svg.setAttribute('viewBox', `0 0 ${w} ${h}`);
    return { w, h };
  }

  function note(svg, msg) {
    const { w, h } = frame(svg);
    el('text', { x: w / 2, y: h / 2, 'text-anchor': 'middle' }, svg, msg);
  }

  const fmtMs = v => v >= 1000 ? (v / 1000).toFixed(v >= 10000 ? 0 : 1) + ' s' : (v >= 10 ? v.toFixed(0) : v.toFixed(1)) + ' ms';

  // histogram draws samples (ms) in bins over a log axis when they span
  // more than a decade, with the p95 and the hedge delay as vertical marks.
  function histogram(svg, samples, censored, p95, hedge) {
    if (!samples.length) { note(svg, 'no samples yet'); return; }
    const { w, h } = frame(svg);
    const pad = { l: 6, r: 6, t: 14, b: 16 };
    const cens = new Set(censored || []);
    let lo = Math.min(...samples, p95 || Infinity, hedge || Infinity), hi = Math.max(...samples, p95 || 0, hedge || 0);
    lo = Math.max(lo * 0.9, 0.01); hi = Math.max(hi * 1.1, lo * 1.5);
    const log = hi / lo > 10;
    const f = log ? Math.log : (x => x);
    const x = v => pad.l + (f(v) - f(lo)) / (f(hi) - f(lo)) * (w - pad.l - pad.r);
    const nb = Math.max(8, Math.min(40, Math.floor((w - pad.l - pad.r) / 9)));
    const bins = Array.from({ length: nb }, () => [0, 0]);
    for (let i = 0; i < samples.length; i++) {
      const b = Math.min(nb - 1, Math.max(0, Math.floor((f(samples[i]) - f(lo)) / (f(hi) - f(lo)) * nb)));
      bins[b][cens.has(i) ? 1 : 0]++;
    }
    const top = Math.max(...bins.map(b => b[0] + b[1]));
    const bw = (w - pad.l - pad.r) / nb, ph = h - pad.t - pad.b;
    bins.forEach(([n, c], i) => {
      const bx = pad.l + i * bw + 0.5;
      const hn = n / top * ph, hc = c / top * ph;
      if (n) el('rect', { class: 'bar', x: bx, y: h - pad.b - hn, width: Math.max(bw - 1, 1), height: hn }, svg);
      if (c) el('rect', { class: 'bar cens', x: bx, y: h - pad.b - hn - hc, width: Math.max(bw - 1, 1), height: hc }, svg);
    });
    el('line', { class: 'axis', x1: pad.l, x2: w - pad.r, y1: h - pad.b, y2: h - pad.b }, svg);
    el('text', { x: pad.l, y: h - 4 }, svg, fmtMs(lo));
    el('text', { x: w - pad.r, y: h - 4, 'text-anchor': 'end' }, svg, fmtMs(hi) + (log ? ' (log)' : ''));
    // A mark's label sits beside it, on the side with room; two marks that
    // (nearly) coincide share one label.
    const mark = (v, cls, label, right) => {
      const xv = x(v), width = label.length * 5.6;
      if (!right && xv + 3 + width > w - pad.r) right = true;
      if (right && xv - 3 - width < pad.l) right = false;
      el('line', { class: cls, x1: xv, x2: xv, y1: pad.t - 2, y2: h - pad.b }, svg);
      el('text', { class: cls + 'l', x: xv + (right ? -3 : 3), y: 10, 'text-anchor': right ? 'end' : 'start' }, svg, label);
    };
    const hasP = p95 > 0, hasH = hedge > 0;
    if (hasP && hasH && Math.abs(x(p95) - x(hedge)) < 3) {
      mark(p95, 'p95', 'p95 = hedge ' + fmtMs(p95), false);
    } else {
      // Labels go to opposite sides of their marks so they do not collide.
      const hedgeLeft = hasP && hasH && hedge < p95;
      if (hasP) mark(p95, 'p95', 'p95 ' + fmtMs(p95), !hedgeLeft);
      if (hasH) mark(hedge, 'hedge', 'hedge ' + fmtMs(hedge), hedgeLeft);
    }
  }

  // lines plots series [{cls, label, points: [[tMs, value|null]]}] over the
  // window ending now; null breaks a line. dots are [[tMs, value]].
  function lines(svg, series, opt) {
    const { w, h } = frame(svg);
    const pad = { l: 40, r: 8, t: 8, b: 16 };
    const now = opt.now, t0 = now - opt.windowMs;
    const vals = [];
    for (const s of series) for (const [t, v] of s.points) if (v !== null && t >= t0) vals.push(v);
    for (const [t, v] of (opt.dots || [])) if (t >= t0) vals.push(v);
    if (!vals.length) { note(svg, opt.empty || 'no data yet'); return; }
    let ymin = opt.ymin ?? Math.min(...vals), ymax = opt.ymax ?? Math.max(...vals);
    if (opt.ymin === undefined) ymin = Math.min(ymin, 0);
    if (ymax <= ymin) ymax = ymin + 1;
    const x = t => pad.l + (t - t0) / opt.windowMs * (w - pad.l - pad.r);
    const y = v => h - pad.b - (v - ymin) / (ymax - ymin) * (h - pad.t - pad.b);
    for (const g of [0, 0.5, 1]) {
      const v = ymin + g * (ymax - ymin);
      el('line', { class: 'axis', x1: pad.l, x2: w - pad.r, y1: y(v), y2: y(v), 'stroke-opacity': g ? 0.4 : 1 }, svg);
      el('text', { x: pad.l - 4, y: y(v) + 3, 'text-anchor': 'end' }, svg, opt.yfmt(v));
    }
    el('text', { x: pad.l, y: h - 3 }, svg, '−' + Math.round(opt.windowMs / 60000) + ' min');
    el('text', { x: w - pad.r, y: h - 3, 'text-anchor': 'end' }, svg, 'now');
    for (const s of series) {
      let d = '', pen = false;
      for (const [t, v] of s.points) {
        if (t < t0 || v === null) { pen = false; continue; }
        d += (pen ? 'L' : 'M') + x(t).toFixed(1) + ' ' + y(v).toFixed(1);
        pen = true;
      }
      if (d) el('path', { class: 'line ' + s.cls, d }, svg);
    }
    for (const [t, v, cls] of (opt.dots || [])) {
      if (t >= t0) el('circle', { class: 'dot ' + (cls || 'c0'), cx: x(t), cy: y(v), r: 2.5 }, svg);
    }
  }

  return { histogram, lines, note, fmtMs };
})();
