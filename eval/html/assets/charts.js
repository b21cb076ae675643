// charts.js: the layer-and-language view from a `pmask bench` directory.
function scoreLabel(key) { return ({uas: "UAS", uuas: "UUAS", f1_sentence: "Sentence F1", f1_corpus: "Corpus F1"})[key] || key; }
const PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
  "#bcbd22", "#17becf", "#393b79", "#ad494a", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd",
  "#e6550d", "#31a354", "#756bb1"];

function uniq(list) { return Array.from(new Set(list)); }

function benchChart(B, decoder, root, baseline) {
  const rows = B.rows.filter(function (r) { return r.decoder === decoder && (r.root || null) === root; });
  const treebanks = uniq(B.rows.map(function (r) { return r.treebank; }));
  const layers = uniq(rows.map(function (r) { return r.layer; })).sort(function (a, b) { return a - b; });
  const base = B.baselines.filter(function (b) { return b.baseline === baseline && (b.root || null) === root; });
  const values = rows.map(function (r) { return r.score; }).concat(base.map(function (b) { return b.score; }));
  const lo = Math.max(0, Math.floor(Math.min(...values) / 5) * 5), hi = Math.min(100, Math.ceil(Math.max(...values) / 5) * 5 || 5);
  const W = 720, H = 340, L = 48, R = 12, T = 12, Bm = 36;
  const x = function (layer) {
    return layers.length < 2 ? L + (W - L - R) / 2 : L + (W - L - R) * layers.indexOf(layer) / (layers.length - 1);
  };
  const y = function (v) { return T + (H - T - Bm) * (1 - (v - lo) / Math.max(1e-9, hi - lo)); };
  const svg = sv("svg", {class: "linechart", width: W, height: H, viewBox: "0 0 " + W + " " + H, role: "img",
    "aria-label": "Score against layer per treebank"});
  for (let v = lo; v <= hi; v += 5) {
    add(svg, sv("line", {x1: L, x2: W - R, y1: y(v), y2: y(v), class: "grid"}),
      sv("text", {x: L - 6, y: y(v) + 4, "text-anchor": "end", class: "axis"}, v));
  }
  for (const layer of layers) add(svg, sv("text", {x: x(layer), y: H - Bm + 16, "text-anchor": "middle", class: "axis"}, layer));
  add(svg, sv("text", {x: (W + L) / 2, y: H - 4, "text-anchor": "middle", class: "axis"}, "layer"));
  treebanks.forEach(function (tb, i) {
    const colour = PALETTE[i % PALETTE.length];
    const g = sv("g", {class: "series", "data-treebank": tb});
    g.style.color = colour;
    const pts = rows.filter(function (r) { return r.treebank === tb; }).sort(function (a, b) { return a.layer - b.layer; });
    if (pts.length > 1) {
      add(g, sv("polyline", {points: pts.map(function (r) { return x(r.layer) + "," + y(r.score); }).join(" "), class: "line"}));
    }
    for (const b of base.filter(function (b) { return b.treebank === tb; })) {
      add(g, sv("line", {x1: L, x2: W - R, y1: y(b.score), y2: y(b.score), class: "baseline"}));
    }
    for (const r of pts) {
      const c = sv("circle", {cx: x(r.layer), cy: y(r.score), r: 4, class: "point", "data-layer": r.layer, "data-score": r.score});
      c.addEventListener("mousemove", function (e) {
        showTip(e, [r.treebank + (r.language ? " (" + r.language + ")" : ""), "layer " + r.layer + " · " + decoder,
          scoreLabel(r.score_key) + " " + fmt(r.score),
          (r.sentences || "?") + " sentences, " + (r.words || "?") + " words"]);
        svg.classList.add("focus");
        g.classList.add("hot");
      });
      c.addEventListener("mouseleave", function () { hideTip(); svg.classList.remove("focus"); g.classList.remove("hot"); });
      add(g, c);
    }
    add(svg, g);
  });
  return svg;
}

/** The chart's legend: one entry per treebank in its line colour (hover one to single it out), then
 *  the dashed baseline. */
function benchLegend(B, svg, baseline) {
  const treebanks = uniq(B.rows.map(function (r) { return r.treebank; }));
  const languages = {};
  for (const r of B.rows) if (r.language) languages[r.treebank] = r.language;
  const legend = el("ul", {class: "legend", "aria-label": "legend"});
  treebanks.forEach(function (tb, i) {
    const item = el("li", {"data-treebank": tb});
    item.style.color = PALETTE[i % PALETTE.length];
    add(item, el("span", {class: "swatch"}), el("span", {class: "name"}, tb + (languages[tb] ? " (" + languages[tb] + ")" : "")));
    const series = Array.from(svg.querySelectorAll("g.series")).find(function (g) { return g.dataset.treebank === tb; });
    item.addEventListener("mouseenter", function () { svg.classList.add("focus"); if (series) series.classList.add("hot"); });
    item.addEventListener("mouseleave", function () { svg.classList.remove("focus"); if (series) series.classList.remove("hot"); });
    add(legend, item);
  });
  if (baseline) add(legend, add(el("li", {class: "baseline-key"}), el("span", {class: "swatch dashed"}),
    el("span", {class: "name"}, baseline + " (dashed, each treebank's colour)")));
  return legend;
}

function benchTable(B, decoder, root, baseline) {
  const rows = B.rows.filter(function (r) { return r.decoder === decoder && (r.root || null) === root; });
  const layers = uniq(rows.map(function (r) { return r.layer; })).sort(function (a, b) { return a - b; });
  const table = el("table", {class: "benchtable"});
  const head = add(el("tr"), el("th", {}, "treebank"));
  for (const l of layers) add(head, el("th", {class: "num"}, l));
  add(head, el("th", {class: "num"}, baseline), el("th", {class: "num"}, "best − " + baseline));
  add(table, add(el("thead"), head));
  const body = el("tbody");
  for (const tb of uniq(B.rows.map(function (r) { return r.treebank; }))) {
    const mine = rows.filter(function (r) { return r.treebank === tb; });
    if (!mine.length) continue;
    const best = Math.max(...mine.map(function (r) { return r.score; }));
    const tr = add(el("tr"), el("td", {}, tb + (mine[0].language ? " (" + mine[0].language + ")" : "")));
    for (const l of layers) {
      const r = mine.find(function (m) { return m.layer === l; });
      const td = el("td", {class: "num heat" + (r && r.score === best ? " best" : ""), title: r ? tb + ", layer " + l + ": " + fmt(r.score) : ""}, r ? fmt(r.score, 1) : "");
      if (r) td.style.backgroundColor = "hsl(210, 70%, " + (97 - 45 * (r.score / 100)) + "%)";
      add(tr, td);
    }
    const b = B.baselines.find(function (x) { return x.treebank === tb && x.baseline === baseline && (x.root || null) === root; });
    add(tr, el("td", {class: "num"}, b ? fmt(b.score, 1) : "–"), el("td", {class: "num"}, b ? fmt(best - b.score, 1) : "–"));
    add(body, tr);
  }
  return add(table, body);
}

function select(label, values, current, onChange) {
  const s = el("select", {"aria-label": label});
  for (const v of values) add(s, el("option", {value: v === null ? "" : v, selected: v === current}, v === null ? "(none)" : v));
  s.addEventListener("change", function () { onChange(s.value === "" ? null : s.value); });
  return add(el("label", {}, label + " "), s);
}

function renderBench() {
  const B = D.bench;
  if (!B) return;
  const box = document.getElementById("bench");
  box.hidden = false;
  add(box, el("h2", {}, "Layers and languages"));
  add(box, el("p", {class: "note"}, "From " + B.path + (B.model ? " · model " + B.model : "") +
    ". Hover a point for its treebank, layer and score, or a legend entry to single out its treebank; dashed lines are the chosen baseline."));
  const decoders = uniq(B.rows.map(function (r) { return r.decoder; }));
  const roots = uniq(B.rows.map(function (r) { return r.root || null; }));
  const baselines = uniq(B.baselines.map(function (b) { return b.baseline; }));
  const probeOf = function (r) { return (r.probe || "pair") + (r.head !== undefined && r.head !== null ? " (head " + r.head + ")" : ""); };
  const probes = uniq(B.rows.map(probeOf));
  const state = {decoder: decoders[0], root: roots[0], probe: probes[0],
    baseline: baselines.includes("right-chain") ? "right-chain" : (baselines[0] || null)};
  const view = el("div", {class: "benchview"});
  const draw = function () {
    const shown = {rows: B.rows.filter(function (r) { return probeOf(r) === state.probe; }), baselines: B.baselines};
    const chart = benchChart(shown, state.decoder, state.root, state.baseline);
    view.replaceChildren(chart, benchLegend(shown, chart, state.baseline), benchTable(shown, state.decoder, state.root, state.baseline));
  };
  const controls = add(el("div", {class: "controls"}),
    probes.length > 1 ? select("probe", probes, state.probe, function (v) { state.probe = v; draw(); }) : null,
    select("decoder", decoders, state.decoder, function (v) { state.decoder = v; draw(); }),
    roots.length > 1 ? select("root", roots, state.root, function (v) { state.root = v; draw(); }) : null,
    select("baseline", [null].concat(baselines), state.baseline, function (v) { state.baseline = v; draw(); }));
  add(box, controls, view);
  draw();
}
