// The daemon's API as the page uses it: the bearer token, kept for this tab only,
// and GET /plan polled with the version the page has (If-None-Match and since).
"use strict";

(function (UI) {
  const KEY = "batchd-token";
  const POLL_MS = 1000;
  const HIDDEN_POLL_MS = 5000;

  // A token in the URL fragment (/ui#token=...) goes to this tab's storage and out
  // of the address bar; browsers never send the fragment to the server.
  UI.takeTokenFromFragment = function () {
    const hash = window.location.hash;
    const m = /(?:^#|&)token=([^&]*)/.exec(hash);
    if (!m) return;
    let token = "";
    try {
      token = decodeURIComponent(m[1]);
    } catch (e) {
      token = m[1];
    }
    if (token) window.sessionStorage.setItem(KEY, token);
    window.history.replaceState(null, "", window.location.pathname + window.location.search);
  };

  UI.token = () => window.sessionStorage.getItem(KEY);
  UI.setToken = (token) => window.sessionStorage.setItem(KEY, token);
  UI.forgetToken = () => window.sessionStorage.removeItem(KEY);

  class Poller {
    // onAnswer(answer): a 200; onRefused(message): the token was refused (401), or
    // none was given (message empty);
    // onStatus(text, bad): how the last poll went.
    constructor(store, { onAnswer, onRefused, onStatus }) {
      this.store = store;
      this.onAnswer = onAnswer;
      this.onRefused = onRefused;
      this.onStatus = onStatus;
      this.timer = null;
      this.running = false;
    }

    start() {
      this.running = true;
      this.poll();
    }

    stop() {
      this.running = false;
      if (this.timer !== null) clearTimeout(this.timer);
      this.timer = null;
    }

    schedule() {
      if (!this.running) return;
      this.timer = setTimeout(() => this.poll(), document.hidden ? HIDDEN_POLL_MS : POLL_MS);
    }

    async poll() {
      this.timer = null;
      const token = UI.token();
      if (!token) {
        this.stop();
        this.onRefused("");
        return;
      }
      if (!/^[\x21-\x7e]+$/.test(token)) {
        // A header cannot carry it (fetch would throw): no daemon could take it.
        this.stop();
        this.onRefused("That is not a token: a token is printable ASCII without spaces.");
        return;
      }
      const version = this.store.version;
      const headers = { Authorization: `Bearer ${token}`, Accept: "application/json" };
      let url = "/plan";
      if (version) {
        headers["If-None-Match"] = `"${version}"`;
        url += `?since=${encodeURIComponent(version)}`;
      }
      try {
        const resp = await fetch(url, { headers, cache: "no-store", credentials: "omit" });
        if (resp.status === 304) {
          this.onStatus("", false);
        } else if (resp.status === 401) {
          const body = await resp.json().catch(() => ({}));
          this.stop();
          this.onRefused(`The daemon refused the token: ${body.message || "401"}`);
          return;
        } else if (resp.ok) {
          const answer = await resp.json();
          if (!this.store.apply(answer)) {
            // A delta on a version this page does not have: ask for the whole plan.
            this.store.version = null;
          } else {
            this.onAnswer(answer);
          }
          this.onStatus("", false);
        } else {
          const body = await resp.json().catch(() => ({}));
          this.onStatus(`${resp.status}: ${body.message || resp.statusText}`, true);
        }
      } catch (e) {
        this.onStatus("the daemon does not answer", true);
      }
      this.schedule();
    }
  }

  UI.Poller = Poller;
})(window.BatchdUI);
