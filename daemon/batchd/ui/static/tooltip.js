// One tooltip for the page: a title and rows of label and value, all text.
"use strict";

(function (UI) {
  class Tooltip {
    constructor(node) {
      this.node = node;
    }

    // rows: [label, value] pairs; values that are null or "" are left out.
    show(event, title, rows) {
      const node = this.node;
      UI.clear(node);
      node.appendChild(UI.el("div", { class: "title" }, title));
      const table = UI.el("table");
      for (const [label, value] of rows) {
        if (value === null || value === undefined || value === "") continue;
        const tr = UI.el("tr");
        tr.appendChild(UI.el("th", null, label));
        tr.appendChild(UI.el("td", null, value));
        table.appendChild(tr);
      }
      node.appendChild(table);
      node.hidden = false;
      this.move(event);
    }

    move(event) {
      const node = this.node;
      const pad = 14;
      const w = node.offsetWidth;
      const h = node.offsetHeight;
      let x = event.clientX + pad;
      let y = event.clientY + pad;
      if (x + w > window.innerWidth - 4) x = Math.max(4, event.clientX - w - pad);
      if (y + h > window.innerHeight - 4) y = Math.max(4, event.clientY - h - pad);
      node.style.left = `${x}px`;
      node.style.top = `${y}px`;
    }

    hide() {
      this.node.hidden = true;
    }
  }

  // What the tooltip says about a job.
  UI.jobRows = function (store, job) {
    const running = job.state === "R" || job.state === "E";
    const rows = [
      ["name", job.name],
      ["owner", job.owner],
      ["queue", job.queue],
      ["state", UI.STATE_NAMES[job.state] || job.state],
      ["nodes", String(job.nodes)],
      ["walltime", UI.formatDuration(job.walltime)],
    ];
    if (job.machine !== null && store.machines.length > 1 && store.machines[job.machine]) {
      rows.push(["machine", store.machines[job.machine].name]);
    }
    if (job.state === "F") {
      rows.push(["started", UI.formatTime(job.start)]);
      rows.push(["ended", UI.formatTime(job.end)]);
    } else if (running) {
      rows.push(["started", UI.formatTime(job.start)]);
      rows.push(["ends by", UI.formatTime(job.start + job.walltime)]);
    } else {
      rows.push(["planned start", job.start === null ? "none" : UI.formatTime(job.start)]);
    }
    if (job.alloc && job.alloc.length > 0) {
      const hosts = [];
      for (const part of job.alloc) {
        for (const n of UI.nodesOf(part.slice(1))) hosts.push(store.nodeName(part[0], n));
      }
      const shown = hosts.slice(0, 8).join(" ");
      rows.push(["hosts", hosts.length > 8 ? `${shown} ... (${hosts.length})` : shown]);
    }
    rows.push(["why it waits", job.reason]);
    return rows;
  };

  UI.Tooltip = Tooltip;
})(window.BatchdUI);
