// The plan as the page knows it: every job by seq, each machine's waiting order,
// the machines and reservations. An answer of GET /plan is either whole (base null)
// or a delta on the version the page had (docs/ui.md).
"use strict";

(function (UI) {
  class Store {
    constructor() {
      this.reset();
    }

    reset() {
      this.jobs = new Map(); // seq -> job
      this.order = []; // per machine: waiting seqs in the policy's order
      this.machines = [];
      this.nodeNames = [];
      this.reservations = [];
      this.version = null;
      this.server = "";
      this.now = 0;
      this.receivedAt = 0; // performance.now() when now was read
      this.speed = 1;
      this.clock = "realtime";
      this.caller = null;
      this.revision = 0; // moves with every change the views must redraw for
      this.mode = "live";
      this.summary = null;
    }

    // Take an answer; false if it cannot be applied (a delta on a version we lack).
    apply(answer) {
      const whole = answer.base === null || answer.base === undefined;
      if (!whole && answer.base !== this.version) return false;
      if (whole) {
        this.jobs = new Map();
        this.nodeNames = answer.node_names || [];
      }
      this.mode = answer.mode || "live";
      this.summary = answer.summary || null;
      this.server = answer.server;
      this.caller = answer.caller || null;
      this.clock = answer.clock;
      this.speed = answer.clock === "realtime" ? 1 : Number(answer.speed) || 0;
      this.setNow(answer.now);
      this.machines = answer.machines;
      this.reservations = answer.reservations || [];
      const reasons = answer.reasons || [];
      const F = indexOf(answer.fields);
      for (const seq of answer.gone || []) this.jobs.delete(seq);
      for (const row of answer.jobs) {
        const seq = row[F.seq];
        let job = this.jobs.get(seq);
        if (!job) {
          const label = jobLabel(seq);
          job = { seq, label, id: `${label}.${this.server}`, name: "", owner: "", queue: "" };
          this.jobs.set(seq, job);
        }
        job.state = row[F.state];
        job.machine = row[F.machine];
        job.nodes = row[F.nodes];
        job.walltime = row[F.walltime];
        job.start = row[F.start];
        job.end = row[F.end];
        job.alloc = row[F.alloc];
        const r = row[F.reason];
        job.reason = r === null || r === undefined ? null : reasons[r];
      }
      const I = indexOf(answer.info_fields);
      for (const row of answer.info || []) {
        const job = this.jobs.get(row[I.seq]);
        if (!job) continue;
        job.name = row[I.name];
        job.owner = row[I.owner];
        job.queue = row[I.queue];
      }
      this.order = (answer.order || []).map((seqs, i) =>
        seqs !== null ? seqs : this.keptOrder(this.order[i] || [], i),
      );
      this.version = answer.version;
      this.revision += 1;
      return true;
    }

    // The old order of a machine with the jobs no longer waiting on it left out, then
    // the jobs waiting on it that it did not hold, by seq: the daemon sends no order
    // for a machine when this gives its order (planfeed.py, kept_order).
    keptOrder(old, machine) {
      const before = new Set(old);
      const kept = old.filter((seq) => this.isWaitingOn(seq, machine));
      const added = [];
      for (const job of this.jobs.values()) {
        if (!before.has(job.seq) && job.state === "Q" && job.machine === machine) {
          added.push(job.seq);
        }
      }
      added.sort((a, b) => a - b);
      return kept.concat(added);
    }

    isWaitingOn(seq, machine) {
      const job = this.jobs.get(seq);
      return Boolean(job) && job.state === "Q" && job.machine === machine;
    }

    setNow(now) {
      this.now = now;
      this.receivedAt = performance.now();
    }

    // The emulated now, moved on from the last answer at the clock's speed.
    nowEstimate() {
      if (this.mode !== "live") return this.now;
      return this.now + ((performance.now() - this.receivedAt) / 1000) * this.speed;
    }

    waiting(machine) {
      return (this.order[machine] || []).map((seq) => this.jobs.get(seq)).filter(Boolean);
    }

    // Jobs not in any plan: held, waiting for their time, or queued with no place.
    unplanned() {
      const planned = new Set(this.order.flat());
      const out = [];
      for (const job of this.jobs.values()) {
        if (job.state !== "R" && job.state !== "E" && job.state !== "F" && !planned.has(job.seq)) {
          out.push(job);
        }
      }
      return out.sort((a, b) => a.seq - b.seq);
    }

    isMine(job) {
      return this.caller !== null && job.owner === this.caller.user;
    }

    nodeName(machine, index) {
      const names = this.nodeNames[machine];
      return names && names[index] !== undefined ? names[index] : String(index);
    }
  }

  // A subjob's key is 2**52 + (its array's seq) * 2**20 + its index (batchd.server.arrays):
  // below 2**53, so exact here; the page shows it as PBS does, 12[3].
  const SUBJOB_BASE = 2 ** 52;
  const INDEX_SPAN = 2 ** 20;

  function jobLabel(seq) {
    if (seq < SUBJOB_BASE) return String(seq);
    const rest = seq - SUBJOB_BASE;
    return `${Math.floor(rest / INDEX_SPAN)}[${rest % INDEX_SPAN}]`;
  }

  function indexOf(fields) {
    const out = {};
    (fields || []).forEach((name, i) => {
      out[name] = i;
    });
    return out;
  }

  UI.Store = Store;
  UI.jobLabel = jobLabel;
})(window.BatchdUI);
