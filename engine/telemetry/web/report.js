// report.js: the charts of runs, drawn with uPlot, for both places that show them:
//  - `hwemu report` (engine/telemetry/report.c writes the page: its tables, window.REPORT with each
//    run's data, uPlot and this file, all inline): drawn once into #charts; after drawing, #drawn
//    says what each chart drew (its series and the canvas's painted pixels) for the tests;
//  - the live page (app.js): hwemuCharts.draw the chosen run's charts as its course grows (the
//    same charts but those only a run's end gives: energy against makespan, energy per node).
// A run: {name, classes: [standard, performance, idle] J, course: course.jsonl's lines,
// completed: {standard: [s...], performance: [s...]} (end minus submission of each completed job),
// and for the report energyJoules, makespanSec, nodes: {node: J}}.
(function () {
  "use strict";
  const colors = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"];
  const color = (i) => colors[i % colors.length];
  const stateColors = { waiting: "#ff7f0e", running: "#1f77b4", completed: "#2ca02c", stalled: "#d62728" };

  // Readable units: the data divided by the unit the largest value fits (W, kW, MW; J, kJ, MJ, GJ;
  // s, min, h); a quantity with no unit ("") as it is.
  const steps = {
    W: [[1e6, "MW"], [1e3, "kW"], [1, "W"]],
    J: [[1e9, "GJ"], [1e6, "MJ"], [1e3, "kJ"], [1, "J"]],
    s: [[3600, "h"], [60, "min"], [1, "s"]],
  };
  function unitFor(kind, arrays) {
    if (!steps[kind]) return { f: 1, name: kind };
    let max = 0;
    for (const a of arrays) for (const v of a) if (v != null && Math.abs(v) > max) max = Math.abs(v);
    const limit = kind === "s" ? 2 : 1; // hours from 2 h, minutes from 2 min: 90 s stays in seconds
    for (const [f, name] of steps[kind]) if (max >= f * limit || f === 1) return { f: f, name: name };
    return { f: 1, name: kind };
  }
  const scaled = (a, f) => a.map((v) => (v == null ? null : v / f));
  const number = (v) => (v == null ? "–" : Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 10 ? v.toFixed(1) : v.toFixed(2));

  // One run's course as columns.
  function columns(r) {
    const c = { t: [], power: [], energy: [], throttled: [], waiting: [], running: [], completed: [], stalled: [] };
    for (const l of r.course || []) {
      c.t.push(l.timeSec);
      c.power.push(l.powerWatts);
      c.energy.push(l.energyJoules ? l.energyJoules.nodes : null);
      let th = 0;
      for (const p of Object.values(l.pools || {})) th += (p.packagesThrottled || 0) + (p.gpusThrottled || 0);
      c.throttled.push(th);
      for (const s of ["waiting", "running", "completed", "stalled"]) c[s].push(l.jobs ? l.jobs[s] : null);
    }
    return c;
  }

  // Nearest rank: the smallest value with at least q of them at or below it (sorted: ascending).
  function quantile(sorted, q) {
    const k = Math.ceil(q * sorted.length) - 1;
    return sorted[Math.max(0, Math.min(sorted.length - 1, k))];
  }

  // The charts of runs, as specs: {title, x: [label, kind], y: [label, kind], data, series, axes}.
  function specs(runs, live) {
    const out = [];
    const line = (label, i) => ({ label: label, stroke: color(i), width: 2, spanGaps: true });
    const points = (label, i) => ({ label: label, stroke: color(i), fill: color(i), paths: () => null,
                                    points: { show: true, size: 10, fill: color(i) } });
    if (!live) { // energy against makespan, one point per run
      const xs = [...new Set(runs.map((r) => r.makespanSec))].sort((a, b) => a - b);
      out.push({ title: "Energy against makespan", x: ["makespan", "s"], y: ["energy", "J"],
                 data: [xs].concat(runs.map((r) => xs.map((x) => (x === r.makespanSec ? r.energyJoules : null)))),
                 series: runs.map((r, i) => points(r.name, i)) });
    }
    // the run's course: power, cumulative energy, jobs by state and throttling over time
    const withCourse = runs.filter((r) => r.course && r.course.length);
    if (withCourse.length) {
      const cols = withCourse.map(columns);
      const joined = (key) => (cols.length === 1 ? [cols[0].t, cols[0][key]] : uPlot.join(cols.map((c) => [c.t, c[key]])));
      const lines = withCourse.map((r, i) => line(r.name, i));
      out.push({ title: "Cluster power over time", x: ["emulated time", "s"], y: ["power", "W"], data: joined("power"), series: lines });
      out.push({ title: "Cumulative energy over time", x: ["emulated time", "s"], y: ["energy", "J"], data: joined("energy"),
                 series: lines });
      const states = ["waiting", "running", "completed", "stalled"];
      const data = uPlot.join(cols.flatMap((c) => states.map((s) => [c.t, c[s]])));
      out.push({ title: "Jobs by state over time", x: ["emulated time", "s"], y: ["jobs", ""], data: data,
                 series: withCourse.flatMap((r, i) => states.map((s) => Object.assign({ label: (runs.length > 1 ? r.name + " " : "") + s,
                   stroke: stateColors[s], width: 2, spanGaps: true }, i ? { dash: [6, 4] } : {}))) });
      out.push({ title: "Throttling over time (packages and GPUs whose power a cap sets)", x: ["emulated time", "s"],
                 y: ["throttled", ""], data: joined("throttled"), series: lines });
    }
    { // energy by class
      const names = ["standard", "performance", "idle"];
      out.push({ title: "Energy by class (x: 0 standard, 1 performance, 2 idle)", x: ["class", ""], y: ["energy", "J"],
                 data: [[0, 1, 2]].concat(runs.map((r) => r.classes)), series: runs.map((r, i) => points(r.name, i)),
                 xvalues: (u, v) => v.map((x) => names[x] || "") });
    }
    { // completion-time distributions: the completion time at each percentile, per class and run
      const q = Array.from({ length: 101 }, (_, k) => k);
      const data = [q], series = [];
      runs.forEach((r, i) => ["standard", "performance"].forEach((c, k) => {
        const v = ((r.completed || {})[c] || []).slice().sort((a, b) => a - b);
        if (v.length) {
          data.push(q.map((p) => quantile(v, p / 100)));
          series.push(Object.assign(line(r.name + " " + c, i), k ? { dash: [6, 4] } : {}));
        }
      }));
      if (series.length)
        out.push({ title: "Completion time by class (percentiles)", x: ["percentile", ""], y: ["completion time", "s"],
                   data: data, series: series });
    }
    if (!live) { // per-node energy
      const nodes = [...new Set(runs.flatMap((r) => Object.keys(r.nodes || {})))];
      out.push({ title: "Energy per node", x: ["node", ""], y: ["energy", "J"],
                 data: [nodes.map((_, k) => k)].concat(runs.map((r) => nodes.map((n) => (n in r.nodes ? r.nodes[n] : null)))),
                 series: runs.map((r, i) => points(r.name, i)), xvalues: (u, v) => v.map((x) => nodes[x] || "") });
    }
    return out;
  }

  // Draws runs' charts into root; prev: what an earlier call returned there (its charts take the
  // new data when they are the same charts in the same units, else they are drawn again).
  // Returns {charts: [{title, u, colors, key}]}.
  function draw(root, runs, opts) {
    opts = opts || {};
    const prev = opts.prev;
    const width = opts.width || Math.min(1000, (document.body.clientWidth || 1000) - 40);
    const made = specs(runs, !!opts.live).map((s) => {
      const xu = unitFor(s.x[1], [s.data[0]]), yu = unitFor(s.y[1], s.data.slice(1));
      const label = (l, u) => (u.name ? `${l} (${u.name})` : l);
      return Object.assign(s, { xu: xu, yu: yu, key: [s.title, xu.name, yu.name, s.series.map((x) => x.label).join("|")].join("/"),
                                scaledData: [scaled(s.data[0], xu.f)].concat(s.data.slice(1).map((a) => scaled(a, yu.f))),
                                xlabel: label(s.x[0], xu), ylabel: label(s.y[0], yu) });
    });
    if (prev && prev.charts.length === made.length && prev.charts.every((c, k) => c.key === made[k].key)) {
      prev.charts.forEach((c, k) => c.u.setData(made[k].scaledData));
      return prev;
    }
    if (prev) prev.charts.forEach((c) => c.u.destroy());
    root.textContent = "";
    const charts = made.map((s) => {
      const h = document.createElement(opts.heading || "h2");
      h.textContent = s.title;
      const div = document.createElement("div");
      div.className = "chart";
      let into = root;
      if (opts.box) { // each chart in its own box (the page's grid of them)
        into = document.createElement("div");
        into.className = opts.box;
        root.appendChild(into);
      }
      into.appendChild(h);
      into.appendChild(div);
      const yunit = s.yu.name ? " " + s.yu.name : "";
      const u = new uPlot({
        width: width, height: opts.height || 300,
        scales: { x: { time: false } },
        axes: [Object.assign({ label: s.xlabel }, s.xvalues ? { values: s.xvalues } : {}), { label: s.ylabel, size: 90 }],
        series: [{ label: s.xlabel, value: s.xvalues ? (u, v) => (s.xvalues(u, [v])[0] || "–") : (u, v) => number(v) }]
          .concat(s.series.map((x) => Object.assign({ value: (u, v) => number(v) + (v == null ? "" : yunit) }, x))),
      }, s.scaledData, div);
      return { title: s.title, u: u, colors: s.series.map((x) => x.stroke), key: s.key };
    });
    return { charts: charts };
  }

  // What was drawn: per chart the pixels of each series' colour (axes and grid are grey: a series
  // with no pixels drew nothing). Call once uPlot has drawn (on the next frame).
  function drawn(d) {
    return d.charts.map((m) => {
      const c = m.u.ctx.canvas;
      const px = m.u.ctx.getImageData(0, 0, c.width, c.height).data;
      const rgb = m.colors.map((h) => [1, 3, 5].map((k) => parseInt(h.substr(k, 2), 16)));
      const counts = rgb.map(() => 0);
      for (let k = 0; k < px.length; k += 4) {
        if (px[k + 3] < 200) continue;
        rgb.forEach((c, s) => {
          if (Math.abs(px[k] - c[0]) + Math.abs(px[k + 1] - c[1]) + Math.abs(px[k + 2] - c[2]) < 24) counts[s]++;
        });
      }
      return { title: m.title, seriesPixels: counts };
    });
  }

  window.hwemuCharts = { draw: draw, drawn: drawn, columns: columns, unitFor: unitFor };

  if (window.REPORT) { // in a report
    const runs = window.REPORT;
    const d = draw(document.getElementById("charts"), runs);
    requestAnimationFrame(() => setTimeout(() => {
      document.getElementById("drawn").textContent = JSON.stringify({ runs: runs.length, charts: drawn(d) });
    }, 0));
  }
})();
