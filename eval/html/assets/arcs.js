// arcs.js: the arc diagram of one sentence, predicted arcs above the words and gold arcs below.
const WORD_FONT = "15px system-ui, sans-serif";
const ARC_GAP = 20;

function wordLayout(words, font, gap) {
  const xs = [], widths = [];
  let x = 24;
  for (const w of words) {
    const width = Math.max(14, textWidth(w, font));
    widths.push(width);
    xs.push(x + width / 2);
    x += width + gap;
  }
  return {xs: xs, widths: widths, width: x + 24};
}

function arcHeight(dep, head, xs) {
  return Math.min(170, 14 + 0.42 * Math.abs(xs[dep - 1] - xs[head - 1]));
}

/** One arc path (or the ROOT stem) as an SVG element carrying data-kind/data-dep/data-head/data-directed;
 *  a directed one ends in an arrowhead at the dependent, an undirected edge has none. */
function arcElement(kind, dep, head, ok, layout, base, up, words, rel, rootH, directed) {
  const xs = layout.xs, sign = up ? -1 : 1;
  const attrs = {"data-kind": kind, "data-dep": dep, "data-head": head, "data-correct": ok ? "1" : "0",
    "data-directed": directed ? "1" : "0", class: "arc " + kind + " " + (ok ? "ok" : "wrong") + (directed ? "" : " undirected")};
  const arrow = directed ? "url(#pm-arrow-" + kind + (ok ? "-ok" : "-wrong") + ")" : null;
  let node;
  const xd = xs[dep - 1];
  if (head === 0) {
    const top = base + sign * rootH;
    node = sv("g", attrs);
    add(node, sv("line", {x1: xd, x2: xd, y1: top, y2: base, "marker-end": arrow}));
    add(node, sv("text", {x: xd, y: top + (up ? -4 : 12), "text-anchor": "middle", class: "rootlabel"}, "ROOT"));
  } else {
    const xh = xs[head - 1] + (xd > xs[head - 1] ? 3 : -3);
    const h = arcHeight(dep, head, xs) * sign;
    const path = "M" + xh.toFixed(1) + " " + base + " C" + xh.toFixed(1) + " " + (base + h).toFixed(1) + " " +
      xd.toFixed(1) + " " + (base + h).toFixed(1) + " " + xd.toFixed(1) + " " + base;
    node = sv("path", Object.assign(attrs, {d: path, "marker-end": arrow}));
  }
  const what = (kind === "pred" ? "predicted" : "gold") + (rel ? " " + rel : "") + ": " +
    (head === 0 ? "ROOT" : words[head - 1] + " (" + head + ")") + (directed ? " → " : " — ") + words[dep - 1] + " (" + dep + ")" +
    (kind === "pred" ? (ok ? " ✓" : " ✗") : (ok ? " · found" : " · missed"));
  add(node, sv("title", {}, what));
  return node;
}

/** Arrow markers, defined once for every diagram in the page. */
function arrowDefs() {
  const svg = sv("svg", {width: 0, height: 0, class: "defs", "aria-hidden": "true"});
  const defs = sv("defs");
  for (const name of ["pred-ok", "pred-wrong", "gold-ok", "gold-wrong"]) {
    const m = sv("marker", {id: "pm-arrow-" + name, viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 6,
      markerHeight: 6, orient: "auto-start-reverse", class: "marker " + name});
    add(m, sv("path", {d: "M0,0 L10,5 L0,10 z"}));
    add(defs, m);
  }
  return add(svg, defs);
}

/** "a-b" keys of the undirected edges of a tree of heads (ROOT edges "0-k"). */
function edgeKeys(heads) {
  return new Set(heads.map(function (h, i) { return Math.min(h, i + 1) + "-" + Math.max(h, i + 1); }));
}

/** The arc diagram SVG of sentence ``s`` ({words, pred, gold, rel}). An undirected decoder's trees
 *  (``D.undirected``) are drawn without arrowheads, and an edge counts as found in either direction. */
function arcDiagram(s) {
  const n = s.words.length;
  const predEdges = edgeKeys(s.pred), goldEdges = edgeKeys(s.gold);
  const layout = wordLayout(s.labels || s.words, WORD_FONT, ARC_GAP);   // labels: a document's EDUs, shortened
  let upArc = 0, downArc = 0;
  for (let k = 1; k <= n; k++) {
    if (s.pred[k - 1] !== 0) upArc = Math.max(upArc, arcHeight(k, s.pred[k - 1], layout.xs) * 0.75);
    if (s.gold[k - 1] !== 0) downArc = Math.max(downArc, arcHeight(k, s.gold[k - 1], layout.xs) * 0.75);
  }
  const rootUp = Math.max(36, upArc + 14), rootDown = Math.max(36, downArc + 20);
  const predBase = rootUp + 20, textY = predBase + 18, goldBase = textY + 20;
  const H = goldBase + rootDown + 18;
  const svg = sv("svg", {class: "arcs", width: layout.width, height: H, viewBox: "0 0 " + layout.width + " " + H,
    role: "img", "aria-label": "dependency arcs: predicted above the words, gold below"});
  const predG = sv("g", {class: "layer-pred"}), goldG = sv("g", {class: "layer-gold"}), wordsG = sv("g", {class: "words"});
  for (let k = 1; k <= n; k++) {
    const p = s.pred[k - 1], g = s.gold[k - 1];
    const predOk = D.undirected ? goldEdges.has(Math.min(p, k) + "-" + Math.max(p, k)) : p === g;
    const goldOk = D.undirected ? predEdges.has(Math.min(g, k) + "-" + Math.max(g, k)) : p === g;
    add(predG, arcElement("pred", k, p, predOk, layout, predBase, true, s.words, null, rootUp, !D.undirected));
    add(goldG, arcElement("gold", k, g, goldOk, layout, goldBase, false, s.words, s.rel[k - 1], rootDown, true));
    if (g !== 0) {
      const h = arcHeight(k, g, layout.xs) * 0.75;
      add(goldG, sv("text", {x: (layout.xs[k - 1] + layout.xs[g - 1]) / 2, y: goldBase + h + 11, "text-anchor": "middle",
        class: "rel"}, s.rel[k - 1] || ""));
    }
    const isRoot = g === 0;
    add(wordsG, sv("text", {x: layout.xs[k - 1], y: textY, "text-anchor": "middle", class: "word" + (isRoot ? " root" : ""),
      "data-word": k}, (s.labels || s.words)[k - 1]));
    add(wordsG, sv("text", {x: layout.xs[k - 1], y: textY + 13, "text-anchor": "middle", class: "index"}, k));
  }
  return add(svg, predG, goldG, wordsG);
}

function arcLegend() {
  const box = el("div", {class: "legend"});
  for (const [cls, text] of [["pred ok", "predicted, correct"], ["pred wrong", "predicted, wrong"],
    ["gold ok", "gold, found"], ["gold wrong", "gold, missed"]]) {
    add(box, add(el("span", {class: "key"}), el("span", {class: "swatch " + cls}), document.createTextNode(text)));
  }
  return box;
}
