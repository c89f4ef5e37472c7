// agent-sandbox viewer: draws every page from JSON (fetched from /api, or embedded when exported).
// Plain JavaScript, no libraries, no network beyond the viewer's own server. Text from runs is
// always set with textContent, never parsed as HTML.
"use strict";

const BODY = document.body.dataset;
const BASE = BODY.base === undefined ? "/" : BODY.base;
const STATIC = BODY.mode === "static";
const PARAMS = JSON.parse(BODY.params || "{}");
const POLL_MS = 2000;

// -- small helpers ------------------------------------------------------------------------------

function h(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  setAttrs(e, attrs);
  for (const k of kids.flat(Infinity)) {
    if (k === null || k === undefined || k === false) continue;
    e.append(k instanceof Node ? k : String(k));
  }
  return e;
}

function svg(tag, attrs, ...kids) {
  const e = document.createElementNS("http://www.w3.org/2000/svg", tag);
  setAttrs(e, attrs);
  for (const k of kids.flat(Infinity)) {
    if (k === null || k === undefined || k === false) continue;
    e.append(k instanceof Node ? k : String(k));
  }
  return e;
}

function setAttrs(e, attrs) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") e.setAttribute("class", v);
    else if (k === "text") e.textContent = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? "" : v);
  }
}

function pct(v) {
  return v === null || v === undefined ? "–" : (100 * v).toFixed(1) + "%";
}

function interval(iv) {
  if (!iv) return "–";
  if (iv.n === 0) return "n/a"; // a rate over no episode is no number
  return `${pct(iv.value)} [${pct(iv.low)}, ${pct(iv.high)}]`;
}

function judgeText(judge) {
  // The judge as every output names it; a rules judge says it is not an LLM.
  return judge.kind === "rules" ? `${judge.model} (rules from the task's checks, not an LLM)` : judge.model;
}

function headlineText(head) {
  // The pass rate as every command shows it (sandbox.eval.headline): "n/a" over no episode.
  return head ? head.text : "–";
}

function num(v, digits) {
  if (v === null || v === undefined) return "–";
  return Number(v).toLocaleString("en-US", { maximumFractionDigits: digits ?? 2 });
}

function when(iso) {
  return iso ? iso.replace("T", " ").replace(/\.\d+/, "").replace("+00:00", " UTC") : "–";
}

function short(text, n) {
  if (text === null || text === undefined) return "";
  const s = String(text);
  return s.length > n ? s.slice(0, n - 1) + "…" : s;
}

function safeName(s) {
  if (/^[A-Za-z0-9_][A-Za-z0-9._@+-]*$/.test(s) && s.length <= 120) return s;
  const bytes = new TextEncoder().encode(s);
  return "x" + Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("").slice(0, 200);
}

function keyPath(key) {
  return key.split("/").map(STATIC ? safeName : encodeURIComponent).join("/");
}

const href = {
  index: () => (STATIC ? BASE + "index.html" : BASE),
  run: (key) => (STATIC ? `${BASE}runs/${keyPath(key)}/index.html` : `${BASE}runs/${keyPath(key)}`),
  episode: (key, task, trial) =>
    STATIC
      ? `${BASE}runs/${keyPath(key)}/episodes/${safeName(task)}/${trial}.html`
      : `${BASE}runs/${keyPath(key)}/episodes/${encodeURIComponent(task)}/${trial}`,
  compare: (keys) =>
    STATIC ? BASE + "compare.html" : `${BASE}compare?runs=${keys.map(encodeURIComponent).join(",")}`,
  leaderboard: (ref) =>
    STATIC
      ? BASE + "leaderboard.html"
      : BASE + "leaderboard" + (ref ? `?reference=${encodeURIComponent(ref)}` : ""),
  plot: (key, name) =>
    STATIC ? `${BASE}runs/${keyPath(key)}/${name}` : `${BASE}api/runs/${keyPath(key)}/plots/${name}`,
};

async function api(path) {
  const resp = await fetch(BASE + "api/" + path, { headers: { Accept: "application/json" } });
  let body = null;
  try {
    body = await resp.json();
  } catch (e) {
    body = null;
  }
  if (!resp.ok) throw new Error((body && body.detail) || `HTTP ${resp.status}`);
  return body;
}

function embedded() {
  const node = document.getElementById("page-data");
  return node ? JSON.parse(node.textContent) : null;
}

function main(...kids) {
  const m = document.getElementById("main");
  m.replaceChildren(...kids.flat(Infinity).filter((k) => k));
  return m;
}

function fail(error) {
  main(h("div", { class: "error", id: "error" }, String(error.message || error)));
}

function badge(text, kind) {
  return h("span", { class: `badge ${kind || text}` }, text);
}

function labelBadge(label) {
  return label ? badge(label, "label-" + label) : badge("not scored", "muted");
}

function table(headers, rows, attrs) {
  return h(
    "table",
    attrs || {},
    h("thead", {}, h("tr", {}, headers.map((c) => (c instanceof Node ? c : h("th", {}, c))))),
    h("tbody", {}, rows)
  );
}

function setLive(text) {
  const s = document.getElementById("live-status");
  if (s) s.textContent = text;
}

function poller(load, isRunning) {
  // Re-run ``load`` every POLL_MS while ``isRunning()``; stop quietly otherwise.
  if (STATIC) return;
  const tick = async () => {
    if (!isRunning()) {
      setLive("");
      return;
    }
    setLive("live: updating as episodes finish");
    try {
      await load();
    } catch (e) {
      setLive("live updates stopped: " + e.message);
      return;
    }
    setTimeout(tick, POLL_MS);
  };
  setTimeout(tick, POLL_MS);
}

function navLinks() {
  const set = (id, url) => {
    const a = document.getElementById(id);
    if (a) a.setAttribute("href", url);
  };
  set("nav-home", href.index());
  set("nav-runs", href.index());
  set("nav-leaderboard", href.leaderboard());
  const c = document.getElementById("nav-compare");
  if (c) {
    if (STATIC) c.remove();
    else c.setAttribute("href", BASE + "compare");
  }
}

// -- the runs -----------------------------------------------------------------------------------

const RUN_COLUMNS = [
  ["run", (r) => r.key],
  ["suite", (r) => r.suite],
  ["model", (r) => r.model],
  ["agent", (r) => r.agent],
  ["started", (r) => r.started_at || ""],
  ["status", (r) => r.status],
  ["episodes", (r) => r.finished ?? -1],
  ["pass rate", (r) => (r.headline && r.headline.pass_rate !== null ? r.headline.pass_rate : -1)],
  ["cost", (r) => r.cost ?? -1],
  ["tokens", (r) => r.tokens ?? -1],
];

function renderIndex(runs, state) {
  state.sort = state.sort || { col: 4, desc: true };
  const selected = state.selected || (state.selected = new Set());
  const filter = h("input", {
    id: "run-filter",
    type: "search",
    placeholder: "filter: id, suite, model, agent, status",
    value: state.filter || "",
  });
  const body = h("tbody");
  const count = h("span", { class: "muted" });
  const compareBtn = h("button", { id: "compare-selected", disabled: true }, "Compare selected");
  const draw = () => {
    const q = (state.filter || "").toLowerCase();
    const [_, keyOf] = RUN_COLUMNS[state.sort.col];
    const shown = runs
      .filter((r) => !q || [r.key, r.suite, r.model, r.agent, r.status].join(" ").toLowerCase().includes(q))
      .sort((a, b) => {
        const x = keyOf(a);
        const y = keyOf(b);
        const c = x < y ? -1 : x > y ? 1 : 0;
        return state.sort.desc ? -c : c;
      });
    body.replaceChildren(
      ...shown.map((r) =>
        h(
          "tr",
          { class: "run-row", "data-key": r.key },
          h(
            "td",
            {},
            STATIC
              ? null
              : h("input", {
                  type: "checkbox",
                  class: "pick",
                  checked: selected.has(r.key),
                  onchange: (ev) => {
                    if (ev.target.checked) selected.add(r.key);
                    else selected.delete(r.key);
                    compareBtn.disabled = selected.size < 2;
                  },
                })
          ),
          h("td", {}, h("a", { href: href.run(r.key), class: "run-link" }, r.key)),
          h("td", {}, r.suite),
          h("td", {}, r.model),
          h("td", {}, r.agent),
          h("td", {}, when(r.started_at)),
          h("td", {}, badge(r.status, "status-" + r.status), r.error ? h("div", { class: "muted small" }, short(r.error, 120)) : null),
          h("td", { class: "num" }, `${r.finished ?? "–"} / ${r.episodes}`),
          h("td", { class: "num", "data-n": r.headline ? r.headline.n : null }, r.headline ? headlineText(r.headline) : r.status === "running" ? "running" : "not scored"),
          h("td", { class: "num" }, r.cost === null ? "–" : num(r.cost, 4)),
          h("td", { class: "num" }, num(r.tokens, 0))
        )
      )
    );
    count.textContent = `${shown.length} of ${runs.length} runs`;
    compareBtn.disabled = selected.size < 2;
  };
  filter.addEventListener("input", () => {
    state.filter = filter.value;
    draw();
  });
  compareBtn.addEventListener("click", () => {
    window.location.href = href.compare([...selected]);
  });
  const heads = [h("th", {}, "")].concat(
    RUN_COLUMNS.map(([name], i) =>
      h(
        "th",
        {
          class: "sortable" + (state.sort.col === i ? (state.sort.desc ? " desc" : " asc") : ""),
          onclick: () => {
            state.sort = { col: i, desc: state.sort.col === i ? !state.sort.desc : false };
            renderIndex(runs, state);
          },
        },
        name
      )
    )
  );
  main(
    h("h1", {}, "Runs"),
    runs.length === 0 ? h("p", { id: "no-runs" }, "No runs here yet: make one with `make run` or `sandbox run`.") : null,
    h("div", { class: "toolbar" }, filter, " ", count, " ", STATIC ? null : compareBtn, " ", h("a", { href: href.leaderboard() }, "Leaderboard"), STATIC && runs.length > 1 ? [" ", h("a", { href: href.compare([]) }, "Side by side")] : null),
    h("table", { id: "runs", class: "grid" }, h("thead", {}, h("tr", {}, heads)), body)
  );
  draw();
}

async function pageIndex() {
  const state = {};
  if (STATIC) return renderIndex(embedded(), state);
  let runs = await api("runs");
  renderIndex(runs, state);
  poller(async () => {
    runs = await api("runs");
    renderIndex(runs, state);
  }, () => runs.some((r) => r.status === "running"));
}

// -- one run ------------------------------------------------------------------------------------

function rateBars(entries) {
  // entries: [name, Interval]; a horizontal bar per entry with its 95% interval.
  const W = 480, rowH = 22, left = 130;
  const scale = (v) => left + v * (W - left - 60);
  const g = svg("svg", { class: "bars", width: W, height: entries.length * rowH + 8, role: "img" });
  entries.forEach(([name, iv], i) => {
    const y = 4 + i * rowH;
    if (iv.n === 0) {
      // nothing counted: no bar, no interval
      g.append(svg("text", { x: 0, y: y + 14, class: "bar-label" }, short(name, 20)), svg("text", { x: left, y: y + 14, class: "bar-value" }, "n/a"));
      return;
    }
    g.append(
      svg("text", { x: 0, y: y + 14, class: "bar-label" }, short(name, 20)),
      svg("rect", { x: left, y: y + 3, width: Math.max(1, scale(iv.value) - left), height: rowH - 8, class: "bar" }),
      svg("line", { x1: scale(iv.low), x2: scale(iv.high), y1: y + rowH / 2, y2: y + rowH / 2, class: "whisker" }),
      svg("text", { x: scale(1) + 4, y: y + 14, class: "bar-value" }, pct(iv.value))
    );
  });
  return g;
}

function scoresSection(page) {
  const s = page.scores;
  if (!s) {
    const why =
      page.label_source === "live"
        ? "Not scored yet: labels below come from rules and checks as episodes finish. `sandbox eval` writes the full scores."
        : "No scores.json: run `sandbox eval` on this run.";
    return h("section", { id: "scores" }, h("h2", {}, "Scores"), h("p", { class: "muted" }, why));
  }
  const p = s.pass_rate;
  const groups = [["all", p.pass_rate]].concat(Object.entries(p.groups || {}).map(([g, r]) => [g, r.pass_rate]));
  const parts = [
    h("h2", {}, "Scores"),
    h(
      "p",
      { id: "pass-rate" },
      h("strong", {}, "Pass rate " + (page.entry.headline ? headlineText(page.entry.headline) : interval(p.pass_rate))),
      ` over ${p.n} episodes: ${p.solved} solved, ${p.unsure} unsure, ${p.unsolved} unsolved`,
      p.infra_errors ? `; ${p.infra_errors} infrastructure errors` : "",
      Object.entries(p.excluded || {}).map(([why, eps]) => `; ${eps.length} left out (${why})`).join(""),
      `. Protocol ${s.protocol}` + (s.judge ? `, judge ${judgeText(s.judge)}` : "") + "."
    ),
    rateBars(groups),
  ];
  if (Object.keys(s.pass_at_k || {}).length) {
    parts.push(
      table(
        ["k", "pass@k", "pass^k"],
        Object.entries(s.pass_at_k).map(([k, v]) => h("tr", {}, h("td", {}, k), h("td", {}, pct(v)), h("td", {}, pct(s.pass_hat_k[k]))))
      )
    );
  }
  if (s.state_checks) parts.push(stateChecksTable(s.state_checks));
  if (s.reference) {
    const w = s.reference.win;
    parts.push(
      h(
        "p",
        { id: "win-rate" },
        `Against ${s.reference.reference_run}: win rate ${interval(w.win_rate)} (ties half; ToolEval ${interval(w.tooleval_win_rate)}), ` +
          `${w.wins} wins, ${w.losses} losses, ${w.ties} ties; McNemar p = ${num(s.reference.paired.p_value, 4)}`
      )
    );
  }
  const steps = s.step_scores ? Object.entries(s.step_scores.intervals).filter(([, iv]) => iv.n > 0) : [];
  if (steps.length) parts.push(h("h3", {}, "Step-level scores"), rateBars(steps));
  const u = s.usage;
  parts.push(
    h(
      "p",
      { class: "muted" },
      `Usage: ${u.model_calls} model calls, ${u.tool_calls} tool calls, ${num(u.prompt_tokens + u.completion_tokens, 0)} tokens, cost ${num(u.cost, 4)}, over ${u.episodes} episodes.`
    )
  );
  if ((s.notes || []).length) parts.push(h("ul", { class: "notes" }, s.notes.map((n) => h("li", {}, n))));
  return h("section", { id: "scores" }, parts);
}

function stateChecksTable(sc) {
  // A world's state checks (scores.json's state_checks): each check's rate with its interval,
  // and pass@k / pass^k with theirs; then each check of each task in a closed details element.
  const rates = [sc.all].concat(sc.checks);
  const ks = [...new Set(rates.flatMap((r) => Object.keys(r.pass_at_k)))].sort((a, b) => a - b);
  const heads = ["check", "episodes", "passed", "rate [95% CI]"].concat(ks.flatMap((k) => [`pass@${k}`, `pass^${k}`]));
  const ivCell = (iv, name) =>
    iv ? h("td", { class: "num", "data-col": name }, iv.n === 0 ? "n/a" : [pct(iv.value), h("div", { class: "muted small" }, `[${pct(iv.low)}, ${pct(iv.high)}]`)]) : h("td", { class: "num" }, "–");
  const rows = rates.map((r) =>
    h(
      "tr",
      { class: "state-check", "data-check": r.check },
      h("td", {}, r.check),
      h("td", { class: "num" }, r.episodes),
      h("td", { class: "num" }, r.passed),
      h("td", { class: "num", "data-col": "rate" }, interval(r.rate)),
      ks.map((k) => [ivCell(r.pass_at_k[k], "pass@" + k), ivCell(r.pass_hat_k[k], "pass^" + k)])
    )
  );
  const notes = [];
  if (sc.unjudged) notes.push(`${sc.unjudged} episode(s) without a state check (no step reached the world).`);
  if (sc.diverged.length) notes.push(`Replays that left the recorded states: ${sc.diverged.join(", ")}.`);
  const tasks = sc.tasks.map((t) =>
    h(
      "tr",
      { class: "task-check" + (t.passed < t.episodes ? " failing" : ""), "data-task": t.task_id },
      h("td", {}, t.task_id),
      h("td", {}, t.check),
      h("td", {}, t.description),
      h("td", { class: "num" }, `${t.passed} / ${t.episodes}`)
    )
  );
  return h(
    "div",
    { id: "state-checks" },
    h("h3", {}, "State checks"),
    h("p", { class: "muted small" }, "Each check of the world's final state and of the calls carried out, over the episodes that count whatever decided their label; all: every state check of the episode held. Intervals: 95% bootstrap over tasks."),
    h("div", { class: "table-scroll" }, table(heads, rows, { class: "grid", id: "state-check-table" })),
    notes.map((n) => h("p", { class: "muted small" }, n)),
    tasks.length ? h("details", { id: "task-checks" }, h("summary", {}, `each check of each task (${tasks.length})`), table(["task", "check", "what", "passed"], tasks, { class: "grid" })) : null
  );
}

const FILTERS = [
  ["all", "all"],
  ["solved", "solved"],
  ["unsolved", "unsolved"],
  ["gave_up", "gave up"],
  ["budget", "budget"],
  ["context_overflow", "context overflow"],
  ["infra", "infra"],
];
const PAGE_ROWS = 100;

function episodesSection(key, rows, state) {
  state.filter = state.filter || "all";
  state.page = state.page || 0;
  const body = h("tbody");
  const pager = h("div", { class: "pager" });
  const text = h("input", { id: "episode-filter", type: "search", placeholder: "task id or text", value: state.text || "" });
  const buttons = FILTERS.map(([tag, name]) => {
    const n = tag === "all" ? rows.length : rows.filter((r) => r.tags.includes(tag)).length;
    return h(
      "button",
      {
        class: "filter" + (state.filter === tag ? " on" : ""),
        "data-filter": tag,
        onclick: () => {
          state.filter = tag;
          state.page = 0;
          redraw();
        },
      },
      `${name} (${n})`
    );
  });
  const redraw = () => {
    buttons.forEach((b) => b.classList.toggle("on", b.dataset.filter === state.filter));
    const q = (state.text || "").toLowerCase();
    const shown = rows.filter(
      (r) =>
        (state.filter === "all" || r.tags.includes(state.filter)) &&
        (!q || [r.task_id, r.reason, r.answer || ""].join(" ").toLowerCase().includes(q))
    );
    const pages = Math.max(1, Math.ceil(shown.length / PAGE_ROWS));
    state.page = Math.min(state.page, pages - 1);
    const slice = shown.slice(state.page * PAGE_ROWS, (state.page + 1) * PAGE_ROWS);
    body.replaceChildren(
      ...slice.map((r) => {
        const done = r.steps !== null;
        return h(
          "tr",
          { class: "episode-row", "data-task": r.task_id, "data-tags": r.tags.join(" ") },
          h("td", {}, done ? h("a", { href: href.episode(key, r.task_id, r.trial) }, r.task_id) : r.task_id),
          h("td", { class: "num" }, r.trial),
          h("td", {}, badge(r.status, "status-" + r.status)),
          h("td", {}, r.status === "pending" ? "–" : labelBadge(r.label), r.method ? h("span", { class: "muted small" }, " " + r.method) : null),
          h("td", { class: "reason" }, short(r.reason, 160)),
          h("td", { class: "num" }, r.steps ?? "–"),
          h("td", { class: "num" }, r.cost === null ? "–" : num(r.cost, 4)),
          h("td", { class: "answer" }, short(r.answer, 120))
        );
      })
    );
    pager.replaceChildren(
      `${shown.length} episodes`,
      pages > 1
        ? [
            " ",
            h("button", { disabled: state.page === 0, onclick: () => { state.page -= 1; redraw(); } }, "‹ previous"),
            ` page ${state.page + 1} of ${pages} `,
            h("button", { disabled: state.page >= pages - 1, onclick: () => { state.page += 1; redraw(); } }, "next ›"),
          ]
        : ""
    );
  };
  text.addEventListener("input", () => {
    state.text = text.value;
    state.page = 0;
    redraw();
  });
  redraw();
  return h(
    "section",
    { id: "episodes" },
    h("h2", {}, "Episodes"),
    h("div", { class: "toolbar" }, buttons, " ", text),
    h(
      "table",
      { class: "grid", id: "episode-table" },
      h("thead", {}, h("tr", {}, ["task", "trial", "status", "label", "why", "steps", "cost", "final answer"].map((c) => h("th", {}, c)))),
      body
    ),
    pager
  );
}

function runHeader(page) {
  const e = page.entry;
  const m = page.manifest || {};
  return [
    h("p", { class: "crumbs" }, h("a", { href: href.index() }, "Runs"), " / ", e.key),
    h("h1", {}, "Run ", h("span", { id: "run-id" }, e.run_id)),
    h(
      "p",
      { class: "meta" },
      badge(e.status, "status-" + e.status),
      ` suite ${e.suite} · agent ${e.agent} · model ${e.model} · ${e.finished ?? "–"} of ${e.episodes} episodes · started ${when(e.started_at)}` +
        (e.ended_at ? ` · ended ${when(e.ended_at)}` : "") +
        (m.git_sha ? ` · git ${m.git_sha.slice(0, 10)}` : "")
    ),
    e.replay_of ? h("p", { class: "note" }, `A replay of ${e.replay_of}: each episode page shows where it departs from the recording.`) : null,
    e.error ? h("p", { class: "error" }, e.error) : null,
  ];
}

function renderRun(page, rows, state) {
  const e = page.entry;
  const plots = page.plots.map((p) => h("figure", {}, h("img", { src: href.plot(e.key, p), alt: p, loading: "lazy" }), h("figcaption", {}, p)));
  main(
    runHeader(page),
    scoresSection(page),
    plots.length ? h("section", { id: "plots" }, h("h2", {}, "Plots"), h("div", { class: "plots" }, plots)) : null,
    episodesSection(e.key, rows, state),
    h(
      "section",
      { id: "config" },
      h("h2", {}, "Config"),
      h("details", {}, h("summary", {}, "config (as the manifest records it)"), h("pre", {}, JSON.stringify(page.config, null, 2))),
      h("details", {}, h("summary", {}, "manifest: suite, agent, model, versions"), h("pre", {}, JSON.stringify(page.manifest, null, 2)))
    )
  );
}

async function pageRun() {
  const state = {};
  if (STATIC) {
    const d = embedded();
    return renderRun(d.run, d.episodes, state);
  }
  const path = "runs/" + keyPath(PARAMS.key);
  let page = await api(path);
  let rows = await api(path + "/episodes");
  renderRun(page, rows, state);
  poller(async () => {
    page = await api(path);
    rows = await api(path + "/episodes");
    renderRun(page, rows, state);
  }, () => page.entry.status === "running");
}

// -- one episode --------------------------------------------------------------------------------

const PROVENANCE = [
  [/^hit$/, "recorded"],
  [/^simulated$/, "simulated"],
  [/^nearest$/, "nearest"],
  [/^upstream$/, "upstream"],
  [/^fault:/, "fault"],
  [/^world$/, "world"],
];

function provenanceBadge(obs) {
  if (!obs) return badge("not sent", "prov-error");
  const hit = PROVENANCE.find(([re]) => re.test(obs.provenance));
  const name = hit ? hit[1] : "error";
  const b = badge(name, "prov-" + name);
  b.title = obs.provenance + (obs.status ? ` (HTTP ${obs.status})` : "");
  return b;
}

function prettyJson(text) {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch (e) {
    return text;
  }
}

function fieldText(f) {
  // One field of a changed record: "balance 50 → 150"; absent values as "∅".
  const v = (x) => (x === null ? "∅" : x);
  return `${f.path || "(record)"} ${v(f.before)} → ${v(f.after)}`;
}

function worldCallBox(wc) {
  // What a world call did: the state hash after it and each record it changed, before → after.
  if (!wc) return null;
  const records = wc.changes.map((c) =>
    h(
      "li",
      { class: "record-change " + c.change, "data-record": `${c.collection}/${c.id}` },
      h("code", {}, `${c.collection} ${c.id}`),
      " ",
      badge(c.change, "change-" + c.change),
      c.change === "deleted"
        ? null
        : h("ul", { class: "fields" }, c.fields.map((f) => h("li", {}, c.change === "created" ? `${f.path || "(record)"} ${f.after}` : fieldText(f))))
    )
  );
  return h(
    "div",
    { class: "world-call", "data-state": wc.state },
    h("span", { class: "muted small" }, "state after "),
    h("code", { class: "state-hash", title: wc.state }, wc.state.slice(0, 12)),
    wc.changes.length ? h("ul", { class: "changes" }, records) : h("span", { class: "muted small" }, " · no record changed")
  );
}

function nodeCard(node, marks, opts) {
  const m = marks || {};
  const flags = [
    m.on_path ? badge("answer path", "mark-path") : null,
    m.pruned ? badge("pruned", "mark-pruned") : null,
    m.give_up ? badge("give-up", "mark-giveup") : null,
    m.depth_cut ? badge("depth cut", "mark-depth") : null,
    m.budget_cut ? badge("budget cut", "mark-budget") : null,
  ];
  return h(
    "div",
    { class: "node-card" + (opts && opts.diverged ? " diverged" : ""), id: (opts && opts.id) || null, "data-node": node.id },
    h("div", { class: "node-head" }, h("strong", {}, `Step ${node.id}`), ` ${node.kind}`, node.parent !== null ? h("span", { class: "muted" }, ` · parent ${node.parent}`) : h("span", { class: "muted" }, " · root"), ` · depth ${node.depth} `, flags),
    node.diversity_prompt ? h("details", {}, h("summary", {}, "diversity prompt"), h("pre", {}, node.diversity_prompt)) : null,
    node.content ? h("div", { class: "thought" }, h("span", { class: "muted" }, "Thought: "), node.content) : null,
    node.calls.map((c, i) =>
      h(
        "div",
        { class: "call" },
        h("div", {}, h("code", { class: "fn" }, c.name), " ", provenanceBadge(c.observation), c.observation && !c.observation.ok ? badge("failed", "failed") : null),
        h("pre", { class: "args" }, prettyJson(c.arguments)),
        c.observation ? h("pre", { class: "observation" }, prettyJson(c.observation.content)) : null,
        worldCallBox(opts && opts.world ? opts.world.get(`${node.id}/${i}`) : null)
      )
    ),
    node.finish
      ? h("div", { class: "finish" }, h("code", {}, `Finish(${node.finish.return_type})`), node.finish.final_answer ? h("pre", {}, node.finish.final_answer) : null)
      : null,
    node.format_error ? h("div", { class: "error small" }, "Not usable: " + node.format_error) : null,
    node.feedback ? h("div", { class: "muted small" }, "Feedback: " + node.feedback) : null,
    node.error ? h("div", { class: "error small" }, node.error) : null,
    h("div", { class: "muted small" }, `tokens ${node.usage.prompt_tokens}+${node.usage.completion_tokens} · ${num(node.latency_ms, 1)} ms`)
  );
}

function layoutTree(nodes, marks) {
  // A tidy layout: leaves left to right in expansion order, parents centred over their children.
  const byId = new Map(marks.map((m) => [m.id, m]));
  const roots = marks.filter((m) => m.parent === null || !byId.has(m.parent)).map((m) => m.id);
  const pos = new Map();
  let next = 0;
  const place = (id, depth) => {
    const kids = byId.get(id).children;
    if (!kids.length) {
      pos.set(id, { x: next++, depth });
    } else {
      kids.forEach((k) => place(k, depth + 1));
      pos.set(id, { x: (pos.get(kids[0]).x + pos.get(kids[kids.length - 1]).x) / 2, depth });
    }
  };
  roots.forEach((r) => place(r, 1));
  const rootX = roots.length ? (pos.get(roots[0]).x + pos.get(roots[roots.length - 1]).x) / 2 : 0;
  return { pos, roots, rootX, width: Math.max(1, next) };
}

function captionLines(pos) {
  // Each node's caption line (0 or 1): along a row, a caption goes to the line whose last caption
  // is two steps away or more, so neighbours one step apart (the leaf row) never overlap.
  const rows = new Map();
  for (const [id, p] of pos) rows.set(p.depth, (rows.get(p.depth) || []).concat([[id, p.x]]));
  const line = new Map();
  for (const row of rows.values()) {
    row.sort((a, b) => a[1] - b[1]);
    const last = [-Infinity, -Infinity];
    for (const [id, x] of row) {
      const l = x - last[0] >= 2 ? 0 : x - last[1] >= 2 ? 1 : last[0] <= last[1] ? 0 : 1;
      last[l] = x;
      line.set(id, l);
    }
  }
  return line;
}

function treeSvg(traj, marks, onPick, divergedNode) {
  const nodes = traj.nodes;
  const { pos, roots, rootX, width } = layoutTree(nodes, marks);
  const DX = 64, DY = 70, R = 15, PAD = 30;
  const depthMax = Math.max(1, ...[...pos.values()].map((p) => p.depth));
  const X = (x) => PAD + x * DX;
  const Y = (d) => PAD + d * DY;
  const line = captionLines(pos);
  const g = svg("svg", { id: "tree", width: X(width - 1) + PAD + 40, height: Y(depthMax) + PAD + 32, role: "img" });
  g.append(svg("title", {}, "search tree: nodes in expansion order"));
  const byId = new Map(marks.map((m) => [m.id, m]));
  const edge = (x1, y1, x2, y2, cls) => svg("line", { x1, y1, x2, y2, class: "edge " + cls });
  roots.forEach((r) => {
    const p = pos.get(r);
    g.append(edge(X(rootX), Y(0), X(p.x), Y(p.depth), byId.get(r).on_path ? "path" : ""));
  });
  for (const m of marks) {
    const p = pos.get(m.id);
    for (const c of m.children) {
      const q = pos.get(c);
      g.append(edge(X(p.x), Y(p.depth), X(q.x), Y(q.depth), byId.get(c).on_path ? "path" : ""));
    }
  }
  g.append(svg("circle", { cx: X(rootX), cy: Y(0), r: 8, class: "tree-root" }), svg("text", { x: X(rootX) + 12, y: Y(0) + 4, class: "tree-caption" }, "query"));
  nodes.forEach((n) => {
    const m = byId.get(n.id);
    const p = pos.get(n.id);
    const cls = ["tree-node", "kind-" + n.kind];
    if (m.on_path) cls.push("on-path");
    if (m.pruned) cls.push("pruned");
    if (m.give_up) cls.push("give-up");
    if (m.depth_cut) cls.push("depth-cut");
    if (m.budget_cut) cls.push("budget-cut");
    if (divergedNode === n.id) cls.push("diverged");
    const call = n.calls.length ? n.calls[0].name : n.finish ? "Finish" : n.kind;
    const group = svg(
      "g",
      { class: cls.join(" "), id: "tree-node-" + n.id, "data-node": n.id, tabindex: 0, role: "button", onclick: () => onPick(n.id), onkeydown: (ev) => { if (ev.key === "Enter") onPick(n.id); } },
      svg("title", {}, `step ${n.id}: ${n.kind} ${call}`),
      svg("circle", { cx: X(p.x), cy: Y(p.depth), r: R }),
      svg("text", { x: X(p.x), y: Y(p.depth) + 4, class: "node-id" }, n.id),
      svg("text", { x: X(p.x), y: Y(p.depth) + R + 13 + 12 * line.get(n.id), class: "node-caption" }, short(call.replace(/_for_.*$/, ""), 12))
    );
    g.append(group);
  });
  return g;
}

function legend() {
  const item = (cls, text) => h("span", { class: "legend-item" }, h("span", { class: "swatch " + cls }), text);
  return h("div", { class: "legend" }, item("on-path", "answer path"), item("pruned", "pruned branch"), item("give-up", "give-up"), item("depth-cut", "depth cut"), item("budget-cut", "budget / error cut"), h("span", { class: "muted" }, " · numbers are the expansion order; click a node"));
}

function renderEpisode(ep) {
  const t = ep.trajectory;
  const key = ep.run.key;
  const marks = new Map(ep.marks.map((m) => [m.id, m]));
  const world = new Map((ep.world_calls || []).map((w) => [`${w.node}/${w.call}`, w]));
  const diverged = ep.divergence && ep.divergence.first_diff ? ep.divergence.first_diff.node : null;
  const detail = h("div", { id: "node-detail", class: "node-detail" });
  const pick = (id) => {
    const node = t.nodes.find((n) => n.id === id);
    if (!node) return;
    document.querySelectorAll(".tree-node.selected").forEach((e) => e.classList.remove("selected"));
    const g = document.getElementById("tree-node-" + id);
    if (g) g.classList.add("selected");
    detail.replaceChildren(nodeCard(node, marks.get(id), { diverged: diverged === id, world }));
  };
  const task = ep.task;
  const query = task ? task.query : (t.prompt.filter((m) => m.role === "user").pop() || {}).content || "";
  const lb = ep.label;
  const chains = new Set(ep.marks.map((m) => m.chain)).size;
  const steps = t.nodes.map((n) => {
    const m = marks.get(n.id);
    return [chains > 1 && (n.parent === null) ? h("h3", {}, `Chain ${m.chain + 1}`) : null, nodeCard(n, m, { id: "step-" + n.id, diverged: diverged === n.id, world })];
  });
  const nav = [
    h("a", { href: href.index() }, "Runs"),
    " / ",
    h("a", { href: href.run(key), id: "run-link" }, key),
    " / ",
    `${t.scenario_id} #${t.trial}`,
    ep.previous ? [" · ", h("a", { href: href.episode(key, ep.previous[0], ep.previous[1]), id: "prev" }, "‹ previous")] : null,
    ep.next ? [" · ", h("a", { href: href.episode(key, ep.next[0], ep.next[1]), id: "next" }, "next ›")] : null,
  ];
  let divergence = null;
  if (ep.divergence) {
    const d = ep.divergence;
    divergence = h(
      "section",
      { id: "divergence", class: d.identical ? "note" : "error" },
      h("h2", {}, "Replay"),
      !d.found
        ? h("p", {}, `Replay of ${d.original_run}: the recorded episode could not be read (${d.note}).`)
        : d.identical
        ? h("p", {}, `Reproduced: identical to the recorded episode of ${d.original_run}.`)
        : h("div", {}, h("p", {}, `Diverged from ${d.original_run} at ${d.first_diff.node === null ? "the episode level" : "step " + d.first_diff.node}, field ${d.first_diff.field}.`), h("div", { class: "diff" }, h("div", {}, h("div", { class: "muted" }, "recorded"), h("pre", {}, d.first_diff.expected)), h("div", {}, h("div", { class: "muted" }, "replayed"), h("pre", {}, d.first_diff.got))))
    );
  }
  main(
    h("p", { class: "crumbs" }, nav),
    h("h1", {}, t.scenario_id, h("span", { class: "muted" }, ` trial ${t.trial}`)),
    h(
      "p",
      { class: "meta" },
      badge(t.status, "status-" + t.status),
      ` ${t.end_reason} · agent ${t.agent.name} · model ${t.model.name} · ${t.usage.model_calls} model calls · ${t.usage.tool_calls} tool calls · ${num(t.usage.prompt_tokens + t.usage.completion_tokens, 0)} tokens · cost ${num(t.usage.cost, 4)}`
    ),
    h(
      "section",
      { id: "task" },
      h("h2", {}, "Task"),
      h("p", { class: "query" }, query),
      task ? h("p", { class: "muted" }, `group ${task.group}` + (task.solvable ? "" : " · unsolvable: the right answer explains why")) : null,
      task && task.reference && task.reference.answer ? h("details", {}, h("summary", {}, "reference answer"), h("pre", {}, task.reference.answer)) : null
    ),
    divergence,
    chatSection(ep.conversation, t, world),
    h(
      "section",
      { id: "outcome" },
      h("h2", {}, "Answer"),
      h("pre", { id: "final-answer", class: "answer-box" }, t.final_answer === null ? "(no final answer)" : t.final_answer || "(empty answer)"),
      h("p", { id: "label" }, labelBadge(lb && lb.label), lb ? ` by ${lb.method}: ${lb.reason}` : " (no label)"),
      lb && lb.checks && lb.checks.length
        ? h("ul", { class: "checks" }, lb.checks.map((c) => h("li", { class: c.passed ? "pass" : "fail" }, `${c.passed ? "✓" : "✗"} ${c.kind}: ${c.detail}`)))
        : null,
      t.errors.length ? h("ul", { class: "errors" }, t.errors.map((e) => h("li", {}, `${e.kind}: ${e.message}`))) : null
    ),
    h(
      "section",
      { id: "tree-section" },
      h("h2", {}, chains > 1 ? `Chains (${chains})` : "Tree"),
      legend(),
      h("div", { class: "tree-wrap" }, h("div", { class: "tree-scroll" }, treeSvg(t, ep.marks, pick, diverged)), detail)
    ),
    h("section", { id: "steps" }, h("h2", {}, "Steps in expansion order"), steps),
    worldSection(t.world)
  );
  const start = diverged !== null ? diverged : t.chosen_path.length ? t.chosen_path[t.chosen_path.length - 1] : t.nodes.length ? t.nodes[t.nodes.length - 1].id : null;
  if (start !== null) pick(start);
}

const SOURCES = {
  task: "the task's query",
  script: "the task's script (scripted-user)",
  persona: "the offline persona player (persona-user)",
  live: "the user model, asked during the run",
  record: "the user record of an earlier run",
  cache: "the model cache (the user model not asked)",
  replay: "the recorded episode (sandbox replay)",
};

function chatCalls(node, world) {
  // A path node's calls inline: the call, its observation (folded) and what it changed.
  return node.calls.map((c, i) =>
    h(
      "div",
      { class: "chat-call", "data-node": node.id, "data-call": i },
      h("div", {}, h("code", { class: "fn" }, c.name), " ", h("code", { class: "muted small" }, short(c.arguments, 160)), " ", provenanceBadge(c.observation), c.observation && !c.observation.ok ? badge("failed", "failed") : null),
      c.observation ? h("details", {}, h("summary", { class: "muted small" }, "observation"), h("pre", { class: "observation" }, prettyJson(c.observation.content))) : null,
      worldCallBox(world.get(`${node.id}/${i}`))
    )
  );
}

function chatSection(entries, t, world) {
  // A conversation as a chat along the path the episode ended on (sandbox.view.chat): the
  // user's turns marked with where they came from, the agent's calls and their state diffs.
  if (!entries) return null;
  const nodes = new Map(t.nodes.map((n) => [n.id, n]));
  const step = (e) => (e.node === null ? null : h("a", { href: "#step-" + e.node, class: "muted small" }, ` step ${e.node}`));
  const rows = entries.map((e) => {
    if (e.role === "user") {
      const src = badge(e.source, "src src-" + e.source);
      src.title = SOURCES[e.source] || e.source;
      return h(
        "div",
        { class: "chat-msg chat-user" + (e.failure ? " failed" : ""), "data-source": e.source, "data-node": e.node === null ? "query" : e.node },
        h("div", { class: "chat-who" }, "user ", src, e.signal ? [" ", badge("ended: " + e.signal, "signal")] : null, e.reveal.length ? [" ", badge("reveals " + e.reveal.join(", "), "reveal")] : null, step(e)),
        e.text ? h("div", { class: "chat-text" }, e.text) : null,
        e.failure ? h("div", { class: "error small" }, "user failure: " + e.failure) : null
      );
    }
    if (e.role === "agent") {
      return h("div", { class: "chat-msg chat-agent", "data-node": e.node }, h("div", { class: "chat-who" }, "agent", step(e)), h("div", { class: "chat-text" }, e.text));
    }
    if (e.role === "calls") {
      return h("div", { class: "chat-calls", "data-node": e.node }, e.text ? h("div", { class: "muted small" }, "Thought: " + e.text) : null, chatCalls(nodes.get(e.node), world));
    }
    return h("div", { class: "chat-note muted small", "data-node": e.node }, e.text, step(e));
  });
  return h(
    "section",
    { id: "conversation" },
    h("h2", {}, "Conversation"),
    h("p", { class: "muted small" }, "Along the path the episode ended on; the tree below shows any other branch. User turns: task, script, persona (offline players), live (the user model asked), record (an earlier run's record), cache (the model cache), replay."),
    h("div", { class: "chat" }, rows)
  );
}

function diffValue(v) {
  return v === "<absent>" ? "∅" : JSON.stringify(v);
}

function worldSection(w) {
  // The state checks as the run recorded them: the hashes, the final state against the gold
  // state (collateral / missed / wrong, path by path) and each check with its detail.
  if (!w) return null;
  const hash = (name, v) => [name + " ", v ? h("code", { title: v }, v.slice(0, 12)) : "–"];
  const parts = [
    h("h2", {}, "World state"),
    h("p", { class: "meta", id: "world-hashes" }, hash("initial", w.initial), " · ", hash("final", w.final), " · ", hash("gold", w.gold), w.gold && w.final === w.gold ? [" ", badge("final = gold", "label-solved")] : null),
  ];
  if (w.divergence) parts.push(h("p", { class: "error", id: "world-divergence" }, "Replay diverged: " + w.divergence));
  const diff = w.diff || {};
  const entries = ["collateral", "missed", "wrong"].flatMap((kind) => (diff[kind] || []).map((e) => [kind, e]));
  if (entries.length) {
    parts.push(
      h("h3", {}, "Final state against the gold state"),
      h("p", { class: "muted small" }, "collateral: the agent changed it, the gold did not · missed: the gold changed it, the agent did not · wrong: both changed it, differently; ∅: absent"),
      table(
        ["", "path", "initial", "final", "gold"],
        entries.map(([kind, e]) =>
          h("tr", { class: "gold-diff " + kind, "data-kind": kind, "data-path": e.path }, h("td", {}, badge(kind, "diff-" + kind)), h("td", {}, h("code", {}, e.path)), h("td", {}, diffValue(e.initial)), h("td", {}, diffValue(e.final)), h("td", {}, diffValue(e.gold)))
        ),
        { class: "grid", id: "gold-diff" }
      )
    );
  }
  const checks = w.checks || [];
  parts.push(
    h("h3", {}, "State checks"),
    checks.length
      ? h("ul", { class: "checks", id: "world-checks" }, checks.map((c) => h("li", { class: c.passed ? "pass" : "fail", "data-check": c.kind }, `${c.passed ? "✓" : "✗"} ${c.kind}: ${c.detail}`)))
      : h("p", { class: "muted" }, "This task has no state check.")
  );
  return h("section", { id: "world" }, parts);
}

async function pageEpisode() {
  if (STATIC) return renderEpisode(embedded());
  const ep = await api(`runs/${keyPath(PARAMS.key)}/episodes/${encodeURIComponent(PARAMS.task)}/${encodeURIComponent(PARAMS.trial)}`);
  renderEpisode(ep);
}

// -- runs side by side --------------------------------------------------------------------------

function renderPicker(runs) {
  const chosen = new Set();
  const go = h("button", { id: "compare-go", disabled: true, onclick: () => { window.location.href = href.compare([...chosen]); } }, "Compare");
  main(
    h("h1", {}, "Compare runs"),
    h("p", {}, "Pick two runs or more; the first one picked is the one the others are measured against."),
    h(
      "ul",
      { class: "picker" },
      runs.map((r) =>
        h("li", {}, h("label", {}, h("input", { type: "checkbox", value: r.key, onchange: (ev) => { if (ev.target.checked) chosen.add(r.key); else chosen.delete(r.key); go.disabled = chosen.size < 2; } }), ` ${r.key} — ${r.agent} / ${r.model} (${r.suite})`))
      )
    ),
    go
  );
}

function renderCompare(cmp, state) {
  const only = state.only ?? true;
  const toggle = h("input", { type: "checkbox", id: "only-differing", checked: only, onchange: (ev) => { state.only = ev.target.checked; renderCompare(cmp, state); } });
  const heads = ["task", "trial"].concat(cmp.runs.map((r, i) => h("th", {}, h("a", { href: href.run(r.key) }, r.key), i === 0 ? h("div", { class: "muted small" }, "baseline") : null)));
  const rows = cmp.rows.filter((r) => !only || r.differs);
  const body = rows.map((row) =>
    h(
      "tr",
      { class: "compare-row" + (row.differs ? " differs" : ""), "data-task": row.task_id },
      h("td", {}, row.task_id),
      h("td", { class: "num" }, row.trial),
      row.cells.map((c, i) =>
        h(
          "td",
          { class: "cell" },
          h("div", {}, labelBadge(c.label), " ", c.outcome ? badge(c.outcome, "outcome-" + c.outcome) : null, c.rule && c.outcome !== "tie" ? h("span", { class: "muted small" }, ` by rule ${c.rule}`) : null),
          h("div", { class: "small" }, c.steps === null ? "missing" : h("a", { href: href.episode(cmp.runs[i].key, row.task_id, row.trial) }, `${c.status}, ${c.steps} steps`)),
          c.answer ? h("div", { class: "answer small" }, short(c.answer, 160)) : null,
          c.first_diff
            ? h(
                "div",
                { class: "first-diff small" },
                `first difference at ${c.first_diff.node === null ? "the end" : "step " + c.first_diff.node} (${c.first_diff.field}): ` +
                  `baseline ${short(c.first_diff.expected, 90)} · this run ${short(c.first_diff.got, 90)}`
              )
            : i > 0 && c.steps !== null && row.cells[0].steps !== null
            ? h("div", { class: "muted small" }, "same steps as the baseline")
            : null
        )
      )
    )
  );
  const tallies = cmp.tallies.slice(1).map((t) => h("li", {}, `${t.key} against ${cmp.tallies[0].key}: ${t.wins} wins, ${t.losses} losses, ${t.ties} ties (ToolEval's rules)`));
  main(
    h("h1", {}, "Compare runs"),
    cmp.same_suite ? null : h("p", { class: "error" }, "These runs used different suites (or suite versions): the same task may have met different tools."),
    h("ul", { id: "tallies" }, tallies),
    h("p", {}, h("label", {}, toggle, ` only episodes whose label or answer differ (${cmp.rows.filter((r) => r.differs).length} of ${cmp.rows.length})`)),
    table(heads, body, { class: "grid", id: "compare-table" })
  );
}

async function pageCompare() {
  const state = {};
  if (STATIC) return renderCompare(embedded(), state);
  const keys = (PARAMS.runs || "").split(",").filter((k) => k);
  if (keys.length < 2) return renderPicker(await api("runs"));
  renderCompare(await api("compare?runs=" + keys.map(encodeURIComponent).join(",")), state);
}

// -- leaderboard --------------------------------------------------------------------------------

function checkCell(c) {
  // A state check as every table shows it (sandbox.eval.state_checks.check_cell): its rate
  // with the interval (passed/episodes), then pass^k at the largest k on a line of its own.
  const ks = Object.keys(c.pass_hat_k).map(Number);
  const k = ks.length ? Math.max(...ks) : null;
  return [
    h("span", { class: "check-rate" }, `${interval(c.rate)} (${c.passed}/${c.episodes})`),
    k === null ? null : h("div", { class: "muted small check-hat" }, `pass^${k} ${pct(c.pass_hat_k[k].value)}`),
  ];
}

function stateBoard(rows) {
  // A world suite's rows again, with their state checks (none outside a world).
  const checks = [...new Set(rows.flatMap((r) => (r.state_checks || []).map((c) => c.check)))];
  if (!checks.length) return null;
  const body = rows.map((r) =>
    h(
      "tr",
      { class: "state-board-row" },
      h("td", { class: "num" }, r.rank),
      h("td", {}, r.model),
      h("td", {}, r.agent),
      checks.map((name) => {
        const c = (r.state_checks || []).find((x) => x.check === name);
        return h("td", { class: "num", "data-check": name }, c ? checkCell(c) : "–");
      })
    )
  );
  return [
    h("h3", {}, "State checks"),
    h("p", { class: "muted small" }, "The share of episodes that passed each check of the world's final state and calls (all: every one) [95% CI] (passed/episodes); pass^k at the largest k."),
    h("div", { class: "table-scroll" }, table(["#", "model", "agent"].concat(checks), body, { class: "grid state-board" })),
  ];
}

function runLinks(keys) {
  // One run is its link; several fold into "N runs", so a long list never pushes the figures off-screen.
  const links = keys.map((k) => h("li", {}, h("a", { href: href.run(k) }, k)));
  return keys.length === 1 ? h("a", { href: href.run(keys[0]) }, keys[0]) : h("details", { class: "run-list" }, h("summary", {}, `${keys.length} runs`), h("ul", {}, links));
}

function passAtK(r) {
  // The largest k in the cell (the others in its tooltip): one column however many samples.
  const ks = Object.keys(r.pass_at_k).map(Number).sort((a, b) => a - b);
  if (!ks.length) return h("td", { class: "num" }, "–");
  const all = ks.map((k) => `pass@${k} ${pct(r.pass_at_k[k])} / pass^${k} ${pct(r.pass_hat_k[k])}`).join("\n");
  const k = ks[ks.length - 1];
  return h("td", { class: "num pass-at-k", title: all }, `k=${k}: ${pct(r.pass_at_k[k])} / ${pct(r.pass_hat_k[k])}`);
}

function renderLeaderboard(board, runs, allMeasures = false) {
  const parts = [h("h1", {}, "Leaderboard")];
  if (!STATIC) {
    const select = h(
      "select",
      { id: "reference", onchange: (ev) => { window.location.href = href.leaderboard(ev.target.value); } },
      h("option", { value: "" }, "no reference run"),
      runs.map((r) => h("option", { value: r.key, selected: PARAMS.reference === r.key }, `${r.key} (${r.agent} / ${r.model})`))
    );
    parts.push(h("p", {}, "Win rate against ", select));
  }
  parts.push(h("p", { class: "muted" }, "One row per (suite, model, agent, protocol, judge); runs of the same row are pooled, identical seeded repeats counted once. Pass rates are the ones sandbox eval prints (n: the episodes counted; n/a over none), with 95% bootstrap intervals over tasks; costs are means per episode. Different suites are never ranked together."));
  for (const w of board.warnings || []) parts.push(h("p", { class: "note" }, "Warning: " + w));
  const suites = [];
  for (const r of board.rows) {
    const id = r.suite + " " + r.suite_fingerprint;
    if (!suites.includes(id)) suites.push(id);
  }
  for (const id of suites) {
    const rows = board.rows.filter((r) => r.suite + " " + r.suite_fingerprint === id);
    // the headline measure of each step metric unless all are asked for: the figures stay on-screen
    const shown = allMeasures || !(board.headline || []).length ? board.dimensions : board.headline;
    const dims = shown.filter((d) => rows.some((r) => d in r.step_scores));
    const hasK = rows.some((r) => Object.keys(r.pass_at_k).length);
    const hasWin = rows.some((r) => r.win_rate !== null || r.is_reference);
    const heads = ["#", "model", "agent", "scored by", "runs", "n", "pass rate [95% CI]"]
      .concat(hasK ? ["pass@k / pass^k"] : [])
      .concat(hasWin ? ["win rate [95% CI]", "ties", "W/L/T"] : [])
      .concat(dims)
      .concat(["cost / ep", "tokens / ep", "model calls / ep", "tool calls / ep"]);
    const body = rows.map((r) =>
      h(
        "tr",
        { class: "board-row" },
        h("td", { class: "num" }, r.rank),
        h("td", {}, r.model),
        h("td", {}, r.agent),
        h("td", {}, r.protocol + (r.judge ? " / " + r.judge + (r.judge_kind === "rules" ? " (not an LLM)" : "") : "")),
        h("td", { class: "board-runs" }, runLinks(r.keys), r.repeats.length ? h("div", { class: "muted small" }, `${r.samples} distinct sample(s): identical seeded repeats count once`) : null),
        h("td", { class: "num" }, r.n),
        h("td", { class: "num pass-rate" }, headlineText(r.headline)),
        hasK ? passAtK(r) : null,
        hasWin
          ? r.is_reference
            ? [h("td", { colspan: 3 }, badge("reference", "reference"))]
            : [
                h("td", { class: "num" }, r.win_rate === null ? (r.wins === null ? "–" : "n/a") : `${pct(r.win_rate)} [${pct(r.win_rate_ci[0])}, ${pct(r.win_rate_ci[1])}]`),
                h("td", { class: "num" }, pct(r.tie_rate)),
                h("td", { class: "num" }, r.wins === null ? "–" : `${r.wins}/${r.losses}/${r.ties}`),
              ]
          : null,
        dims.map((d) => h("td", { class: "num step-score", "data-dim": d }, d in r.step_scores ? pct(r.step_scores[d]) : "–")),
        h("td", { class: "num" }, num(r.cost_usd, 4)),
        h("td", { class: "num" }, num(r.tokens, 0)),
        h("td", { class: "num" }, num(r.model_calls, 2)),
        h("td", { class: "num" }, num(r.tool_calls, 2))
      )
    );
    const [name, fp] = [rows[0].suite, rows[0].suite_fingerprint];
    parts.push(
      h("h2", {}, `Suite ${name}`, h("span", { class: "muted small" }, ` ${fp.replace("sha256:", "").slice(0, 12)}`)),
      h("div", { class: "table-scroll" }, table(heads, body, { class: "grid leaderboard" })),
      stateBoard(rows)
    );
  }
  if (board.dimensions.length > (board.headline || []).length && (board.headline || []).length) {
    const every = h("input", { type: "checkbox", id: "all-measures", checked: allMeasures, onchange: (ev) => renderLeaderboard(board, runs, ev.target.checked) });
    parts.splice(2, 0, h("p", {}, h("label", {}, every, " every step measure (else each step metric's headline measure)")));
  }
  if (!board.rows.length) parts.push(h("p", { id: "no-rows" }, "No scored runs yet."));
  if (board.skipped.length) {
    parts.push(h("h3", {}, "Runs left out"), h("ul", { class: "muted" }, board.skipped.map((s) => h("li", {}, `${s.run}: ${s.reason}`))));
  }
  main(parts);
}

async function pageLeaderboard() {
  if (STATIC) return renderLeaderboard(embedded(), []);
  const ref = PARAMS.reference || "";
  const [board, runs] = await Promise.all([api("leaderboard" + (ref ? "?reference=" + encodeURIComponent(ref) : "")), api("runs")]);
  renderLeaderboard(board, runs);
}

// -- start --------------------------------------------------------------------------------------

const PAGES = {
  index: pageIndex,
  run: pageRun,
  episode: pageEpisode,
  compare: pageCompare,
  leaderboard: pageLeaderboard,
  error: async () => main(h("h1", {}, "Not found"), h("p", { class: "error", id: "error" }, PARAMS.message || "")),
};

navLinks();
(PAGES[BODY.page] || PAGES.error)().catch(fail);
