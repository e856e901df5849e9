// The page at GET / in a real browser: Debian's chromium, headless, driven by playwright-core.
//   node page_test.js URL HWEMU ROOT NODE TICK_SECONDS ARTIFACT_DIR
// URL is a running `hwemu serve` on tests/specs/web.yaml (1,000 nodes) with ROOT as its root; NODE
// is a node with an intel-rapl:0 zone (the write goes through the shim, `hwemu exec`). Prints one
// line per failed check and "N passed, N failed" last; exits 1 on any failure.
// Expected values come from the engine's own JSON routes (/debug/nodes, /debug/cluster), read
// by this script over HTTP, never from the page.
"use strict";
const { chromium } = require("playwright-core");
const { execFile } = require("child_process");
const fs = require("fs");
const os = require("os");
const path = require("path");

const [url, hwemu, root, node, tickArg, artifacts] = process.argv.slice(2);
const tick = Number(tickArg);
let passed = 0, failed = 0;
const check = (ok, what) => { if (ok) passed++; else { failed++; console.log(`FAIL: ${what}`); } };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const getJSON = async (p) => (await fetch(url + p)).json();
const zone = "/sys/class/powercap/intel-rapl:0/constraint_0_power_limit_uw";
const zoneTail = "intel-rapl:0/constraint_0_power_limit_uw"; // events name the file by its sysfs device path

// A write through the shim, as an agent's shell would make it; resolves with the exit status.
function shimWrite(value) {
  return new Promise((resolve) => {
    execFile(hwemu, ["exec", "--node", node, "--root", root, "--", "sh", "-c", `echo ${value} > ${zone}`],
      { timeout: 10000 }, (err) => resolve(err ? err.code : 0));
  });
}

// The number a card shows ("417.17 kW", "1,000"), in its base unit.
function shown(text) {
  const m = /^([\d,.]+)\s*(kW|W)?/.exec(text.trim());
  if (!m) return NaN;
  return Number(m[1].replace(/,/g, "")) * (m[2] === "kW" ? 1000 : 1);
}

async function main() {
  const userDir = fs.mkdtempSync(path.join(os.tmpdir(), "hwemu-chromium-"));
  const ctx = await chromium.launchPersistentContext(userDir, {
    executablePath: process.env.HWEMU_CHROMIUM || "/usr/bin/chromium",
    headless: true,
    viewport: { width: 1400, height: 1000 },
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
           "--disable-component-update", "--disable-sync"],
  });
  try {
    const page = ctx.pages()[0] || (await ctx.newPage());
    const errors = [];
    page.on("pageerror", (e) => errors.push(`page error: ${e.message}`));
    page.on("console", (m) => {
      if (m.type() !== "error") return;
      // The page asks GET /runs to learn whether a workload run is active: this engine has no
      // such route, and the browser logs its 404. Nothing else may be an error.
      const where = (m.location() && m.location().url) || "";
      if (/status of 404/.test(m.text()) && /\/runs$/.test(where)) return;
      errors.push(`console error: ${m.text()} (${where})`);
    });
    const requests = [];
    page.on("request", (r) => requests.push(r.url()));

    await page.goto(url + "/", { waitUntil: "load" });
    await page.waitForSelector("#stat-nodes[data-value]", { timeout: 10000 });

    // The node count and the cluster power the page shows are /debug/nodes' (the same snapshot).
    const nodes = await getJSON("/debug/nodes?limit=0");
    check(Number(await page.getAttribute("#stat-nodes", "data-value")) === nodes.count,
      `node count shown ${await page.getAttribute("#stat-nodes", "data-value")}, /debug/nodes says ${nodes.count}`);
    check(shown(await page.textContent("#stat-nodes")) === nodes.count, `node count text "${await page.textContent("#stat-nodes")}"`);
    let compared = false;
    for (let i = 0; i < 20 && !compared; i++) {
      const [seq, value, text] = await page.evaluate(() => {
        const el = document.getElementById("stat-power");
        return [Number(el.dataset.seq), Number(el.dataset.value), el.textContent];
      });
      const d = await getJSON("/debug/nodes?limit=0");
      if (d.seq !== seq) { await sleep(150); continue; } // a tick came between the two reads
      compared = true;
      check(Math.abs(value - d.totals.powerWatts) < 1e-6 * Math.max(1, d.totals.powerWatts),
        `cluster power shown ${value} W, /debug/nodes totals ${d.totals.powerWatts} W (snapshot ${seq})`);
      const unit = /kW/.test(text) ? 10 : 0.1; // the text's last digit
      check(Math.abs(shown(text) - d.totals.powerWatts) <= unit / 2 + 1e-9, `cluster power text "${text}" for ${d.totals.powerWatts} W`);
    }
    check(compared, "never read the page and /debug/nodes at the same snapshot");

    // The cluster chart draws: its canvas has pixels of the CPU packages' line colour (#2563eb).
    await page.waitForFunction(() => document.querySelectorAll("#chart-cluster canvas").length > 0, null, { timeout: 10000 });
    await sleep(2.2 * tick * 1000); // at least two points
    const lit = await page.evaluate(() => {
      const c = document.querySelector("#chart-cluster canvas");
      const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
      let line = 0, ink = 0;
      for (let i = 0; i < d.length; i += 4) {
        if (d[i + 3] > 0) ink++;
        if (Math.abs(d[i] - 37) < 40 && Math.abs(d[i + 1] - 99) < 40 && Math.abs(d[i + 2] - 235) < 40 && d[i + 3] > 128) line++;
      }
      return { line, ink, w: c.width, h: c.height };
    });
    check(lit.line > 50, `cluster chart: ${lit.line} pixels of the CPU line (${lit.ink} inked of ${lit.w}x${lit.h})`);
    const nodeChart = await page.evaluate(() => document.querySelectorAll("#chart-node canvas").length);
    check(nodeChart === 1, "the chosen node's chart is drawn");

    // A write through the shim appears in the event feed within two ticks; a refused one with its errno.
    // (timed from the write's end: starting `hwemu exec` on a loaded host is not the feed's delay)
    check((await shimWrite(50000000)) === 0, `hwemu exec ... echo 50000000 > ${zone} failed`);
    const t0 = Date.now();
    const accepted = page.waitForFunction(([n, z]) => [...document.querySelectorAll("#event-feed li")].some((li) =>
      /write\.(accepted|normalized)$/.test(li.dataset.event) && li.textContent.includes(n) && li.textContent.includes(z) &&
      li.textContent.includes("50000000")), [node, zoneTail], { timeout: 10000, polling: 50 }).then(() => Date.now() - t0, () => -1);
    const took = await accepted;
    check(took >= 0, "the accepted write never appeared in the event feed");
    check(took >= 0 && took <= 2 * tick * 1000 + 300, `the accepted write took ${took} ms to appear (two ticks: ${2 * tick * 1000} ms)`);
    console.log(`write to feed: ${took} ms (tick ${tick * 1000} ms)`);
    const bad = await shimWrite("12ab");
    check(bad !== 0, "the refused write (12ab) exited 0");
    const rejected = await page.waitForFunction((n) => [...document.querySelectorAll("#event-feed li")].some((li) =>
      li.dataset.event === "joulie.sim.write.rejected" && li.textContent.includes(n) && li.textContent.includes("EINVAL")),
      node, { timeout: 2 * tick * 1000 + 2000 }).then(() => true, () => false);
    check(rejected, "the refused write is not in the feed as rejected EINVAL");
    // A GPU limit written on the idle node without persistence mode goes back to its default: a cap reset.
    await new Promise((resolve) => execFile(hwemu, ["write", "--node", "idle-0", "--root", root,
      "state/nvml/gpu2/power_limit_mw", "300000"], { timeout: 10000 }, resolve));
    const reset = await page.waitForFunction(() => [...document.querySelectorAll("#event-feed li")].some((li) =>
      li.dataset.event === "joulie.sim.cap.reset" && li.textContent.includes("idle-0") && li.textContent.includes("300000 → 700000")),
      null, { timeout: 2 * tick * 1000 + 2000 }).then(() => true, () => false);
    check(reset, "the idle GPU's limit reset (300000 → 700000) is not in the feed as a cap reset");
    // ... and in the node's row as its last agent write
    await page.fill("#filter", node);
    const row = await page.waitForFunction((n) => {
      const tr = document.querySelector(`#node-table tbody tr[data-node="${n}"]`);
      return tr && /rejected EINVAL/.test(tr.textContent) && tr.textContent;
    }, node, { timeout: 5000 }).then((h) => h.jsonValue(), () => "");
    check(row !== "", `the table's last agent write of ${node} is not the rejected write`);
    await page.fill("#filter", "");

    // A hardware fault (hwemu fault add) shows in the faults panel, active, with its node.
    await new Promise((resolve) => execFile(hwemu, ["fault", "add", "--addr", new URL(url).host, "--kind", "hwmon-error",
      "--node", node, "--id", "page-fault"], { timeout: 10000 }, resolve));
    const faultRow = await page.waitForFunction((n) => {
      const tr = [...document.querySelectorAll("#fault-table tbody tr")].find((r) => r.textContent.includes("page-fault"));
      return tr && !document.getElementById("faults").hidden && /hwmon-error/.test(tr.textContent) &&
        tr.textContent.includes(n) && /active/.test(tr.textContent) && tr.textContent;
    }, node, { timeout: 4 * tick * 1000 + 3000 }).then((h) => h.jsonValue(), () => "");
    check(faultRow !== "", "the fault page-fault is not in the faults panel as active on its node");

    fs.mkdirSync(artifacts, { recursive: true });
    await page.waitForFunction(() => /of 1,000$/.test(document.getElementById("page-info").textContent), null, { timeout: 5000 });
    await page.screenshot({ path: path.join(artifacts, "page.png"), fullPage: true });

    // The table at 1,000 nodes: pages, sorts by power, filters.
    const info = () => page.textContent("#page-info");
    const names = () => page.$$eval("#node-table tbody tr", (rs) => rs.map((r) => r.dataset.node));
    const size = Number(await page.inputValue("#page-size"));
    check((await info()) === `1–${size} of 1,000`, `first page "${await info()}"`);
    const page1 = await names();
    await page.click("#next");
    await page.waitForFunction((s) => document.getElementById("page-info").textContent === `${s + 1}–${2 * s} of 1,000`, size, { timeout: 5000 }).catch(() => {});
    check((await info()) === `${size + 1}–${2 * size} of 1,000`, `second page "${await info()}"`);
    const page2 = await names();
    const spec = (await getJSON(`/debug/nodes?offset=${size}&limit=${size}`)).nodes.map((n) => n.node);
    check(JSON.stringify(page2) === JSON.stringify(spec), `second page rows ${page2.slice(0, 3)}... are not /debug/nodes' ${spec.slice(0, 3)}...`);
    check(!page2.some((n) => page1.includes(n)), "the second page repeats rows of the first");
    await page.click('#node-table th[data-sort="power"]');
    await page.waitForFunction(() => /desc/.test(document.querySelector('#node-table th[data-sort="power"]').className) &&
      /^1–/.test(document.getElementById("page-info").textContent), null, { timeout: 5000 }).catch(() => {});
    const powers = await page.$$eval("#node-table tbody tr", (rs) => rs.map((r) => Number(r.dataset.power)));
    check(powers.length === size && powers.every((p, i) => i === 0 || powers[i - 1] >= p), `power descending: ${powers.slice(0, 6)}...`);
    const top = (await getJSON("/debug/nodes?sort=power&order=desc&limit=1")).nodes[0];
    const firstPool = await page.textContent("#node-table tbody tr td:nth-child(2)");
    check(firstPool === top.pool, `the most powerful row is of pool ${firstPool}, /debug/nodes says ${top.pool}`);
    await page.click('#node-table th[data-sort="power"]');
    await page.waitForFunction(() => !/desc/.test(document.querySelector('#node-table th[data-sort="power"]').className), null, { timeout: 5000 }).catch(() => {});
    await sleep(300);
    const up = await page.$$eval("#node-table tbody tr", (rs) => rs.map((r) => Number(r.dataset.power)));
    check(up.length === size && up.every((p, i) => i === 0 || up[i - 1] <= p), `power ascending: ${up.slice(0, 6)}...`);
    await page.fill("#filter", "mid");
    await page.waitForFunction(() => document.getElementById("page-info").dataset.matched === "332", null, { timeout: 5000 }).catch(() => {});
    check((await info()).endsWith("of 332 (1,000 nodes)"), `filter "mid": "${await info()}"`);
    const pools = await page.$$eval("#node-table tbody tr td:nth-child(2)", (ts) => [...new Set(ts.map((t) => t.textContent))]);
    check(JSON.stringify(pools) === '["mid"]', `filter "mid" shows pools ${pools}`);

    // No network but the engine's own address.
    const origin = new URL(url).origin;
    const foreign = requests.filter((r) => !r.startsWith(origin + "/") && !r.startsWith("data:"));
    check(foreign.length === 0, `requests elsewhere than the engine: ${foreign.slice(0, 3)}`);

    // The workload-run section: hidden while GET /runs is not 200 (a 404 answered here by the
    // browser, as an engine without the run API would) ...
    await page.route("**/runs", (r) => r.fulfill({ status: 404, contentType: "application/json",
      body: JSON.stringify({ error: "no such route" }) }));
    const answered = page.waitForResponse((r) => r.url().endsWith("/runs"), { timeout: 5000 }).catch(() => null);
    await page.reload({ waitUntil: "load" });
    await answered;
    await page.waitForTimeout(200);
    check(await page.evaluate(() => document.getElementById("runs").hidden), "the runs section shows with no GET /runs");
    await page.unroute("**/runs");
    await page.reload({ waitUntil: "load" });

    // A workload run (POST /runs) charted live: the run's charts draw while it runs, a job's
    // events name the job, and once it ended the numbers shown are its course.jsonl's last line and
    // summary.json's, every line of the course is charted, and the report link opens the report
    // `hwemu report` writes of its directory (the same bytes).
    const trace = [0, 1, 2, 3, 4, 5].map((k) => JSON.stringify({ type: "job", jobId: `page-job-${k}`, submitTimeOffsetSec: k,
      intentClass: k % 2 ? "performance" : "standard", podTemplate: { requests: { cpu: "4" } }, work: { cpuUnits: 16 },
      sensitivity: { cpu: 1 }, workloadClass: { cpu: "cpu.compute_bound" } })).join("\n") + "\n";
    const posted = await fetch(url + "/runs", { method: "POST", body: trace });
    const runId = (await posted.json()).runId;
    check(posted.status === 201 && /^run-/.test(runId || ""), `POST /runs answered ${posted.status} ${runId}`);
    const runDir = path.join(root, "runs", runId || "none");
    const drawnNow = () => page.evaluate(() => {
      const t = document.getElementById("run-drawn").textContent;
      return t ? JSON.parse(t) : null;
    });
    const live = await page.waitForFunction((id) => {
      const t = document.getElementById("run-drawn").textContent;
      const d = t && JSON.parse(t);
      return d && d.runId === id && d.lines >= 2 && document.getElementById("run-state").textContent === "running" && t;
    }, runId, { timeout: 20000, polling: 100 }).then((h) => h.jsonValue().then(JSON.parse), () => null);
    check(live !== null, `the running run's charts never drew (#run-drawn: ${JSON.stringify(await drawnNow())})`);
    if (live) {
      const byTitle = Object.fromEntries(live.charts.map((c) => [c.title.split(" (")[0], c.seriesPixels]));
      for (const t of ["Cluster power over time", "Cumulative energy over time", "Jobs by state over time"])
        check(byTitle[t] && byTitle[t].some((n) => n > 0), `while running, "${t}" drew nothing: ${JSON.stringify(byTitle[t])}`);
      check(await page.$$eval("#run-charts canvas", (cs) => cs.length) === live.charts.length, "a canvas per run chart");
    }
    const jobEvent = await page.waitForFunction(() => [...document.querySelectorAll("#event-feed li")].some((li) =>
      li.dataset.event === "joulie.sim.job.completed" && /page-job-\d/.test(li.textContent)), null,
      { timeout: 30000 }).then(() => true, () => false);
    check(jobEvent, "no job completed event naming its job (page-job-N) in the feed");
    let st = null;
    for (let i = 0; i < 120 && !(st && st.state === "completed"); i++) {
      await sleep(250);
      st = await getJSON(`/runs/${runId}`);
    }
    check(st && st.state === "completed", `the run did not complete: ${JSON.stringify(st)}`);
    const course = fs.readFileSync(path.join(runDir, "course.jsonl"), "utf8").trim().split("\n").map(JSON.parse);
    const summary = JSON.parse(fs.readFileSync(path.join(runDir, "summary.json"), "utf8"));
    const jobs = fs.readFileSync(path.join(runDir, "jobs.jsonl"), "utf8").trim().split("\n").map(JSON.parse);
    const lastLine = course[course.length - 1];
    const fin = await page.waitForFunction((n) => {
      const d = document.getElementById("run-detail");
      const t = document.getElementById("run-drawn").textContent;
      return document.getElementById("run-state").textContent === "completed" && d.dataset.lines === String(n) && t &&
        JSON.parse(t).lines === n && t;
    }, course.length, { timeout: 10000 }).then((h) => h.jsonValue().then(JSON.parse), () => null);
    check(fin !== null, `the page did not chart the ended run's ${course.length} course lines: ${await page.getAttribute("#run-detail", "data-lines")}`);
    const val = (id) => page.getAttribute(`#${id}`, "data-value").then(Number);
    check(await val("run-energy") === lastLine.energyJoules.nodes && lastLine.energyJoules.nodes === summary.energyJoules.nodes,
      `energy shown ${await val("run-energy")} J, course.jsonl's last line ${lastLine.energyJoules.nodes}, summary.json ${summary.energyJoules.nodes}`);
    const energyText = await page.textContent("#run-energy");
    const eu = /^([\d,.]+) (kWh|kJ|J)$/.exec(energyText); // app.js's joules(): kWh to 3 decimals, kJ and J to 1
    const [per, last] = eu ? { kWh: [3.6e6, 0.001], kJ: [1e3, 0.1], J: [1, 0.1] }[eu[2]] : [NaN, 0];
    check(eu && Math.abs(Number(eu[1].replace(/,/g, "")) * per - summary.energyJoules.nodes) <= (last / 2) * per * (1 + 1e-9),
      `energy text "${energyText}" for ${summary.energyJoules.nodes} J`);
    check(await val("run-jobs") === summary.jobs.completed && summary.jobs.completed === 6,
      `completed shown ${await val("run-jobs")}, summary.json ${summary.jobs.completed}`);
    check(await val("run-time") === lastLine.timeSec, `time shown ${await val("run-time")}, course.jsonl ${lastLine.timeSec}`);
    check(!/\d{6,}\.\d/.test(await page.textContent("#runs")), `a raw number in the runs section: ${(await page.textContent("#runs")).slice(0, 200)}`);
    const rowEnergy = await page.getAttribute(`#run-table tr[data-run="${runId}"]`, "data-energy");
    check(Number(rowEnergy) === summary.energyJoules.nodes, `the table's energy ${rowEnergy}, summary.json ${summary.energyJoules.nodes}`);
    if (fin) {
      const byTitle = Object.fromEntries(fin.charts.map((c) => [c.title.split(" (")[0], c.seriesPixels]));
      const want = ["Cluster power over time", "Cumulative energy over time", "Jobs by state over time", "Throttling over time",
                    "Energy by class", "Completion time by class"];
      check(JSON.stringify(Object.keys(byTitle)) === JSON.stringify(want), `run charts ${Object.keys(byTitle)}, expected ${want}`);
      for (const t of ["Cluster power over time", "Cumulative energy over time", "Energy by class", "Completion time by class"])
        check(byTitle[t] && byTitle[t].length && byTitle[t].every((n) => n > 0), `"${t}": a series drew nothing: ${JSON.stringify(byTitle[t])}`);
      // the completion chart: one series per class with completed jobs (jobs.jsonl)
      const classes = new Set(jobs.filter((j) => j.state === "completed").map((j) => j.class));
      check(byTitle["Completion time by class"] && byTitle["Completion time by class"].length === classes.size,
        `completion series ${JSON.stringify(byTitle["Completion time by class"])} for classes ${[...classes]}`);
      const jb = byTitle["Jobs by state over time"] || [];
      check(jb.length === 4 && jb[1] > 0 && jb[2] > 0, `jobs by state: running and completed drew nothing: ${JSON.stringify(jb)}`);
    }
    await page.screenshot({ path: path.join(artifacts, "runs.png"), fullPage: true });
    // the report link: GET /runs/<runId>/report, the bytes `hwemu report` writes of the run's directory
    const href = await page.getAttribute("#run-report", "href");
    check(href === `/runs/${runId}/report` && !(await page.evaluate(() => document.getElementById("run-report").hidden)),
      `report link ${href}`);
    const served = Buffer.from(await (await fetch(url + href)).arrayBuffer());
    const written = path.join(artifacts, "report.html");
    const rc = await new Promise((resolve) => execFile(hwemu, ["report", runDir, "--out", written], { timeout: 30000 },
      (err) => resolve(err ? err.code : 0)));
    check(rc === 0 && Buffer.compare(served, fs.readFileSync(written)) === 0,
      `GET ${href} (${served.length} bytes) is not what hwemu report ${runDir} writes (rc ${rc})`);
    const [tab] = await Promise.all([ctx.waitForEvent("page"), page.click("#run-report")]);
    const opened = await tab.waitForFunction(() => document.getElementById("drawn") && document.getElementById("drawn").textContent,
      null, { timeout: 10000 }).then((h) => h.jsonValue().then(JSON.parse), () => null);
    check(opened && opened.runs === 1 && opened.charts.length >= 7, `the opened report drew ${JSON.stringify(opened)}`);
    await tab.close();

    check(errors.length === 0, `the browser reported: ${errors.slice(0, 5).join(" | ")}`);
  } finally {
    await ctx.close();
    fs.rmSync(userDir, { recursive: true, force: true });
  }
}

main().catch((e) => { failed++; console.log(`FAIL: ${e.stack || e}`); }).finally(() => {
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
});
