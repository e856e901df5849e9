// report.js: draws the charts of an `hwemu report` (engine/telemetry/report.c writes the page:
// its tables, window.REPORT with each run's data, uPlot and this file, all inline). After drawing,
// #drawn says what each chart drew (its series and the canvas's painted pixels) for the tests.
(function () {
  "use strict";
  const runs = window.REPORT || [];
  const colors = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"];
  const color = (i) => colors[i % colors.length];
  const root = document.getElementById("charts");
  const made = [];

  function chart(title, xlabel, ylabel, data, series, opts) {
    const h = document.createElement("h2");
    h.textContent = title;
    const div = document.createElement("div");
    div.className = "chart";
    root.appendChild(h);
    root.appendChild(div);
    const o = Object.assign({
      width: Math.min(1000, (document.body.clientWidth || 1000) - 40), height: 300,
      scales: { x: { time: false } },
      axes: [{ label: xlabel }, { label: ylabel, size: 90 }],
      series: [{ label: xlabel }].concat(series),
    }, opts || {});
    const u = new uPlot(o, data, div);
    made.push({ title: title, u: u, colors: series.map((s) => s.stroke) });
  }
  const points = (label, i) => ({ label: label, stroke: color(i), fill: color(i), paths: () => null,
                                  points: { show: true, size: 10, fill: color(i) } });
  const line = (label, i) => ({ label: label, stroke: color(i), width: 2, spanGaps: true });

  // energy against makespan, one point per run
  {
    const xs = [...new Set(runs.map((r) => r.makespanSec))].sort((a, b) => a - b);
    const data = [xs].concat(runs.map((r) => xs.map((x) => (x === r.makespanSec ? r.energyJoules : null))));
    chart("Energy against makespan", "makespan (s)", "energy (J)", data, runs.map((r, i) => points(r.name, i)));
  }
  // the run's course: power, cumulative energy and throttling over time
  const withCourse = runs.filter((r) => r.t.length);
  if (withCourse.length) {
    const joined = (key) => uPlot.join(withCourse.map((r) => [r.t, r[key]]));
    chart("Cluster power over time", "emulated time (s)", "power (W)", joined("power"),
          withCourse.map((r, i) => line(r.name, i)));
    chart("Cumulative energy over time", "emulated time (s)", "energy (J)", joined("energy"),
          withCourse.map((r, i) => line(r.name, i)));
    chart("Throttling over time (packages and GPUs whose power a cap sets)", "emulated time (s)", "throttled",
          joined("throttled"), withCourse.map((r, i) => line(r.name, i)));
  }
  // energy by class
  {
    const names = ["standard", "performance", "idle"];
    chart("Energy by class (x: 0 standard, 1 performance, 2 idle)", "class", "energy (J)",
          [[0, 1, 2]].concat(runs.map((r) => r.classes)), runs.map((r, i) => points(r.name, i)),
          { axes: [{ label: "class", values: (u, v) => v.map((x) => names[x] || "") }, { label: "energy (J)", size: 90 }] });
  }
  // completion-time distributions: the completion time at each percentile, per class and run
  {
    const q = Array.from({ length: 101 }, (_, k) => k);
    const data = [q], series = [];
    runs.forEach((r, i) => ["standard", "performance"].forEach((c, k) => {
      if (r.completion[c] && r.completion[c].length) {
        data.push(r.completion[c]);
        series.push(Object.assign(line(r.name + " " + c, i), { dash: k ? [6, 4] : undefined }));
      }
    }));
    if (series.length)
      chart("Completion time by class (percentiles)", "percentile", "completion time (s)", data, series);
  }
  // per-node energy
  {
    const nodes = [...new Set(runs.flatMap((r) => Object.keys(r.nodes)))];
    const data = [nodes.map((_, k) => k)].concat(runs.map((r) => nodes.map((n) => (n in r.nodes ? r.nodes[n] : null))));
    chart("Energy per node", "node", "energy (J)", data, runs.map((r, i) => points(r.name, i)),
          { axes: [{ label: "node", values: (u, v) => v.map((x) => nodes[x] || "") }, { label: "energy (J)", size: 90 }] });
  }

  // what was drawn, once uPlot has drawn (on the next frame): per chart the pixels of each
  // series' colour (axes and grid are grey: a series with no pixels drew nothing)
  function report() {
    const out = made.map((m) => {
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
    document.getElementById("drawn").textContent = JSON.stringify({ runs: runs.length, charts: out });
  }
  requestAnimationFrame(() => setTimeout(report, 0));
})();
