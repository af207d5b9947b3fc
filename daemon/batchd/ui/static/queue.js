// The Queue view: each machine's policy in force and, under a self-tuning policy
// (dynP), its latest decisions; the waiting jobs in the order the policy serves
// them, with their planned starts and why they wait; then the jobs not in any plan.
"use strict";

(function (UI) {
  const PAGE = 200;

  class QueueView {
    constructor(store) {
      this.store = store;
      this.container = document.getElementById("queues");
      this.shown = new Map(); // machine -> rows shown
    }

    render() {
      UI.clear(this.container);
      const store = this.store;
      store.machines.forEach((m, mi) => this.container.appendChild(this.machineCard(m, mi)));
      const others = store.unplanned();
      if (others.length > 0) {
        const card = UI.el("section", { class: "queue-card", "data-unplanned": "true" });
        card.appendChild(UI.el("h2", null, `Not in a plan (${others.length})`));
        card.appendChild(this.table(others, false));
        this.container.appendChild(card);
      }
    }

    machineCard(m, mi) {
      const store = this.store;
      const card = UI.el("section", { class: "queue-card", "data-machine": m.name });
      const waiting = store.waiting(mi);
      card.appendChild(UI.el("h2", null, `${m.name}: ${waiting.length} waiting`));
      const params = Object.entries(m.params || {}).map(([k, v]) => `${k}=${v}`).join(" ");
      card.appendChild(UI.el("p", { class: "policy" },
        `Policy ${m.policy}${params ? ` (${params})` : ""}, queue order ${m.order || "-"}`));
      if ((m.decisions || []).length > 0) card.appendChild(this.decisions(m.decisions));
      const count = this.shown.get(mi) || PAGE;
      card.appendChild(this.table(waiting.slice(0, count), true));
      if (waiting.length > count) {
        const more = UI.el("button", { type: "button", class: "more" },
          `Show ${Math.min(PAGE, waiting.length - count)} more of ${waiting.length - count}`);
        more.addEventListener("click", () => {
          this.shown.set(mi, count + PAGE);
          this.render();
        });
        card.appendChild(more);
      }
      return card;
    }

    decisions(entries) {
      const wrap = UI.el("div", { class: "decisions" });
      wrap.appendChild(UI.el("h3", null, "Latest self-tuning decisions, newest first"));
      const table = UI.el("table", { class: "jobs" });
      const head = UI.el("tr");
      for (const h of ["time", "decider case", "order", ""]) head.appendChild(UI.el("th", null, h));
      table.appendChild(head);
      for (const [t, kase, order, switched] of entries.slice().reverse()) {
        const tr = UI.el("tr");
        tr.appendChild(UI.el("td", null, UI.formatTime(t)));
        tr.appendChild(UI.el("td", null, kase));
        tr.appendChild(UI.el("td", null, order));
        tr.appendChild(UI.el("td", null, switched ? "switched" : "kept"));
        table.appendChild(tr);
      }
      wrap.appendChild(table);
      return wrap;
    }

    table(jobs, planned) {
      const store = this.store;
      const now = store.nowEstimate();
      const table = UI.el("table", { class: "jobs" });
      const head = UI.el("tr");
      const cols = planned
        ? ["#", "job", "name", "owner", "queue", "nodes", "walltime", "planned start", "in", "why it waits"]
        : ["job", "state", "name", "owner", "queue", "nodes", "walltime", "why it waits"];
      for (const h of cols) head.appendChild(UI.el("th", null, h));
      table.appendChild(head);
      jobs.forEach((job, i) => {
        const tr = UI.el("tr", {
          "data-job-id": job.id, "data-start": job.start === null ? "" : job.start,
          class: store.isMine(job) ? "mine" : null,
        });
        const cell = (text, cls) => tr.appendChild(UI.el("td", cls ? { class: cls } : null, text));
        if (planned) cell(String(i + 1), "num");
        cell(job.id);
        if (!planned) cell(UI.STATE_NAMES[job.state] || job.state);
        cell(job.name, "name");
        cell(job.owner, "owner");
        cell(job.queue);
        cell(String(job.nodes), "num");
        cell(UI.formatDuration(job.walltime), "num");
        if (planned) {
          cell(job.start === null ? "none" : UI.formatTime(job.start));
          cell(job.start === null ? "-" : UI.formatDuration(job.start - now), "num");
        }
        cell(job.reason || "", "reason");
        table.appendChild(tr);
      });
      return table;
    }
  }

  UI.QueueView = QueueView;
})(window.BatchdUI);
