// core.js: page data, DOM helpers (text only, never HTML), summary and "where it fails".
const SVGNS = "http://www.w3.org/2000/svg";
window.addEventListener("error", function (e) {
  document.documentElement.dataset.jsError = String(e.message || e);
});
const D = JSON.parse(document.getElementById("pmask-data").textContent);
const PM = {};   // shared state between the parts of this script

/** An HTML element with attributes and optional text (set with textContent, never parsed). */
function el(tag, attrs, text) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v !== null && v !== undefined && v !== false) node.setAttribute(k, v === true ? "" : String(v));
  }
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

/** An SVG element with attributes and optional text. */
function sv(tag, attrs, text) {
  const node = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v !== null && v !== undefined) node.setAttribute(k, String(v));
  }
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

function add(parent, ...children) {
  for (const c of children) if (c) parent.appendChild(c);
  return parent;
}

function fmt(x, digits) {
  if (x === null || x === undefined || Number.isNaN(x)) return "–";
  return typeof x === "number" ? x.toFixed(digits === undefined ? 2 : digits) : String(x);
}

/** Significant-digit formatting for impact values. */
function sig(x) {
  if (!Number.isFinite(x)) return "n/a";
  return Math.abs(x) >= 1e4 || (x !== 0 && Math.abs(x) < 1e-3) ? x.toExponential(2) : Number(x.toPrecision(3)).toString();
}

const measureCtx = document.createElement("canvas").getContext("2d");
/** Width in px of text in a CSS font (works for hidden elements, unlike getBBox). */
function textWidth(text, font) {
  measureCtx.font = font;
  return measureCtx.measureText(text).width;
}

/** A floating tooltip shared by every chart and map. */
const tip = el("div", {id: "tooltip", role: "status"});
function showTip(evt, lines) {
  tip.replaceChildren(...lines.map(function (line) { return el("div", {}, line); }));
  tip.style.display = "block";
  const x = Math.min(evt.clientX + 14, window.innerWidth - tip.offsetWidth - 8);
  const y = Math.min(evt.clientY + 14, window.innerHeight - tip.offsetHeight - 8);
  tip.style.left = x + "px";
  tip.style.top = y + "px";
}
function hideTip() { tip.style.display = "none"; }

const METRIC_LABELS = {uas: "UAS", uuas: "UUAS", f1_sentence: "Sentence F1", f1_corpus: "Corpus F1",
  precision: "P", recall: "R", total: "Words", sentences: "Sentences"};

/** The score the report is built around (UUAS for an undirected decoder's trees) and its label. */
function headlineLabel() { return (D.summary.labels || {})[D.summary.headline] || METRIC_LABELS[D.summary.headline]; }

function renderSummary() {
  const S = D.summary;
  const box = document.getElementById("summary");
  add(box, el("h2", {}, "Summary"));
  const dl = el("dl", {class: "settings"});
  const st = S.settings || {};
  const items = [["model", st.model], ["probe", st.probe], ["layer", st.layer], ["decoder", st.decoder], ["root", st.root],
    ["metric", st.metric], ["subword", st.subword], ["context", st.context], ["tokenisation", st.tokenize],
    ["symmetrisation", st.symmetrize], ["absolute", st.absolute === undefined ? undefined : String(st.absolute)], ["punctuation", st.punct], ["sentences", S.sentences],
    ["limit", S.corpus.limit], ["max words", S.corpus.max_words], ["corpus", S.corpus.path],
    ["corpus sha256", S.corpus.sha256], ["gold", S.corpus.gold], ["gold sha256", S.corpus.gold_sha256]];
  for (const [k, v] of items) {
    if (v === null || v === undefined) continue;
    add(dl, el("dt", {}, k), el("dd", {class: k.includes("sha256") ? "hash" : null}, v));
  }
  const cols = S.columns;   // the headline first, the counts last
  const isCount = function (c) { return c === "total" || c === "sentences"; };
  const table = el("table", {class: "scores"});
  const head = add(el("tr"), el("th", {}, "Trees"), el("th", {}, "Kind"));
  for (const c of cols) add(head, el("th", {class: "num", "data-column": c}, S.labels[c] || METRIC_LABELS[c] || c));
  add(table, add(el("thead"), head));
  const rows = S.table.rows;
  const best = {};
  for (const c of cols.filter(function (c) { return !isCount(c); })) best[c] = Math.max(...rows.map(function (r) { return r[c] || 0; }));
  const body = el("tbody");
  for (const r of rows) {
    const tr = add(el("tr", {class: r.kind}), el("td", {}, r.name), el("td", {}, r.kind));
    for (const c of cols) {
      const isPct = !isCount(c);
      const td = el("td", {class: "num" + (isPct && r[c] === best[c] ? " best" : ""), "data-column": c}, isPct ? fmt(r[c]) : r[c]);
      if (isPct && c === cols[0]) {
        const bar = el("span", {class: "cellbar" + (r.kind === "model" ? " model" : "")});
        bar.style.width = Math.max(0, Math.min(100, r[c] || 0)) + "%";
        td.prepend(bar);
      }
      add(tr, td);
    }
    add(body, tr);
  }
  add(box, dl, add(table, body));
  for (const note of S.notes || []) add(box, el("p", {class: "note"}, note));
}

/** A horizontal bar chart (0-100): one row per entry (label, bar, value) and a dashed reference line.
 *  HTML in a CSS grid, not SVG, so every label gets the room it needs in whatever font the browser
 *  draws it with (a width measured by the script can be short of it) and the chart fits its card. */
function barChart(rows, opts) {
  const chart = el("div", {class: "bars", role: "group", "aria-label": opts.title});
  const at = opts.reference === undefined ? null : Math.max(0, Math.min(100, opts.reference)) + "%";
  const refLine = function () {
    const line = el("span", {class: "ref"});
    line.style.left = at;
    return line;
  };
  for (const r of rows) {
    const fill = el("span", {class: "fill" + (r.series ? " s-" + r.series : "")});
    fill.style.width = Math.max(0, Math.min(100, r.accuracy || 0)) + "%";
    const bar = add(el("div", {class: "bar", "data-label": r.label}), el("span", {class: "label"}, r.label),
      add(el("span", {class: "track"}), fill, at === null ? null : refLine()),
      el("span", {class: "value"}, fmt(r.accuracy, 1) + " (" + r.total + ")"));
    bar.addEventListener("mousemove", function (e) {
      showTip(e, [r.label, fmt(r.accuracy, 1) + " %" + (r.correct !== undefined ? "  (" + r.correct + " / " + r.total + ")" : "")]);
    });
    bar.addEventListener("mouseleave", hideTip);
    add(chart, bar);
  }
  if (at !== null) {
    const caption = el("span", {class: "refcaption"}, "all " + fmt(opts.reference, 1));
    caption.style.left = at;
    add(chart, add(el("div", {class: "bar axis"}), el("span"), add(el("span", {class: "track"}), caption), el("span")));
  }
  return chart;
}

function breakdownTable(b) {
  const cons = b.rows.length && b.rows[0].precision !== undefined;
  const table = el("table", {class: "breakdown", "data-breakdown": b.id});
  const head = add(el("tr"), el("th", {}, b.key));
  if (b.rows.some(function (r) { return r.direction; })) add(head, el("th", {}, "direction"));
  for (const h of cons ? ["P", "R", "F1", "gold spans"] : ["correct", "total", "accuracy"]) add(head, el("th", {class: "num"}, h));
  add(table, add(el("thead"), head));
  const body = el("tbody");
  for (const r of b.rows) {
    const tr = add(el("tr"), el("td", {}, r.label));
    if (r.direction) add(tr, el("td", {}, r.direction));
    const cells = cons ? [fmt(r.precision, 1), fmt(r.recall, 1), fmt(r.accuracy, 1), r.total]
      : [r.correct, r.total, fmt(r.accuracy, 1)];
    for (const c of cells) add(tr, el("td", {class: "num"}, c));
    add(body, tr);
  }
  return add(table, body);
}

function renderFailures() {
  const box = document.getElementById("failures");
  add(box, el("h2", {}, "Where it fails"));
  const main = D.summary.table.rows[0] || {};
  const overall = D.task === "dependency" ? main[D.summary.headline] : main.f1_corpus;
  const grid = el("div", {class: "grid"});
  for (const b of D.breakdowns) {
    const rows = b.rows.map(function (r) {
      return Object.assign({}, r, {label: r.direction && r.direction !== r.label ? r.label + " · " + r.direction : r.label,
        series: r.direction ? r.direction.replace(/ /g, "-") : null});
    });
    const shown = b.id === "by-relation" || b.id === "by-label" ? rows.slice(0, 20) : rows;
    const card = add(el("div", {class: "card", id: b.id}), el("h3", {}, b.title),
      barChart(shown, {title: b.title, reference: b.id === "by-label" ? undefined : overall}));
    if (shown.length < rows.length) add(card, el("p", {class: "note"}, "Chart: the 20 most frequent; the table has all " + rows.length + "."));
    add(card, add(el("details", {}), el("summary", {}, "table"), breakdownTable(b)));
    add(grid, card);
  }
  add(box, grid);
}
