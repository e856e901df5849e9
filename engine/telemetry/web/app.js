// hwemu's page: polls the engine's JSON routes (docs/web.md) and draws them. It owns no state the
// engine does not have: every number shown comes from one answer of a route, as that answer says it.
// The cluster chart is the engine's history ring (/debug/history); the node chart is sampled by the
// page from /telemetry/<node> while the node is chosen. Charts: uPlot (embedded, see package.json).
"use strict";
(() => {
  const $ = (id) => document.getElementById(id);
  const HISTORY_KEEP = 3600; // points of the cluster chart (the engine's ring holds as many)
  const NODE_KEEP = 600;     // samples of the node chart
  const EVENTS_KEEP = 200;   // lines of the event feed

  const state = {
    tickSeconds: 1,
    clusterSeq: 0,
    clusterTime: 0,
    hist: { seq: 0, cols: [[], [], [], [], [], []] }, // time, total, cpu, dram, gpu, other
    eventsAfter: null,
    table: { sort: "node", order: "asc", q: "", pool: "", offset: 0, limit: 25, asked: 0, matched: 0 },
    node: null, nodeCols: null, nodeChart: null, nodeSeries: null,
    pools: "",
    runsShown: false,
    runChosen: null, // the run clicked in the runs table
    run: null,       // the chosen run's course and jobs so far (pollRun)
  };

  async function getJSON(url) {
    const r = await fetch(url, { cache: "no-store" });
    if (!r.ok) throw new Error(`${url}: HTTP ${r.status}`);
    return r.json();
  }

  const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
  const fmt = (x, d) => Number(x).toLocaleString("en-US", { minimumFractionDigits: d, maximumFractionDigits: d });
  const watts = (w) => (Math.abs(w) >= 10000 ? `${fmt(w / 1000, 2)} kW` : `${fmt(w, 1)} W`);
  const joules = (j) => (j >= 3.6e6 ? `${fmt(j / 3.6e6, 3)} kWh` : j >= 1000 ? `${fmt(j / 1000, 1)} kJ` : `${fmt(j, 1)} J`);
  const duration = (s) => (s >= 7200 ? `${fmt(s / 3600, 2)} h` : s >= 120 ? `${fmt(s / 60, 1)} min` : `${fmt(s, 1)} s`);
  const clock = (iso) => (iso ? iso.slice(11, 19) : "");

  function setStatus(text, bad) {
    const s = $("status");
    s.textContent = text;
    s.classList.toggle("bad", !!bad);
  }

  // --- charts ---------------------------------------------------------------------------------
  function chartWidth(el) {
    return Math.max(300, el.clientWidth || el.parentElement.clientWidth || 600);
  }

  function makeChart(el, series, data) {
    const opts = {
      width: chartWidth(el), height: 240,
      scales: { x: { time: true }, y: { range: (u, min, max) => [0, max > 0 ? max * 1.1 : 1] } },
      axes: [{}, { label: "W", size: 60 }],
      series: [{}, ...series.map((s) => ({ label: s.label, stroke: s.color, width: s.width || 1.5,
        value: (u, v) => (v == null ? "–" : `${fmt(v, 1)} W`) }))],
    };
    el.textContent = "";
    return new uPlot(opts, data, el);
  }

  const clusterSeries = [
    { label: "total", color: "#111827", width: 2 },
    { label: "CPU packages", color: "#2563eb" },
    { label: "DRAM", color: "#16a34a" },
    { label: "GPUs", color: "#dc2626" },
    { label: "rest of platform", color: "#9ca3af" },
  ];
  let clusterChart = null;

  function drawCluster() {
    const data = state.hist.cols;
    if (!clusterChart) clusterChart = makeChart($("chart-cluster"), clusterSeries, data);
    else clusterChart.setData(data);
  }

  window.addEventListener("resize", () => {
    if (clusterChart) clusterChart.setSize({ width: chartWidth($("chart-cluster")), height: 240 });
    if (state.nodeChart) state.nodeChart.setSize({ width: chartWidth($("chart-node")), height: 240 });
  });

  // --- the cluster at a glance ----------------------------------------------------------------
  async function pollCluster() {
    const c = await getJSON("/debug/cluster");
    state.tickSeconds = c.tickSeconds || 1;
    $("cluster-name").textContent = c.cluster;
    document.title = `hwemu: ${c.cluster}`;
    if (c.seq === undefined) return; // no snapshot yet
    state.clusterSeq = c.seq;
    state.clusterTime = Date.parse(c.time) / 1000;
    const put = (id, text, value) => {
      const el = $(id);
      el.textContent = text;
      if (value !== undefined) el.dataset.value = String(value);
      el.dataset.seq = String(c.seq);
    };
    put("stat-nodes", fmt(c.nodes, 0), c.nodes);
    $("stat-gpus").textContent = c.gpus ? `${fmt(c.gpus, 0)} GPUs` : "no GPUs";
    put("stat-power", watts(c.power.totalWatts), c.power.totalWatts);
    $("stat-split").textContent = `CPU ${watts(c.power.cpuWatts)} · DRAM ${watts(c.power.dramWatts)} · GPU ${watts(c.power.gpuWatts)}`;
    put("stat-energy", joules(c.energyJoules), c.energyJoules);
    put("stat-ambient", `${fmt(c.ambientC, 1)} °C`, c.ambientC);
    put("stat-capped", fmt(c.cappedNodes, 0), c.cappedNodes);
    put("stat-tick", `${fmt(c.tickSeconds, 3)} s`);
    $("stat-overruns").textContent = `${fmt(c.ticks, 0)} ticks, ${fmt(c.overruns, 0)} overruns`;

    $("pools").tBodies[0].innerHTML = c.pools.map((p) => `<tr><td>${esc(p.pool)}</td><td>${esc(p.profile)}</td>
      <td class="n">${fmt(p.nodes, 0)}</td><td class="n">${watts(p.powerWatts)}</td>
      <td class="n${p.cappedNodes ? " capped" : ""}">${fmt(p.cappedNodes, 0)}</td><td>${esc(p.coolingZone || "")}</td>
      <td class="n">${fmt(p.ambientC, 1)} °C</td></tr>`).join("");
    $("profiles").tBodies[0].innerHTML = c.profiles.map((p) => `<tr><td>${esc(p.profile)}</td>
      <td class="n">${fmt(p.nodes, 0)}</td><td class="n">${watts(p.powerWatts)}</td></tr>`).join("");
    const names = c.pools.map((p) => p.pool).join("\n");
    if (names !== state.pools) { // the pool filter's choices
      state.pools = names;
      const sel = $("pool-filter");
      const keep = sel.value;
      sel.innerHTML = `<option value="">every pool</option>` +
        c.pools.map((p) => `<option value="${esc(p.pool)}">${esc(p.pool)}</option>`).join("");
      sel.value = keep;
    }
  }

  // --- the cluster chart: the engine's ring, only the points the page lacks -------------------
  async function pollHistory() {
    let h = await getJSON(`/debug/history?since=${state.hist.seq}`);
    if (h.last < state.hist.seq) { // the engine restarted: start again
      state.hist = { seq: 0, cols: [[], [], [], [], [], []] };
      h = await getJSON("/debug/history?since=0");
    }
    const cols = state.hist.cols;
    const src = [h.time, h.totalWatts, h.cpuWatts, h.dramWatts, h.gpuWatts, h.otherWatts];
    for (let k = 0; k < cols.length; k++) {
      cols[k].push(...src[k]);
      if (cols[k].length > HISTORY_KEEP) cols[k].splice(0, cols[k].length - HISTORY_KEEP);
    }
    if (h.points) state.hist.seq = h.seq[h.seq.length - 1];
    drawCluster();
  }

  // --- the chosen node's chart: sampled from /telemetry/<node> --------------------------------
  function chooseNode(name) {
    if (state.node === name) return;
    state.node = name;
    state.nodeCols = null;
    state.nodeChart = null;
    $("chart-node-name").textContent = name;
    $("chart-node").textContent = "";
    for (const tr of $("node-table").tBodies[0].rows) tr.classList.toggle("chosen", tr.dataset.node === name);
    pollNode().catch((e) => setStatus(String(e), true));
  }

  async function pollNode() {
    if (!state.node) return;
    const name = state.node;
    const t = await getJSON(`/telemetry/${encodeURIComponent(name)}`);
    if (state.node !== name) return;
    const pk = t.packages || [];
    if (!state.nodeCols) {
      const series = pk.map((p) => ({ label: `package ${p.index}`, color: ["#2563eb", "#7c3aed", "#0891b2", "#4f46e5"][p.index % 4] }));
      series.push({ label: "DRAM", color: "#16a34a" });
      if (t.gpu && t.gpu.count) series.push({ label: `GPUs (${t.gpu.count})`, color: "#dc2626" });
      state.nodeSeries = series;
      state.nodeCols = series.map(() => []).concat([[]]);
    }
    const cols = state.nodeCols;
    const x = state.clusterTime || Date.now() / 1000;
    if (cols[0].length && cols[0][cols[0].length - 1] >= x) return; // no new snapshot since the last sample
    const row = [x, ...pk.map((p) => p.powerWatts), t.cpu.dramPowerWatts];
    if (t.gpu && t.gpu.count) row.push(t.gpu.powerWattsTotal);
    row.forEach((v, k) => {
      cols[k].push(v);
      if (cols[k].length > NODE_KEEP) cols[k].shift();
    });
    if (!state.nodeChart) state.nodeChart = makeChart($("chart-node"), state.nodeSeries, cols);
    else state.nodeChart.setData(cols);
  }

  // --- the node table: one page, sorted and filtered by the engine ----------------------------
  function writeCell(w) {
    if (!w) return `<span class="sub">none</span>`;
    const kind = w.event.split(".").pop();
    const file = w.file.split("/").slice(-2).join("/");
    const what = kind === "rejected" ? `rejected ${esc((w.error || "").toUpperCase())}` : kind;
    return `<span class="w-${esc(kind)}">${what}</span> ${clock(w.time)} <code title="${esc(w.file)}">${esc(file)}</code> = ${esc(w.written)}`;
  }

  async function pollTable() {
    const tb = state.table;
    const asked = ++tb.asked;
    const q = new URLSearchParams({ offset: tb.offset, limit: tb.limit, sort: tb.sort, order: tb.order });
    if (tb.q) q.set("q", tb.q);
    if (tb.pool) q.set("pool", tb.pool);
    const d = await getJSON(`/debug/nodes?${q}`);
    if (asked !== tb.asked) return; // a newer request was made meanwhile
    tb.matched = d.matched;
    if (tb.offset >= d.matched && d.matched > 0) { // the filter shrank the list under the page
      tb.offset = Math.floor((d.matched - 1) / tb.limit) * tb.limit;
      return pollTable();
    }
    const body = $("node-table").tBodies[0];
    body.innerHTML = d.nodes.map((n) => `<tr data-node="${esc(n.node)}" data-power="${n.powerWatts}"${n.node === state.node ? ' class="chosen"' : ""}>
      <td>${esc(n.node)}</td><td>${esc(n.pool)}</td><td>${esc(n.profile)}</td>
      <td class="n">${fmt(n.powerWatts, 1)}</td><td class="n">${n.gpus ? fmt(n.gpuWatts, 1) : ""}</td>
      <td class="n${n.capped ? " capped" : ""}">${n.capWatts ? fmt(n.capWatts, 1) : "–"}${n.gpus ? ` / ${fmt(n.gpuLimitWatts, 0)}` : ""}</td>
      <td class="n">${n.frequencyMHz ? fmt(n.frequencyMHz, 0) : "–"}</td><td class="n">${n.temperatureC ? fmt(n.temperatureC, 1) : "–"}</td>
      <td class="n">${fmt(n.energyJoules / 1000, 1)}</td><td>${writeCell(n.lastWrite)}</td></tr>`).join("");
    const from = d.matched ? tb.offset + 1 : 0, to = tb.offset + d.nodes.length;
    const info = $("page-info");
    info.textContent = `${fmt(from, 0)}–${fmt(to, 0)} of ${fmt(d.matched, 0)}` + (d.matched !== d.count ? ` (${fmt(d.count, 0)} nodes)` : "");
    info.dataset.matched = String(d.matched);
    $("prev").disabled = tb.offset === 0;
    $("next").disabled = to >= d.matched;
    for (const th of $("node-table").tHead.rows[0].cells) {
      th.classList.toggle("sorted", th.dataset.sort === tb.sort);
      th.classList.toggle("desc", th.dataset.sort === tb.sort && tb.order === "desc");
    }
    if (!state.node && d.nodes.length) chooseNode(d.nodes[0].node);
  }

  function refreshTable() {
    pollTable().catch((e) => setStatus(String(e), true));
  }

  $("node-table").tHead.addEventListener("click", (ev) => {
    const key = ev.target.closest("th") && ev.target.closest("th").dataset.sort;
    if (!key) return;
    const tb = state.table;
    if (tb.sort === key) tb.order = tb.order === "asc" ? "desc" : "asc";
    else { tb.sort = key; tb.order = ["node", "pool", "profile"].includes(key) ? "asc" : "desc"; }
    tb.offset = 0;
    refreshTable();
  });
  $("node-table").tBodies[0].addEventListener("click", (ev) => {
    const tr = ev.target.closest("tr");
    if (tr && tr.dataset.node) chooseNode(tr.dataset.node);
  });
  let filterTimer = 0;
  $("filter").addEventListener("input", () => {
    clearTimeout(filterTimer);
    filterTimer = setTimeout(() => { state.table.q = $("filter").value.trim(); state.table.offset = 0; refreshTable(); }, 200);
  });
  $("pool-filter").addEventListener("change", () => { state.table.pool = $("pool-filter").value; state.table.offset = 0; refreshTable(); });
  $("page-size").addEventListener("change", () => { state.table.limit = Number($("page-size").value); state.table.offset = 0; refreshTable(); });
  $("prev").addEventListener("click", () => { state.table.offset = Math.max(0, state.table.offset - state.table.limit); refreshTable(); });
  $("next").addEventListener("click", () => {
    if (state.table.offset + state.table.limit < state.table.matched) state.table.offset += state.table.limit;
    refreshTable();
  });

  // --- the event feed: only the events the page has not seen -----------------------------------
  function eventLine(e) {
    const a = e.attributes || {};
    const kinds = {
      "joulie.sim.write.accepted": ["write accepted", "w-accepted"],
      "joulie.sim.write.normalized": ["write normalized", "w-normalized"],
      "joulie.sim.write.rejected": [`write rejected ${(a["error.type"] || "").toUpperCase()}`, "w-rejected"],
      "joulie.sim.write.reverted": ["write reverted", "w-reverted"],
      "joulie.sim.write.events_lost": ["write events lost", "w-lost"],
      "joulie.sim.cap.reset": ["cap reset", "w-reset"],
      "joulie.sim.job.started": ["job started", "j-started"],
      "joulie.sim.job.completed": ["job completed", "j-completed"],
      "joulie.sim.job.stalled": ["job stalled", "w-rejected"],
    };
    const [kind, cls] = kinds[e.event] || [e.event, ""];
    let what = "";
    if (a.file) what += `<code>${esc(a.file)}</code>`;
    if (a.written !== undefined) what += ` = ${esc(a.written)}`;
    if (a.effective !== undefined && a.effective !== a.written) what += ` → ${esc(a.effective)}`;
    if (a.from !== undefined) what += ` ${esc(a.from)} → ${esc(a.to)}`;
    if (a.reason) what += ` <span class="sub">(${esc(a.reason)})</span>`;
    if (a.lost !== undefined) what += ` ${esc(a.lost)} writes`;
    if (a.pid !== undefined) what += ` <span class="sub">pid ${esc(a.pid)}</span>`;
    if (a.jobId !== undefined) what += ` job <code>${esc(a.jobId)}</code>${a.class ? ` <span class="sub">${esc(a.class)}</span>` : ""}`;
    if (typeof a.durationSec === "number") what += ` in ${duration(a.durationSec)}`;
    if (typeof a.energyJoules === "number") what += `, ${joules(a.energyJoules)}`;
    if (a.runId !== undefined && a.jobId === undefined) what += ` run <code>${esc(a.runId)}</code>`;
    const li = document.createElement("li");
    li.dataset.event = e.event;
    li.innerHTML = `<span class="t">${clock(e.time)}</span><span class="k ${cls}">${esc(kind)}</span><span>${esc(e.node)}</span><span>${what}</span>`;
    return li;
  }

  async function pollEvents() {
    const first = state.eventsAfter === null;
    const d = await getJSON(first ? `/debug/events?limit=${EVENTS_KEEP}` : `/debug/events?after=${state.eventsAfter}&limit=${EVENTS_KEEP}`);
    const feed = $("event-feed");
    if (!first && d.count < state.eventsAfter) { // the engine restarted
      feed.textContent = "";
      state.eventsAfter = null;
      return pollEvents();
    }
    state.eventsAfter = d.count;
    for (const e of d.events) feed.insertBefore(eventLine(e), feed.firstChild);
    while (feed.children.length > EVENTS_KEEP) feed.removeChild(feed.lastChild);
    $("events-count").textContent = `${fmt(d.count, 0)} since the engine started; the newest first`;
  }

  // --- workload runs: shown only while the engine answers GET /runs ---------------------------
  // A table of the runs (GET /runs, newest first) and the chosen run's charts (report.js's, as
  // `hwemu report` draws them) from its course (GET /runs/<runId>/course) and its ended jobs
  // (GET /runs/<runId>/jobs), each asked only for the lines the page lacks.
  const RUNS_SHOWN = 10;
  const ended = (st) => ["completed", "stalled", "stopped"].includes(st);

  function newRun(id) {
    return { id, course: [], courseNext: 0, jobsNext: 0, completed: { standard: [], performance: [] }, charts: null,
             state: "", done: false };
  }

  // The lines of a run's file the page lacks (every page of them); false when the file was cut
  // back (a resumed run): the caller starts again.
  async function moreLines(run, what, take) {
    for (let k = 0; k < 100; k++) {
      const after = what === "course" ? run.courseNext : run.jobsNext;
      const d = await getJSON(`/runs/${encodeURIComponent(run.id)}/${what}?after=${after}`);
      if (d.next < after) return false;
      d.lines.forEach(take);
      if (what === "course") run.courseNext = d.next; else run.jobsNext = d.next;
      if (what === "course") run.state = d.state; // the state the course was read in: ended, it is whole
      if (d.next >= d.total) return true;
    }
    return true;
  }

  async function pollRun(id) {
    if (!state.run || state.run.id !== id) {
      if (state.run && state.run.charts) state.run.charts.charts.forEach((c) => c.u.destroy());
      state.run = newRun(id);
      $("run-charts").textContent = "";
    }
    const run = state.run;
    if (run.done) return;
    const okCourse = await moreLines(run, "course", (l) => run.course.push(l));
    const okJobs = okCourse && await moreLines(run, "jobs", (j) => {
      if (j.state === "completed" && run.completed[j.class]) run.completed[j.class].push(j.endSec - j.queuedSec);
    });
    if (!okCourse || !okJobs) { state.run = null; return pollRun(id); }
    if (state.run !== run) return;
    run.done = ended(run.state);
    const last = run.course[run.course.length - 1];
    const put = (el, text, value) => { $(el).textContent = text; $(el).dataset.value = String(value); };
    $("run-name").textContent = run.id;
    $("run-state").textContent = run.state;
    if (last) {
      const e = last.energyJoules, j = last.jobs;
      put("run-time", duration(last.timeSec), last.timeSec);
      put("run-power", watts(last.powerWatts), last.powerWatts);
      put("run-energy", joules(e.nodes), e.nodes);
      $("run-classes").textContent = `standard ${joules(e.standard)} · performance ${joules(e.performance)} · idle ${joules(e.idle)}`;
      put("run-jobs", `${fmt(j.completed, 0)} completed`, j.completed);
      $("run-jobs-sub").textContent = `${fmt(j.waiting, 0)} waiting · ${fmt(j.running, 0)} running · ${fmt(j.stalled, 0)} stalled` +
        (j.elsewhere !== undefined ? ` · ${fmt(j.elsewhere, 0)} elsewhere` : "");
      $("run-detail").dataset.lines = String(run.course.length);
      const data = [{ name: run.id, classes: [e.standard, e.performance, e.idle], course: run.course, completed: run.completed }];
      run.charts = hwemuCharts.draw($("run-charts"), data, { live: true, prev: run.charts, heading: "h3", height: 220,
        box: "chart-box", width: Math.max(300, Math.floor(($("runs").clientWidth - 80) / 2)) });
      requestAnimationFrame(() => setTimeout(() => {
        if (state.run === run) $("run-drawn").textContent = JSON.stringify({ runId: run.id, lines: run.course.length,
          charts: hwemuCharts.drawn(run.charts) });
      }, 0));
    }
    const link = $("run-report");
    link.hidden = !ended(run.state);
    link.href = `/runs/${encodeURIComponent(run.id)}/report`;
    $("run-report-later").hidden = ended(run.state);
  }

  async function pollRuns() {
    let r;
    try { r = await fetch("/runs", { cache: "no-store" }); } catch { r = null; }
    const section = $("runs");
    if (!r || r.status !== 200) { section.hidden = true; state.runsShown = false; return; }
    const list = await r.json();
    const runs = (Array.isArray(list.runs) ? list.runs : []).slice().reverse().slice(0, RUNS_SHOWN);
    section.hidden = false;
    state.runsShown = true;
    $("run-table").tBodies[0].innerHTML = runs.map((x) => {
      const j = x.jobs || {}, e = x.energyJoules || {};
      const n = (v) => (typeof v === "number" ? fmt(v, 0) : "");
      return `<tr data-run="${esc(x.runId)}" data-energy="${e.nodes === undefined ? "" : e.nodes}"${x.runId === state.runChosen ? ' class="chosen"' : ""}>
        <td>${esc(x.runId)}</td><td>${esc(x.state)}${x.error ? ` <span class="sub">${esc(x.error)}</span>` : ""}</td>
        <td class="n">${typeof x.timeSec === "number" ? duration(x.timeSec) : ""}</td><td class="n">${n(j.total)}</td>
        <td class="n">${n(j.waiting === undefined ? undefined : j.waiting + (j.pending || 0))}</td><td class="n">${n(j.running)}</td>
        <td class="n">${n(j.completed)}</td><td class="n">${n(j.stalled)}</td>
        <td class="n">${typeof e.nodes === "number" ? joules(e.nodes) : ""}</td>
        <td>${ended(x.state) ? `<a href="/runs/${encodeURIComponent(x.runId)}/report" target="_blank">report</a>` : ""}</td></tr>`;
    }).join("");
    $("runs-none").hidden = runs.length > 0;
    // the chosen run: the one clicked, else the running one, else the newest
    const shown = runs.filter((x) => x.state !== "failed");
    const pick = shown.find((x) => x.runId === state.runChosen) || shown.find((x) => x.state === "running") || shown[0];
    $("run-detail").hidden = !pick;
    if (pick) {
      for (const tr of $("run-table").tBodies[0].rows) tr.classList.toggle("chosen", tr.dataset.run === pick.runId);
      await pollRun(pick.runId);
    }
  }

  $("run-table").tBodies[0].addEventListener("click", (ev) => {
    const tr = ev.target.closest("tr");
    if (!tr || !tr.dataset.run || ev.target.closest("a")) return;
    state.runChosen = tr.dataset.run;
    pollRuns().catch(() => {});
  });

  // --- hardware faults (GET /faults, docs/faults.md): shown once the engine has any ------------
  async function pollFaults() {
    const list = await getJSON("/faults");
    const section = $("faults");
    if (!Array.isArray(list) || !list.length) { section.hidden = true; return; }
    const active = list.filter((f) => f.state === "active").length;
    $("faults-count").textContent = `${fmt(active, 0)} active of ${fmt(list.length, 0)}`;
    const num = (v) => (typeof v === "number" ? fmt(v, 1) : "");
    const nodes = (f) => (Array.isArray(f.nodes) ? f.nodes : (f.select && f.select.nodes) || []);
    $("fault-table").tBodies[0].innerHTML = list.slice().reverse().map((f) =>
      `<tr class="${esc(f.state)}"><td>${esc(f.id)}</td><td>${esc(f.kind)}</td><td>${esc(f.device)}</td>` +
      `<td>${esc(f.state)}</td><td>${esc(f.source)}${f.runId ? " " + esc(f.runId) : ""}</td>` +
      `<td>${esc(nodes(f).slice(0, 8).join(", "))}${nodes(f).length > 8 ? ` (+${nodes(f).length - 8})` : ""}</td>` +
      `<td class="n">${num(f.startedSec)}</td><td class="n">${num(f.endedSec)}</td><td>${esc(f.endReason || "")}</td></tr>`
    ).join("");
    section.hidden = false;
  }

  async function faultsLoop() {
    try { await pollFaults(); } catch { $("faults").hidden = true; }
    setTimeout(faultsLoop, Math.max(1000, state.tickSeconds * 1000));
  }

  // --- the loop -------------------------------------------------------------------------------
  async function poll() {
    try {
      await pollCluster();
      await Promise.all([pollHistory(), pollTable(), pollNode()]);
      setStatus(`snapshot ${fmt(state.clusterSeq, 0)} · ${new Date().toLocaleTimeString("en-GB")}`);
    } catch (e) {
      setStatus(`cannot read the engine: ${e.message || e}`, true);
    }
    setTimeout(poll, Math.min(2000, Math.max(500, state.tickSeconds * 1000)));
  }

  // The feed is polled four times a tick (its answer is empty when nothing happened), so that a
  // write shows within a little more than the tick that turns it into an event.
  async function eventsLoop() {
    try { await pollEvents(); } catch (e) { setStatus(`cannot read the engine: ${e.message || e}`, true); }
    setTimeout(eventsLoop, Math.min(1000, Math.max(250, state.tickSeconds * 250)));
  }

  async function runsLoop() {
    try { await pollRuns(); } catch { $("runs").hidden = true; }
    setTimeout(runsLoop, state.runsShown ? Math.max(1000, state.tickSeconds * 1000) : 10000);
  }

  poll();
  eventsLoop();
  runsLoop();
  faultsLoop();
})();
