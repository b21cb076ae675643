// trees.js: constituency trees, predicted and gold, leaves in a row and spans coloured by match.
function treeSpans(tree, n) {
  // "i-j" keys of spans of >= 2 words except the whole sentence (the sentence-level F1 convention)
  const out = new Set();
  (function walk(node) {
    if (typeof node === "number") return [node, node + 1];
    let lo = Infinity, hi = -Infinity;
    for (const c of node.c) { const [a, b] = walk(c); lo = Math.min(lo, a); hi = Math.max(hi, b); }
    if (hi - lo >= 2 && !(lo === 0 && hi === n)) out.add(lo + "-" + hi);
    return [lo, hi];
  })(tree);
  return out;
}

/** SVG of ``tree`` ({l, c} nodes, leaves = word indices); spans in ``other`` count as found. */
function treeDiagram(tree, words, kind, other) {
  const layout = wordLayout(words, WORD_FONT, 16);
  const nodes = [];
  function walk(node) {
    if (typeof node === "number") return {x: layout.xs[node], height: 0, lo: node, hi: node + 1};
    const kids = node.c.map(walk);
    const info = {x: kids.reduce(function (s, k) { return s + k.x; }, 0) / kids.length,
      height: 1 + Math.max(...kids.map(function (k) { return k.height; })),
      lo: Math.min(...kids.map(function (k) { return k.lo; })), hi: Math.max(...kids.map(function (k) { return k.hi; })),
      label: node.l, kids: kids};
    nodes.push(info);
    return info;
  }
  const root = walk(tree);
  const levelH = 30, top = 16, leafY = top + root.height * levelH + 10;
  const y = function (info) { return info.height === 0 ? leafY - 14 : leafY - 14 - info.height * levelH; };
  const svg = sv("svg", {class: "tree " + kind, width: layout.width, height: leafY + 10,
    viewBox: "0 0 " + layout.width + " " + (leafY + 10), role: "img", "aria-label": kind + " tree"});
  const n = words.length;
  for (const info of nodes) {
    const key = info.lo + "-" + info.hi;
    const scored = info.hi - info.lo >= 2 && !(info.lo === 0 && info.hi === n);
    const state = !scored ? "neutral" : (other.has(key) ? "ok" : "wrong");
    const g = sv("g", {class: "node " + state, "data-kind": kind, "data-start": info.lo, "data-end": info.hi});
    for (const k of info.kids) add(g, sv("line", {x1: info.x, y1: y(info) + 4, x2: k.x, y2: y(k) - (k.height ? 10 : 12)}));
    add(g, sv("text", {x: info.x, y: y(info), "text-anchor": "middle", class: "label"}, info.label));
    add(g, sv("title", {}, info.label + " [" + info.lo + ", " + info.hi + ") " + words.slice(info.lo, info.hi).join(" ") +
      (state === "ok" ? " · also in the other tree" : state === "wrong" ? " · not in the other tree" : "")));
    add(svg, g);
  }
  words.forEach(function (w, i) {
    add(svg, sv("text", {x: layout.xs[i], y: leafY, "text-anchor": "middle", class: "word"}, w));
  });
  return svg;
}

function treePair(s) {
  const n = s.words.length;
  const predSpans = treeSpans(s.predTree, n), goldSpans = treeSpans(s.goldTree, n);
  return add(el("div", {class: "trees"}),
    el("h4", {}, "Predicted"), add(el("div", {class: "scroll"}), treeDiagram(s.predTree, s.words, "pred", goldSpans)),
    el("h4", {}, "Gold"), add(el("div", {class: "scroll"}), treeDiagram(s.goldTree, s.words, "gold", predSpans)));
}
