// The Plan view: the chart, zoom and pan over time, hovering, and finding jobs.
//
// The view follows now (now stays near the left edge) until the user pans; "Now"
// follows again. The wheel zooms around the pointer, dragging pans, + and - zoom.
"use strict";

(function (UI) {
  const MIN_SPAN = 60;
  const MAX_SPAN = 20 * 365 * 86400;
  const LEAD = 0.12; // share of the span before now while following

  class PlanView {
    constructor(store, tooltip) {
      this.store = store;
      this.tooltip = tooltip;
      this.container = document.getElementById("gantt");
      this.spanText = document.getElementById("span-text");
      this.findInput = document.getElementById("find-input");
      this.findText = document.getElementById("find-text");
      this.follow = true;
      this.span = 0;
      this.t0 = 0;
      this.layouts = [];
      this.layoutRevision = -1;
      this.query = "";
      this.drawnAt = 0;
      this.drag = null;
      this.bind();
    }

    bind() {
      document.getElementById("zoom-in").addEventListener("click", () => this.zoom(1 / 1.6));
      document.getElementById("zoom-out").addEventListener("click", () => this.zoom(1.6));
      document.getElementById("zoom-now").addEventListener("click", () => {
        this.follow = true;
        this.render();
      });
      document.getElementById("zoom-fit").addEventListener("click", () => this.fit());
      this.findInput.addEventListener("input", () => {
        this.query = this.findInput.value.trim();
        this.render();
      });
      this.findInput.addEventListener("keydown", (e) => {
        if (e.key === "Enter") this.showFirstMatch();
      });
      const c = this.container;
      c.addEventListener("wheel", (e) => this.onWheel(e), { passive: false });
      c.addEventListener("pointerdown", (e) => this.onDown(e));
      c.addEventListener("pointermove", (e) => this.onMove(e));
      c.addEventListener("pointerup", (e) => this.onUp(e));
      c.addEventListener("pointerleave", () => this.tooltip.hide());
      document.addEventListener("keydown", (e) => {
        if (this.container.offsetParent === null || e.target.tagName === "INPUT") return;
        if (e.key === "+" || e.key === "=") this.zoom(1 / 1.6);
        else if (e.key === "-") this.zoom(1.6);
      });
    }

    // The span of the first view: now to the last planned end (2 hours to 3 days).
    initialSpan() {
      const now = this.store.now;
      let last = now;
      for (const job of this.store.jobs.values()) {
        if (job.start !== null) last = Math.max(last, job.start + job.walltime);
      }
      return Math.min(3 * 86400, Math.max(7200, (last - now) / (1 - LEAD)));
    }

    window() {
      if (this.span === 0) this.span = this.initialSpan();
      if (this.follow) this.t0 = this.store.nowEstimate() - LEAD * this.span;
      return [this.t0, this.t0 + this.span];
    }

    layoutsNow() {
      if (this.layoutRevision !== this.store.revision) {
        this.layouts = this.store.machines.map((_, mi) => UI.layoutMachine(this.store, mi));
        this.layoutRevision = this.store.revision;
      }
      return this.layouts;
    }

    matcher() {
      const q = this.query;
      if (!q) return null;
      const id = /^(\d+(?:\[\d*\])?)(\..*)?$/.exec(q);
      if (id) {
        const label = id[1];
        if (label.endsWith("[]")) {
          const prefix = label.slice(0, -1);  // 12[ : every subjob of array 12
          return (job) => job.label.startsWith(prefix);
        }
        return (job) => job.label === label;
      }
      const lower = q.toLowerCase();
      return (job) => job.owner.toLowerCase().includes(lower);
    }

    render() {
      const [t0, t1] = this.window();
      const width = this.container.clientWidth || 1100;
      const matches = this.matcher();
      const svg = UI.drawChart(this.store, this.layoutsNow(), { t0, t1, width, matches });
      UI.clear(this.container);
      this.container.appendChild(svg);
      this.drawnAt = performance.now();
      this.spanText.textContent = `${UI.formatSpan(this.span)} shown${this.follow ? ", following now" : ""}`;
      if (matches) {
        let n = 0;
        for (const job of this.store.jobs.values()) if (matches(job)) n += 1;
        this.findText.textContent = n === 1 ? "1 job" : `${n} jobs`;
      } else {
        this.findText.textContent = "";
      }
    }

    // Called as time passes: redraw when now moved far enough to be seen.
    tick() {
      if (!this.follow || this.store.mode !== "live") return;
      const wall = performance.now() - this.drawnAt;
      const moved = (wall / 1000) * this.store.speed;
      if (moved > this.span / 400 && wall > 500) this.render();
    }

    zoom(factor, anchorX) {
      const [t0] = this.window();
      const span = Math.min(MAX_SPAN, Math.max(MIN_SPAN, this.span * factor));
      if (!this.follow) {
        const frac = anchorX === undefined ? 0.5 : anchorX;
        const at = t0 + frac * this.span;
        this.t0 = at - frac * span;
      }
      this.span = span;
      this.render();
    }

    fit() {
      let lo = Infinity;
      let hi = -Infinity;
      for (const job of this.store.jobs.values()) {
        if (job.start === null || job.start === undefined) continue;
        lo = Math.min(lo, job.start);
        hi = Math.max(hi, job.state === "F" ? job.end : job.start + job.walltime);
      }
      for (const r of this.store.reservations) {
        lo = Math.min(lo, r.start);
        hi = Math.max(hi, r.end);
      }
      const now = this.store.nowEstimate();
      if (this.store.mode === "live") {
        lo = Math.min(lo, now);
        hi = Math.max(hi, now);
      }
      if (!Number.isFinite(lo)) {
        lo = now - 1800;
        hi = now + 1800;
      }
      const span = Math.max(MIN_SPAN, hi - lo);
      this.follow = false;
      this.span = Math.min(MAX_SPAN, span * 1.04);
      this.t0 = lo - span * 0.02;
      this.render();
    }

    showFirstMatch() {
      const matches = this.matcher();
      if (!matches) return;
      let first = null;
      for (const job of this.store.jobs.values()) {
        if (matches(job) && job.start !== null && (first === null || job.start < first.start)) {
          first = job;
        }
      }
      if (first === null) return;
      const [t0, t1] = this.window();
      if (first.start < t0 || first.start > t1) {
        this.follow = false;
        this.t0 = first.start - this.span * 0.1;
      }
      this.render();
    }

    plotFraction(event) {
      const svg = this.container.querySelector("svg");
      if (!svg) return 0.5;
      const rect = svg.getBoundingClientRect();
      const left = 70;
      const plotW = rect.width - left - 14;
      return Math.max(0, Math.min(1, (event.clientX - rect.left - left) / plotW));
    }

    onWheel(e) {
      e.preventDefault();
      const factor = Math.exp(Math.max(-1, Math.min(1, e.deltaY / 300)));
      this.zoom(factor, this.plotFraction(e));
    }

    onDown(e) {
      if (e.button !== 0) return;
      const [t0] = this.window();
      this.drag = { x: e.clientX, t0, moved: false };
      this.container.setPointerCapture(e.pointerId);
    }

    onMove(e) {
      if (this.drag) {
        const dx = e.clientX - this.drag.x;
        if (Math.abs(dx) > 3) this.drag.moved = true;
        if (this.drag.moved) {
          const svg = this.container.querySelector("svg");
          const plotW = (svg ? svg.getBoundingClientRect().width : 1000) - 84;
          this.follow = false;
          this.t0 = this.drag.t0 - (dx / plotW) * this.span;
          this.tooltip.hide();
          this.render();
          const root = this.container.querySelector("svg");
          if (root) root.classList.add("dragging");
        }
        return;
      }
      this.hover(e);
    }

    onUp(e) {
      if (this.drag) this.container.releasePointerCapture(e.pointerId);
      this.drag = null;
      const root = this.container.querySelector("svg");
      if (root) root.classList.remove("dragging");
    }

    hover(e) {
      const target = e.target instanceof Element ? e.target : null;
      const jg = target ? target.closest("g.job") : null;
      if (jg) {
        const job = this.store.jobs.get(Number(jg.getAttribute("data-seq")));
        if (job) {
          const rows = UI.jobRows(this.store, job);
          if (jg.getAttribute("data-overlap")) {
            rows.push(["note", "its planned start leaves it too few free nodes: drawn over others"]);
          }
          this.tooltip.show(e, `Job ${job.id}`, rows);
          return;
        }
      }
      const rg = target ? target.closest("g.resv") : null;
      if (rg) {
        const r = this.store.reservations.find((x) => x.id === rg.getAttribute("data-resv-id"));
        if (r) {
          this.tooltip.show(e, `Reservation ${r.id}`, [
            ["name", r.name], ["owner", r.owner], ["nodes", String(r.nodes)],
            ["start", UI.formatTime(r.start)], ["end", UI.formatTime(r.end)],
          ]);
          return;
        }
      }
      const lane = target && target.classList.contains("lane") ? target : null;
      if (lane) {
        const queue = lane.parentNode.getAttribute("data-queue");
        this.tooltip.show(e, `Queue ${queue} closed`, [
          ["from", UI.formatTime(Number(lane.getAttribute("data-start")))],
          ["until", UI.formatTime(Number(lane.getAttribute("data-end")))],
        ]);
        return;
      }
      this.tooltip.hide();
    }
  }

  UI.PlanView = PlanView;
})(window.BatchdUI);
