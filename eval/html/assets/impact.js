// impact.js: the impact map of one sentence from the quantised matrices in the page data.
// Codes are uint8: value = lo + code * step per (sentence, layer); 255 = no value (NaN).
const VIRIDIS = [[68, 1, 84], [72, 40, 120], [62, 74, 137], [49, 104, 142], [38, 130, 142], [31, 158, 137],
  [53, 183, 121], [109, 205, 89], [180, 222, 44], [253, 231, 37]];
const LUT = (function () {
  const out = [];
  for (let i = 0; i < 255; i++) {
    const t = i / 254 * (VIRIDIS.length - 1), a = Math.floor(t), f = t - a, b = Math.min(a + 1, VIRIDIS.length - 1);
    out.push(VIRIDIS[a].map(function (c, j) { return Math.round(c + f * (VIRIDIS[b][j] - c)); }));
  }
  out.push([200, 200, 200]);
  return out;
})();
const decoded = new Map();

/** Uint8Array [L*n*n] of sentence k's codes (decoded from base64 once). */
function impactCodes(k) {
  if (!decoded.has(k)) {
    const raw = atob(D.impacts.items[String(k)].data);
    const codes = new Uint8Array(raw.length);
    for (let i = 0; i < raw.length; i++) codes[i] = raw.charCodeAt(i);
    decoded.set(k, codes);
  }
  return decoded.get(k);
}

function impactValue(item, layerPos, code) {
  return code === 255 ? NaN : item.lo[layerPos] + code * item.step[layerPos];
}

function drawImpact(canvas, k, s, layerPos, geo) {
  const item = D.impacts.items[String(k)], n = s.words.length, codes = impactCodes(k);
  const dpr = window.devicePixelRatio || 1, c = geo.cell;
  canvas.width = Math.ceil(geo.W * dpr);
  canvas.height = Math.ceil(geo.H * dpr);
  canvas.style.width = geo.W + "px";
  canvas.style.height = geo.H + "px";
  const ctx = canvas.getContext("2d");
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.fillStyle = "#fff";
  ctx.fillRect(0, 0, geo.W, geo.H);
  const off = layerPos * n * n;
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      const rgb = LUT[codes[off + i * n + j]];
      ctx.fillStyle = "rgb(" + rgb[0] + "," + rgb[1] + "," + rgb[2] + ")";
      ctx.fillRect(geo.left + j * c, geo.top + i * c, c, c);
    }
  }
  ctx.font = geo.font;
  ctx.fillStyle = "#222";
  ctx.textBaseline = "middle";
  ctx.textAlign = "right";
  const clip = function (w) { return w.length > 14 ? w.slice(0, 13) + "…" : w; };
  if (D.impacts.chart === "span") { drawSpanMarks(ctx, s, geo, clip); return; }
  for (let i = 0; i < n; i++) ctx.fillText(clip((s.labels || s.words)[i]), geo.left - 4, geo.top + (i + 0.5) * c);
  drawColumnLabels(ctx, s, geo, clip);
  // arcs: gold = white ring, predicted = dot (blue if correct, red if wrong), at (row dep, column head)
  for (let d = 1; d <= n; d++) {
    const g = s.gold[d - 1], p = s.pred[d - 1];
    if (g > 0) {
      ctx.strokeStyle = "#fff";
      ctx.lineWidth = Math.max(1.5, c / 9);
      ctx.beginPath();
      ctx.arc(geo.left + (g - 0.5) * c, geo.top + (d - 0.5) * c, c * 0.36, 0, 2 * Math.PI);
      ctx.stroke();
    }
    if (p > 0) {
      ctx.fillStyle = p === g ? "#2166ac" : "#d6301d";
      ctx.fillRect(geo.left + (p - 0.5) * c - c * 0.16, geo.top + (d - 0.5) * c - c * 0.16, c * 0.32, c * 0.32);
    }
  }
}

/** The words above the columns, rotated. */
function drawColumnLabels(ctx, s, geo, clip) {
  const c = geo.cell;
  for (let j = 0; j < s.words.length; j++) {
    ctx.save();
    ctx.translate(geo.left + (j + 0.5) * c, geo.top - 4);
    ctx.rotate(-Math.PI / 2);
    ctx.textAlign = "left";
    ctx.fillText(clip((s.labels || s.words)[j]), 0, 0);
    ctx.restore();
  }
}

/** The [lo, hi) spans of >= 2 words of a tree_json tree. */
function treeSpans(tree) {
  const out = new Set();
  const walk = function (node, lo) {
    if (typeof node === "number") return lo + 1;
    let hi = lo;
    for (const child of node.c) hi = walk(child, hi);
    if (hi - lo >= 2) out.add(lo + "," + hi);
    return hi;
  };
  if (tree !== undefined && tree !== null) walk(tree, 0);
  return out;
}

/** A span chart (row r = spans of n - r words, column = first word): labels, gold rings, predicted squares. */
function drawSpanMarks(ctx, s, geo, clip) {
  const n = s.words.length, c = geo.cell;
  for (let r = 0; r < n; r++) ctx.fillText("length " + (n - r), geo.left - 4, geo.top + (r + 0.5) * c);
  drawColumnLabels(ctx, s, geo, clip);
  const gold = treeSpans(s.goldTree), pred = treeSpans(s.predTree);
  for (let r = 0; r < n; r++) {
    for (let j = 0; j + n - r <= n; j++) {
      const key = j + "," + (j + n - r), x = geo.left + (j + 0.5) * c, y = geo.top + (r + 0.5) * c;
      if (gold.has(key)) {
        ctx.strokeStyle = "#fff";
        ctx.lineWidth = Math.max(1.5, c / 9);
        ctx.beginPath();
        ctx.arc(x, y, c * 0.36, 0, 2 * Math.PI);
        ctx.stroke();
      }
      if (pred.has(key)) {
        ctx.fillStyle = gold.has(key) ? "#2166ac" : "#d6301d";
        ctx.fillRect(x - c * 0.16, y - c * 0.16, c * 0.32, c * 0.32);
      }
    }
  }
}

function impactGeometry(s) {
  const n = s.words.length, cell = Math.max(7, Math.min(26, Math.floor(560 / n)));
  const font = Math.max(9, Math.min(12, cell - 2)) + "px system-ui, sans-serif";
  const label = Math.min(110, 8 + Math.max(...(s.labels || s.words).map(function (w) { return textWidth(w.length > 14 ? w.slice(0, 13) + "…" : w, font); })));
  // a span chart's rows are labelled "length k", which may be wider than any word
  const left = D.impacts.chart === "span" ? Math.max(label, 8 + textWidth("length " + n, font)) : label;
  return {cell: cell, font: font, left: left, top: label, W: left + n * cell + 8, H: label + n * cell + 8};
}

/** The impact panel of sentence k: layer chooser, canvas with hover values, legend. */
function impactPanel(k, s) {
  const I = D.impacts;
  if (!I || !I.items[String(k)]) return el("p", {class: "note"}, I ? "No impacts stored for this sentence." : "");
  const panel = el("div", {class: "impact", "data-sentence-id": s.id});
  const canvas = el("canvas", {class: "impactmap", "aria-label": "impact map of sentence " + s.id});
  const geo = impactGeometry(s);
  const chooser = el("select", {class: "layer-select", "aria-label": "layer"});
  for (const layer of I.layers) add(chooser, el("option", {value: layer, selected: layer === PM.layer}, "layer " + layer));
  const info = el("span", {class: "note"});
  const draw = function () {
    chooser.value = String(PM.layer);
    const pos = I.layers.indexOf(PM.layer);
    drawImpact(canvas, k, s, pos, geo);
    const item = I.items[String(k)];
    info.textContent = "range " + sig(item.lo[pos]) + " … " + sig(item.lo[pos] + 254 * item.step[pos]) +
      " (" + (I.label || I.metric || "impact") + "; stored to ±" + sig(item.step[pos] / 2) + ")";
  };
  chooser.addEventListener("change", function () { PM.layer = Number(chooser.value); draw(); });
  canvas.addEventListener("mousemove", function (e) {
    const r = canvas.getBoundingClientRect();
    const j = Math.floor((e.clientX - r.left - geo.left) / geo.cell), i = Math.floor((e.clientY - r.top - geo.top) / geo.cell);
    const n = s.words.length;
    if (i < 0 || j < 0 || i >= n || j >= n) { hideTip(); return; }
    const pos = I.layers.indexOf(PM.layer), item = I.items[String(k)];
    const v = impactValue(item, pos, impactCodes(k)[pos * n * n + i * n + j]);
    if (I.chart === "span") {
      if (Number.isNaN(v)) { hideTip(); return; }
      showTip(e, ["span " + s.words.slice(j, j + n - i).join(" ") + " [" + j + ", " + (j + n - i) + ")",
        "layer " + PM.layer + ": " + sig(v) + " (normalised per length; low = constituent)"]);
      return;
    }
    const marks = [];
    if (s.gold[i] === j + 1) marks.push("gold arc");
    if (s.pred[i] === j + 1) marks.push("predicted arc");
    showTip(e, ["impact of " + s.words[j] + " (" + (j + 1) + ") on " + s.words[i] + " (" + (i + 1) + ")",
      "layer " + PM.layer + ": " + sig(v) + (marks.length ? " · " + marks.join(", ") : "")]);
  });
  canvas.addEventListener("mouseleave", hideTip);
  panel.draw = draw;
  add(panel, add(el("div", {class: "controls"}), add(el("label", {}, "Impact map, "), chooser), info), canvas,
    el("p", {class: "note"}, I.chart === "span"
      ? "Span chart: row = span length, column = its first word; scores normalised per length as CKY reads them (low = constituent). White rings: gold spans; squares: predicted spans (blue correct, red wrong)."
      : "Row: the word whose representation changes; column: the masked word. White rings: gold heads; squares: predicted heads (blue correct, red wrong)."));
  return panel;
}
