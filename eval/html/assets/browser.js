// browser.js: the sentence list (sortable, searchable), the selected sentence's view, keyboard, start-up.
PM.views = new Map();      // sentence index -> its view element (all at load in eager mode, else on demand)
PM.current = -1;

function sentenceView(k) {
  const s = D.sentences[k];
  const view = el("article", {class: "sentence-view", "data-sentence-id": s.id, "data-index": k, hidden: true});
  const scoreName = D.task === "dependency" ? headlineLabel() : "F1";
  add(view, add(el("header"), el("h3", {}, s.id),
    el("span", {class: "score"}, scoreName + " " + fmt(s.score, 1) + (D.task === "dependency" ? "  (" + s.correct + " / " + s.scored + ")" : "")),
    el("p", {class: "text"}, s.words.join(" "))));
  if (D.task === "dependency") {
    add(view, arcLegend(), add(el("div", {class: "scroll"}), arcDiagram(s)));
  } else {
    add(view, treePair(s));
  }
  if (D.impacts) add(view, impactPanel(k, s));
  return view;
}

function viewOf(k) {
  if (!PM.views.has(k)) {
    if (!D.eager) {   // on demand: keep only the shown view in the page
      for (const [j, v] of PM.views) { v.remove(); PM.views.delete(j); }
    }
    const v = sentenceView(k);
    PM.views.set(k, v);
    PM.detail.appendChild(v);
  }
  return PM.views.get(k);
}

function selectSentence(k, scroll) {
  if (k < 0 || k >= D.sentences.length) return;
  if (PM.current >= 0 && PM.views.has(PM.current)) PM.views.get(PM.current).hidden = true;
  const old = PM.rows[PM.current];
  if (old) { old.classList.remove("selected"); old.setAttribute("aria-selected", "false"); }
  PM.current = k;
  const view = viewOf(k);
  view.hidden = false;
  const panel = view.querySelector(".impact");
  if (panel && panel.draw) panel.draw();
  const row = PM.rows[k];
  row.classList.add("selected");
  row.setAttribute("aria-selected", "true");
  if (scroll) row.scrollIntoView({block: "nearest"});
  document.documentElement.dataset.selected = D.sentences[k].id;
  if (history.replaceState) {
    try { history.replaceState(null, "", "#s=" + encodeURIComponent(D.sentences[k].id)); } catch (e) { /* file: URLs in some browsers */ }
  }
}

function visibleOrder() {
  return Array.from(PM.tbody.children).filter(function (r) { return !r.hidden; }).map(function (r) { return Number(r.dataset.index); });
}

function step(delta) {
  const order = visibleOrder();
  if (!order.length) return;
  const at = order.indexOf(PM.current);
  const next = at < 0 ? order[0] : order[Math.max(0, Math.min(order.length - 1, at + delta))];
  selectSentence(next, true);
}

function sortRows(key, button) {
  const dir = PM.sort.key === key && PM.sort.dir === 1 ? -1 : 1;
  PM.sort = {key: key, dir: dir};
  const value = function (k) {
    const s = D.sentences[k];
    return key === "index" ? k : key === "score" ? s.score : s.words.length;
  };
  const rows = Array.from(PM.tbody.children);
  rows.sort(function (a, b) { return dir * (value(Number(a.dataset.index)) - value(Number(b.dataset.index))); });
  PM.tbody.replaceChildren(...rows);
  for (const th of PM.headers) th.setAttribute("aria-sort", th === button.parentNode ? (dir === 1 ? "ascending" : "descending") : "none");
}

function filterRows(query) {
  const q = query.trim().toLowerCase();
  let shown = 0;
  for (const row of PM.tbody.children) {
    const s = D.sentences[Number(row.dataset.index)];
    const hit = !q || s.id.toLowerCase().includes(q) || s.words.join(" ").toLowerCase().includes(q);
    row.hidden = !hit;
    shown += hit;
  }
  PM.count.textContent = shown + " of " + D.sentences.length + " sentences";
}

function sentenceList() {
  const box = el("div", {class: "list"});
  const search = el("input", {type: "search", placeholder: "search id or words", "aria-label": "search sentences"});
  search.addEventListener("input", function () { filterRows(search.value); });
  PM.count = el("span", {class: "note"});
  const table = el("table", {class: "sentlist", role: "grid"});
  const head = el("tr");
  PM.headers = [];
  for (const [key, label] of [["index", "#  id"], ["length", "words"], ["score", D.task === "dependency" ? headlineLabel() : "F1"]]) {
    const button = el("button", {type: "button", class: "sort"}, label);
    button.addEventListener("click", function () { sortRows(key, button); });
    const th = add(el("th", {"aria-sort": "none"}), button);
    PM.headers.push(th);
    add(head, th);
  }
  add(head, el("th", {}, "sentence"));
  PM.tbody = el("tbody");
  PM.rows = D.sentences.map(function (s, k) {
    const tr = el("tr", {class: "srow", "data-sentence-id": s.id, "data-index": k, tabindex: -1, "aria-selected": "false"});
    const bar = el("span", {class: "cellbar"});
    bar.style.width = Math.max(0, Math.min(100, s.score)) + "%";
    add(tr, el("td", {}, (k + 1) + "  " + s.id), el("td", {class: "num"}, s.words.length),
      add(el("td", {class: "num"}, fmt(s.score, 1)), bar), el("td", {class: "preview"}, s.words.join(" ")));
    tr.addEventListener("click", function () { selectSentence(k, false); tr.focus(); });
    return tr;
  });
  PM.tbody.replaceChildren(...PM.rows);
  PM.sort = {key: "index", dir: 1};
  return add(box, add(el("div", {class: "controls"}), search, PM.count),
    add(el("div", {class: "listscroll"}), add(table, add(el("thead"), head), PM.tbody)));
}

function renderSentences() {
  const box = document.getElementById("sentences");
  add(box, el("h2", {}, "Sentences"));
  add(box, el("p", {class: "note"}, "Click a sentence or move with the arrow keys (↑ ↓). " + (D.task === "dependency"
    ? "Predicted arcs are drawn above the words, gold arcs below; arrows point at the dependent." +
      (D.undirected ? " The predicted trees are undirected (their decoder chooses edges, not heads): no arrowheads, " +
        "and an edge is correct when the gold tree has it in either direction." : "")
    : "Nodes whose span is in the other tree are blue, the others red.")));
  const toggle = el("div", {class: "controls arcs-toggle"});
  if (D.task === "dependency") {
    for (const [mode, label] of [["both", "both"], ["pred", "predicted only"], ["gold", "gold only"]]) {
      const b = el("button", {type: "button", "data-mode": mode, "aria-pressed": mode === "both" ? "true" : "false"}, label);
      b.addEventListener("click", function () {
        box.dataset.arcs = mode;
        for (const x of toggle.children) x.setAttribute("aria-pressed", x === b ? "true" : "false");
      });
      add(toggle, b);
    }
    box.dataset.arcs = "both";
  }
  PM.detail = el("div", {class: "detail"});
  add(box, add(el("div", {class: "browser"}), sentenceList(), add(el("div", {class: "detailbox"}), toggle, PM.detail)));
  add(box, arrowDefs());
  filterRows("");
  if (D.eager) D.sentences.forEach(function (s, k) { viewOf(k); });
}

function onKey(e) {
  const t = e.target;
  if (t && (t.tagName === "INPUT" || t.tagName === "SELECT" || t.tagName === "TEXTAREA") && e.key !== "ArrowDown" && e.key !== "ArrowUp") return;
  if (t && t.tagName === "SELECT") return;
  const box = document.getElementById("sentences").getBoundingClientRect();
  const inView = box.top < window.innerHeight && box.bottom > 0;
  if (!inView && !(t && t.closest && t.closest("#sentences"))) return;
  const delta = {ArrowDown: 1, ArrowRight: 1, ArrowUp: -1, ArrowLeft: -1}[e.key];
  if (!delta || e.altKey || e.ctrlKey || e.metaKey) return;
  e.preventDefault();
  step(delta);
}

function init() {
  document.getElementById("title").textContent = D.title;
  document.body.appendChild(tip);
  const nav = document.getElementById("nav");
  for (const [id, label] of [["summary", "Summary"], ["failures", "Where it fails"], ["sentences", "Sentences"], ["bench", "Layers"]]) {
    if (id === "bench" && !D.bench) continue;
    add(nav, el("a", {href: "#" + id}, label));
  }
  if (D.impacts) PM.layer = D.impacts.default;
  renderSummary();
  renderFailures();
  renderSentences();
  renderBench();
  document.addEventListener("keydown", onKey);
  const wanted = decodeURIComponent((location.hash.match(/^#s=(.*)$/) || [])[1] || "");
  const start = D.sentences.findIndex(function (s) { return s.id === wanted; });
  if (D.sentences.length) selectSentence(start >= 0 ? start : 0, start >= 0);
  document.documentElement.dataset.readyMs = performance.now().toFixed(0);
  document.documentElement.dataset.ready = "1";
}

init();
