// The Gantt chart as SVG: one block per machine, nodes down, emulated time across.
//
// Each job is a <g class="job"> with its facts as data attributes (data-job-id,
// data-state, data-start, data-end, data-nodes, data-machine, data-rows: the node
// indices it is drawn on), and one rect per run of adjacent nodes.
"use strict";

(function (UI) {
  const LEFT = 70;
  const RIGHT = 14;
  const AXIS = 26;
  const HEAD = 24;
  const LANE = 13;
  const GAP = 20;
  const MIN_PLOT = 110;
  const MAX_PLOT = 380;
  const ROW_MAX = 18;
  const DENSE = 1500;

  // Tick steps in seconds, the smallest first.
  const STEPS = [
    1, 5, 10, 15, 30, 60, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200,
    86400, 172800, 604800, 2592000, 7776000, 31536000,
  ];

  function plotHeight(nodes) {
    return Math.max(MIN_PLOT, Math.min(MAX_PLOT, nodes * ROW_MAX));
  }

  // A chart of the store's machines over [t0, t1], `width` pixels wide.
  // `layouts[mi]` come from UI.layoutMachine; `matches(job)` marks found jobs (or null).
  UI.drawChart = function (store, layouts, view) {
    const { t0, t1, width, matches } = view;
    const plotW = Math.max(100, width - LEFT - RIGHT);
    const x = (t) => LEFT + ((t - t0) / (t1 - t0)) * plotW;
    const clampX = (t) => Math.max(LEFT, Math.min(LEFT + plotW, x(t)));
    const visible = (a, b) => b > t0 && a < t1;

    let height = AXIS;
    const blocks = store.machines.map((m) => {
      const lanes = (m.windows || []).length;
      const top = height;
      const plotTop = top + HEAD + lanes * LANE + (lanes > 0 ? 4 : 0);
      const plotH = plotHeight(m.nodes);
      height = plotTop + plotH + GAP;
      return { top, plotTop, plotH, rowH: plotH / m.nodes };
    });
    height = Math.max(height, AXIS + 40);

    const root = UI.svg("svg", {
      width, height, viewBox: `0 0 ${width} ${height}`, class: matches ? "finding" : null,
      "data-t0": Math.round(t0), "data-t1": Math.round(t1),
    });
    root.appendChild(defs());
    const ticks = tickTimes(t0, t1, plotW);
    drawAxis(root, ticks, x, height);

    const now = store.nowEstimate();
    let drawnJobs = 0;
    store.machines.forEach((m, mi) => {
      const b = blocks[mi];
      const g = UI.svg("g", { class: "machine", "data-machine": m.name });
      const y = (node) => b.plotTop + node * b.rowH;
      const runsRects = (parent, runs, a, e) => {
        const left = clampX(a);
        const w = Math.max(1, clampX(e) - left);
        for (let i = 0; i + 1 < runs.length; i += 2) {
          parent.appendChild(UI.svg("rect", {
            x: left.toFixed(1), y: y(runs[i]).toFixed(2), width: w.toFixed(1),
            height: Math.max(0.6, runs[i + 1] * b.rowH).toFixed(2),
          }));
        }
        return { left, w };
      };

      g.appendChild(UI.svg("text", { class: "machine-title", x: 8, y: b.top + 16 }, m.name));
      const sub = `${m.nodes} nodes · ${m.policy}${m.order ? ` (${m.order})` : ""}`;
      g.appendChild(UI.svg("text", { class: "machine-sub", x: 16 + m.name.length * 8.5, y: b.top + 16 }, sub));
      g.appendChild(UI.svg("rect", {
        class: "plot-bg", x: LEFT, y: b.plotTop, width: plotW, height: b.plotH,
      }));
      drawNodeLabels(g, store, mi, m.nodes, b);
      drawWindows(g, m, b, clampX, visible);
      drawOutOfService(g, m, b, clampX, now, t1);

      for (const r of store.reservations) {
        if (r.machine !== mi || !visible(r.start, r.end)) continue;
        const runs = r.runs.length > 0 ? r.runs : layouts[mi].reservations.get(r.id) || [];
        const rg = UI.svg("g", {
          class: "resv", "data-resv-id": r.id, "data-start": r.start, "data-end": r.end,
          "data-nodes": r.nodes, "data-rows": UI.runsText(runs),
        });
        const box = runsRects(rg, runs, r.start, r.end);
        if (box.w > 40 && runs.length > 0) {
          rg.appendChild(UI.svg("text", { x: box.left + 3, y: y(runs[0]) + 11 }, r.id));
        }
        g.appendChild(rg);
      }

      for (const job of store.jobs.values()) {
        const parts = jobRuns(job, mi, layouts[mi]);
        if (parts === null) continue;
        const end = job.state === "F" ? job.end : job.start + Math.max(job.walltime, 1);
        if (!visible(job.start, end)) continue;
        // Three shades of each state's colour, so that neighbours stand apart.
        const cls = ["job", `state-${job.state}`, `shade-${job.seq % 3}`];
        if (store.isMine(job)) cls.push("mine");
        if (layouts[mi].overlaps.has(job.seq)) cls.push("overlap");
        if (matches && matches(job)) cls.push("match");
        const jg = UI.svg("g", {
          class: cls.join(" "), "data-job-id": job.id, "data-seq": job.seq,
          "data-state": job.state, "data-start": job.start, "data-end": end,
          "data-nodes": job.nodes, "data-machine": m.name, "data-rows": UI.runsText(parts),
          "data-overlap": layouts[mi].overlaps.has(job.seq) ? "true" : null,
        });
        const box = runsRects(jg, parts, job.start, end);
        const h = parts.length >= 2 ? parts[1] * b.rowH : 0;
        if (box.w > 34 && h >= 11) {
          const label = fitText(`${job.label} ${job.name}`, box.w - 6);
          jg.appendChild(UI.svg("text", {
            x: (box.left + 3).toFixed(1), y: (y(parts[0]) + Math.min(h, 22) / 2 + 4).toFixed(1),
          }, label));
        }
        g.appendChild(jg);
        drawnJobs += 1;
      }

      if (now >= t0 && now <= t1) {
        const nx = x(now);
        const ng = UI.svg("g", { class: "now", "data-now": Math.round(now) });
        ng.appendChild(UI.svg("line", { x1: nx, x2: nx, y1: b.plotTop, y2: b.plotTop + b.plotH + 4 }));
        ng.appendChild(UI.svg("text", {
          x: nx + 3, y: b.plotTop + b.plotH + 13,
        }, store.mode === "live" ? "now" : "end"));
        g.appendChild(ng);
      }
      root.appendChild(g);
    });
    // Thousands of jobs at once are slivers: outlines would hide their colours.
    if (drawnJobs > DENSE) root.classList.add("dense");
    return root;
  };

  // The runs a job is drawn on in machine `mi`, or null if it is not drawn there.
  function jobRuns(job, mi, layout) {
    if (job.alloc) {
      const out = [];
      for (const part of job.alloc) if (part[0] === mi) out.push(...part.slice(1));
      return out.length > 0 ? out : null;
    }
    if (job.state === "Q" && job.machine === mi && job.start !== null) {
      return layout.jobs.get(job.seq) || null;
    }
    return null;
  }

  function fitText(text, px) {
    const chars = Math.floor(px / 6.2);
    if (text.length <= chars) return text;
    return chars > 2 ? `${text.slice(0, chars - 1)}…` : "";
  }

  function defs() {
    const d = UI.svg("defs");
    const hatch = (id, colour) => {
      const p = UI.svg("pattern", {
        id, width: 6, height: 6, patternUnits: "userSpaceOnUse", patternTransform: "rotate(45)",
      });
      p.appendChild(UI.svg("rect", { width: 6, height: 6, fill: colour, "fill-opacity": 0.18 }));
      p.appendChild(UI.svg("line", { x1: 0, y1: 0, x2: 0, y2: 6, stroke: colour, "stroke-width": 2.2 }));
      return p;
    };
    d.appendChild(hatch("hatch-resv", "#8e6bbf"));
    d.appendChild(hatch("hatch-closed", "#7a8694"));
    return d;
  }

  // Tick times over [t0, t1] at a step that leaves about 110 px between labels, counted
  // from the site's local midnight before t0 (steps under a day divide a day).
  function tickTimes(t0, t1, plotW) {
    const want = ((t1 - t0) / plotW) * 110;
    const step = STEPS.find((s) => s >= want) || STEPS[STEPS.length - 1];
    let t = t0 - UI.localSecondOfDay(t0);
    if (step < 86400) t += Math.floor((t0 - t) / step) * step;
    const times = [];
    for (let k = 0; t <= t1 && k < 2000; k++, t += step) if (t >= t0) times.push(t);
    return { step, times };
  }

  function drawAxis(root, ticks, x, height) {
    const axis = UI.svg("g", { class: "axis" });
    for (const t of ticks.times) {
      const tx = x(t);
      axis.appendChild(UI.svg("line", { x1: tx, x2: tx, y1: AXIS - 6, y2: height - GAP + 4 }));
      axis.appendChild(UI.svg("text", { x: tx + 3, y: AXIS - 10 }, UI.formatTick(t, ticks.step)));
    }
    root.appendChild(axis);
  }

  function drawNodeLabels(g, store, mi, nodes, b) {
    const axis = UI.svg("g", { class: "nodes-axis" });
    const every = Math.max(1, Math.ceil(13 / b.rowH));
    for (let n = 0; n < nodes; n += every) {
      axis.appendChild(UI.svg("text", {
        x: LEFT - 6, y: (b.plotTop + (n + 0.5) * b.rowH + 4).toFixed(1), "text-anchor": "end",
      }, store.nodeName(mi, n)));
    }
    g.appendChild(axis);
  }

  // Closed spans of each windowed or stopped queue: a lane above the plot, named,
  // and a light band over the plot.
  function drawWindows(g, m, b, clampX, visible) {
    (m.windows || []).forEach((w, i) => {
      const laneY = b.top + HEAD + i * LANE;
      const cg = UI.svg("g", { class: "closed", "data-queue": w.queue });
      cg.appendChild(UI.svg("text", { x: LEFT - 6, y: laneY + 10, "text-anchor": "end" }, w.queue));
      for (const [a, e] of w.closed) {
        if (!visible(a, e)) continue;
        const left = clampX(a);
        const wpx = Math.max(1, clampX(e) - left);
        cg.appendChild(UI.svg("rect", {
          class: "lane", x: left, y: laneY + 2, width: wpx, height: LANE - 4,
          "data-start": a, "data-end": e,
        }));
        cg.appendChild(UI.svg("rect", { class: "band", x: left, y: b.plotTop, width: wpx, height: b.plotH }));
      }
      g.appendChild(cg);
    });
  }

  // Nodes out of service, from now on.
  function drawOutOfService(g, m, b, clampX, now, t1) {
    const states = m.states || "";
    const og = UI.svg("g", { class: "out" });
    for (let n = 0; n < states.length; n++) {
      const s = states[n];
      if (s !== "o" && s !== "d") continue;
      const left = clampX(now);
      og.appendChild(UI.svg("rect", {
        class: s === "o" ? "offline" : "down", x: left, y: b.plotTop + n * b.rowH,
        width: Math.max(0, clampX(t1) - left), height: Math.max(0.6, b.rowH),
      }));
    }
    g.appendChild(og);
  }
})(window.BatchdUI);
