// The Machine view: each machine's nodes by state as a grid of cells, its
// utilization now, and over the last emulated day.
"use strict";

(function (UI) {
  const NODE_STATES = [
    ["i", "idle"], ["a", "allocated"], ["r", "reserved"], ["o", "offline"], ["d", "down"],
  ];
  const CELL = 16;
  const CELL_GAP = 3;

  class MachineView {
    constructor(store, tooltip) {
      this.store = store;
      this.tooltip = tooltip;
      this.container = document.getElementById("machines");
      this.container.addEventListener("mousemove", (e) => this.hover(e));
      this.container.addEventListener("mouseleave", () => this.tooltip.hide());
    }

    render() {
      UI.clear(this.container);
      this.store.machines.forEach((m, mi) => this.container.appendChild(this.card(m, mi)));
    }

    card(m, mi) {
      const card = UI.el("section", { class: "machine-card", "data-machine": m.name });
      card.appendChild(UI.el("h2", null, `${m.name} · ${m.nodes} nodes · ${m.policy}`));
      const counts = {};
      for (const [letter] of NODE_STATES) counts[letter] = 0;
      for (const s of m.states) counts[s] = (counts[s] || 0) + 1;
      card.appendChild(UI.el("div", { class: "counts" },
        NODE_STATES.map(([letter, name]) => `${name} ${counts[letter]}`).join(" · ")));

      const row = UI.el("div", { class: "row" });
      row.appendChild(this.grid(m, mi));
      const side = UI.el("div");
      side.appendChild(UI.el("h3", null, "Utilization now"));
      const share = m.nodes > 0 ? m.allocated / m.nodes : 0;
      side.appendChild(UI.el("div", { class: "big", "data-utilization": share.toFixed(4) }, UI.percent(share)));
      const bar = UI.el("div", { class: "bar" });
      const fillBar = UI.el("div");
      fillBar.style.width = `${(100 * share).toFixed(1)}%`;
      bar.appendChild(fillBar);
      side.appendChild(bar);
      side.appendChild(UI.el("div", { class: "muted" }, `${m.allocated} of ${m.nodes} nodes run jobs`));
      side.appendChild(UI.el("h3", null, "Over the last emulated day"));
      side.appendChild(this.dayChart(m));
      row.appendChild(side);
      card.appendChild(row);
      return card;
    }

    grid(m, mi) {
      const cols = m.nodes <= 64 ? 16 : m.nodes <= 256 ? 24 : 48;
      const cell = m.nodes <= 256 ? CELL : 10;
      const rows = Math.ceil(m.nodes / cols);
      const w = cols * (cell + CELL_GAP);
      const h = rows * (cell + CELL_GAP);
      const svg = UI.svg("svg", { width: w, height: h, class: "node-grid" });
      for (let n = 0; n < m.nodes; n++) {
        const s = m.states[n] || "i";
        svg.appendChild(UI.svg("rect", {
          class: `node node-${s}`, x: (n % cols) * (cell + CELL_GAP), y: Math.floor(n / cols) * (cell + CELL_GAP),
          width: cell, height: cell, rx: 2, "data-node": this.store.nodeName(mi, n), "data-state": s,
          "data-machine": mi, "data-index": n,
        }));
      }
      return svg;
    }

    dayChart(m) {
      const W = 420;
      const H = 120;
      const L = 34;
      const B = 18;
      const svg = UI.svg("svg", { width: W, height: H, class: "day-chart" });
      const day = m.day || { values: [] };
      const values = day.values;
      const axis = UI.svg("g", { class: "axis" });
      for (const f of [0, 0.5, 1]) {
        const y = H - B - f * (H - B - 6);
        axis.appendChild(UI.svg("line", { x1: L, x2: W, y1: y, y2: y }));
        axis.appendChild(UI.svg("text", { x: L - 4, y: y + 4, "text-anchor": "end" }, `${f * 100}%`));
      }
      svg.appendChild(axis);
      if (values.length === 0) {
        svg.appendChild(UI.svg("text", { x: L + 8, y: H / 2, class: "machine-sub" }, "not a whole quarter hour yet"));
        return svg;
      }
      const end = day.start + values.length * day.step;
      const lo = end - 96 * day.step;
      const x = (t) => L + ((t - lo) / (end - lo)) * (W - L - 4);
      const y = (v) => H - B - v * (H - B - 6);
      let d = `M${x(day.start).toFixed(1)},${y(0).toFixed(1)}`;
      values.forEach((v, i) => {
        const a = day.start + i * day.step;
        d += ` L${x(a).toFixed(1)},${y(v).toFixed(1)} L${x(a + day.step).toFixed(1)},${y(v).toFixed(1)}`;
      });
      d += ` L${x(end).toFixed(1)},${y(0).toFixed(1)} Z`;
      svg.appendChild(UI.svg("path", { class: "util-area", d, "data-bins": values.length }));
      const labels = UI.svg("g", { class: "axis" });
      for (let k = 0; k <= 4; k++) {
        const t = lo + (k * (end - lo)) / 4;
        labels.appendChild(UI.svg("text", { x: x(t) - (k === 4 ? 30 : k === 0 ? 0 : 15), y: H - 4 },
          UI.formatTick(t, 3600)));
      }
      svg.appendChild(labels);
      return svg;
    }

    hover(e) {
      const target = e.target instanceof Element ? e.target : null;
      if (!target || !target.classList.contains("node")) {
        this.tooltip.hide();
        return;
      }
      const name = NODE_STATES.find(([l]) => l === target.getAttribute("data-state"));
      const mi = Number(target.getAttribute("data-machine"));
      const index = Number(target.getAttribute("data-index"));
      const rows = [["state", name ? name[1] : ""]];
      for (const job of this.store.jobs.values()) {
        if (!job.alloc) continue;
        for (const part of job.alloc) {
          if (part[0] === mi && UI.nodesOf(part.slice(1)).includes(index)) {
            rows.push(["job", `${job.id} ${job.name} (${job.owner})`]);
          }
        }
      }
      this.tooltip.show(e, `Node ${target.getAttribute("data-node")}`, rows);
    }
  }

  UI.MachineView = MachineView;
})(window.BatchdUI);
