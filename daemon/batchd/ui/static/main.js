// The page: live (polling the daemon with a token) or a finished replay (its data
// embedded in the file as JSON); the three views and the header.
"use strict";

(function (UI) {
  const $ = (id) => document.getElementById(id);

  class Page {
    constructor() {
      this.store = new UI.Store();
      this.tooltip = new UI.Tooltip($("tooltip"));
      this.plan = new UI.PlanView(this.store, this.tooltip);
      this.machine = new UI.MachineView(this.store, this.tooltip);
      this.queue = new UI.QueueView(this.store);
      this.current = "plan";
      this.drawn = { plan: -1, machine: -1, queue: -1 };
      this.poller = null;
      for (const tab of document.querySelectorAll(".tab")) {
        tab.addEventListener("click", () => this.show(tab.getAttribute("data-view")));
      }
      window.addEventListener("resize", () => this.redraw(true));
    }

    show(view) {
      this.current = view;
      for (const tab of document.querySelectorAll(".tab")) {
        tab.setAttribute("aria-selected", String(tab.getAttribute("data-view") === view));
      }
      for (const name of ["plan", "machine", "queue"]) $(`view-${name}`).hidden = name !== view;
      this.tooltip.hide();
      this.redraw(false);
    }

    // Draw the view shown if the store changed since it was drawn (or `force`).
    redraw(force) {
      const view = this.current;
      if (!force && this.drawn[view] === this.store.revision) return;
      this.drawn[view] = this.store.revision;
      if (view === "plan") this.plan.render();
      else if (view === "machine") this.machine.render();
      else this.queue.render();
    }

    header() {
      const s = this.store;
      $("server-name").textContent = s.server;
      document.title = `${s.server} · batchd plan`;
      if (s.mode === "live") {
        const speed = s.clock === "realtime" ? "real time" : `${s.speed}x`;
        $("clock-text").textContent = `(${speed}, ${UI.timeZone()})`;
        if (s.caller) $("caller-text").textContent = `${s.caller.user} (${s.caller.role})`;
      } else {
        $("clock-text").textContent = "(finished replay)";
      }
      let running = 0;
      let waiting = 0;
      for (const job of s.jobs.values()) {
        if (job.state === "R" || job.state === "E") running += 1;
        else if (job.state !== "F") waiting += 1;
      }
      $("summary-text").textContent = s.mode === "live"
        ? `${running} running · ${waiting} waiting`
        : UI.replaySummary(s.summary, s.jobs.size);
    }

    clockTick() {
      $("now-text").textContent = UI.formatTime(Math.floor(this.store.nowEstimate()));
      if (this.current === "plan") this.plan.tick();
    }

    startLive() {
      UI.takeTokenFromFragment();
      $("login-form").addEventListener("submit", (e) => {
        e.preventDefault();
        const token = $("token-input").value.trim();
        if (!token) return;
        UI.setToken(token);
        $("token-input").value = "";
        this.connect();
      });
      UI.drawLegends("live");
      setInterval(() => this.clockTick(), 250);
      this.connect();
    }

    connect() {
      if (!UI.token()) {
        this.askToken("");
        return;
      }
      $("login").hidden = true;
      this.poller = new UI.Poller(this.store, {
        onAnswer: (answer) => this.onAnswer(answer),
        onRefused: (message) => this.askToken(message),
        onStatus: (text, bad) => {
          const node = $("status-text");
          node.textContent = text;
          node.className = bad ? "status bad" : "status";
        },
      });
      this.poller.start();
    }

    onAnswer(answer) {
      const first = $("app").hidden;
      if (first) UI.setTimeZone(answer.timezone, false, answer.utc_offset);
      $("app").hidden = false;
      this.header();
      this.redraw(first);
    }

    askToken(message) {
      UI.forgetToken();
      this.store.reset();
      $("app").hidden = true;
      $("login").hidden = false;
      $("login-error").textContent = message;
      $("token-input").focus();
    }

    startReplay(data) {
      UI.setTimeZone(data.timezone, data.relative, data.utc_offset);
      UI.drawLegends("replay");
      this.store.apply(data);
      for (const tab of document.querySelectorAll(".tab")) {
        if (tab.getAttribute("data-view") !== "plan") tab.hidden = true;
      }
      $("zoom-now").hidden = true;
      $("app").hidden = false;
      $("now-text").textContent = UI.formatTime(data.now);
      this.header();
      this.plan.fit();
      this.drawn.plan = this.store.revision;
    }
  }

  UI.replaySummary = function (summary, count) {
    if (!summary) return `${count} jobs`;
    const parts = [`${count} jobs`, `policy ${summary.policy}`];
    if (typeof summary.utilization === "number") parts.push(`utilization ${UI.percent(summary.utilization)}`);
    if (typeof summary.art === "number") parts.push(`ART ${UI.formatDuration(summary.art)}`);
    return parts.join(" · ");
  };

  function start() {
    const page = new Page();
    const embedded = document.getElementById("batchd-data");
    if (embedded) page.startReplay(JSON.parse(embedded.textContent));
    else page.startLive();
    UI.page = page;
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})(window.BatchdUI);
