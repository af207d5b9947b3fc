// Where the chart draws what has no nodes yet: waiting jobs at their planned starts,
// and reservations that have not begun.
//
// The daemon plans counts of nodes, not which ones. Taking the planned items in order
// of start, each gets nodes free at its start (the lowest-numbered run of free nodes
// wide enough, else the lowest free ones): since the plan never has more nodes busy
// than are in service, nodes free at a start are always enough (interval colouring in
// order of start). Nodes out of service take no new item. An item that still finds too
// few (a plan the page cannot follow) is drawn on the nodes that free first, marked.
"use strict";

(function (UI) {
  // Node indices as runs: first, count, first, count, ...
  function runsOf(nodes) {
    const sorted = nodes.slice().sort((a, b) => a - b);
    const out = [];
    for (const n of sorted) {
      const k = out.length;
      if (k > 0 && out[k - 2] + out[k - 1] === n) out[k - 1] += 1;
      else out.push(n, 1);
    }
    return out;
  }
  UI.runsOf = runsOf;

  // Every node of runs, as a list.
  UI.nodesOf = function (runs) {
    const out = [];
    for (let i = 0; i + 1 < runs.length; i += 2) {
      for (let n = runs[i]; n < runs[i] + runs[i + 1]; n++) out.push(n);
    }
    return out;
  };

  // "0-3,8": node runs as text, for data attributes.
  UI.runsText = function (runs) {
    const parts = [];
    for (let i = 0; i + 1 < runs.length; i += 2) {
      const first = runs[i];
      const last = first + runs[i + 1] - 1;
      parts.push(first === last ? String(first) : `${first}-${last}`);
    }
    return parts.join(",");
  };

  function pick(free, out, start, width) {
    const n = free.length;
    let runStart = -1;
    for (let i = 0; i < n; i++) {
      if (!out[i] && free[i] <= start) {
        if (runStart < 0) runStart = i;
        if (i - runStart + 1 >= width) {
          const nodes = [];
          for (let k = runStart; k <= i; k++) nodes.push(k);
          return { nodes, overlap: false };
        }
      } else {
        runStart = -1;
      }
    }
    const nodes = [];
    for (let i = 0; i < n && nodes.length < width; i++) {
      if (!out[i] && free[i] <= start) nodes.push(i);
    }
    if (nodes.length >= width) return { nodes, overlap: false };
    // Too few: add the nodes that free first (a plan the page cannot follow).
    const taken = new Set(nodes);
    const rest = [];
    for (let i = 0; i < n; i++) if (!taken.has(i)) rest.push(i);
    rest.sort((a, b) => free[a] - free[b] || a - b);
    for (const i of rest) {
      if (nodes.length >= width) break;
      nodes.push(i);
    }
    return { nodes, overlap: true };
  }

  // For machine `mi`: node runs of each waiting job with a planned start (by seq) and
  // of each reservation not begun (by id), and the seqs drawn where they overlap.
  UI.layoutMachine = function (store, mi) {
    const machine = store.machines[mi];
    const n = machine.nodes;
    const free = new Float64Array(n).fill(-Infinity);
    const out = new Uint8Array(n);
    const states = machine.states || "";
    for (let i = 0; i < n; i++) if (states[i] === "o" || states[i] === "d") out[i] = 1;
    for (const job of store.jobs.values()) {
      if (!job.alloc || job.state === "F") continue;
      const end = job.start + job.walltime;
      for (const part of job.alloc) {
        if (part[0] !== mi) continue;
        for (const node of UI.nodesOf(part.slice(1))) free[node] = Math.max(free[node], end);
      }
    }
    const items = [];
    for (const r of store.reservations) {
      if (r.machine !== mi) continue;
      if (r.runs.length > 0) {
        for (const node of UI.nodesOf(r.runs)) free[node] = Math.max(free[node], r.end);
      } else {
        items.push({ kind: 0, key: r.id, start: r.start, end: r.end, width: r.nodes, rank: 0 });
      }
    }
    (store.order[mi] || []).forEach((seq, rank) => {
      const job = store.jobs.get(seq);
      if (!job || job.start === null || job.start === undefined) return;
      items.push({
        kind: 1, key: seq, start: job.start, end: job.start + Math.max(job.walltime, 1),
        width: job.nodes, rank,
      });
    });
    items.sort((a, b) => a.start - b.start || a.kind - b.kind || a.rank - b.rank);
    const jobs = new Map();
    const reservations = new Map();
    const overlaps = new Set();
    for (const item of items) {
      const width = Math.min(item.width, n);
      const got = pick(free, out, item.start, width);
      for (const node of got.nodes) free[node] = Math.max(free[node], item.end);
      const runs = runsOf(got.nodes);
      if (item.kind === 0) reservations.set(item.key, runs);
      else jobs.set(item.key, runs);
      if (got.overlap && item.kind === 1) overlaps.add(item.key);
    }
    return { jobs, reservations, overlaps };
  };
})(window.BatchdUI);
