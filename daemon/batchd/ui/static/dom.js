// Helpers every view uses: elements built with text only, and time formats.
//
// Everything users write (job names, owners, queues) goes into the page through
// textContent or an attribute value, never parsed as markup.
"use strict";

window.BatchdUI = window.BatchdUI || {};

(function (UI) {
  const SVG_NS = "http://www.w3.org/2000/svg";

  function fill(node, attrs, text) {
    if (attrs) {
      for (const [key, value] of Object.entries(attrs)) {
        if (value !== null && value !== undefined) node.setAttribute(key, String(value));
      }
    }
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  // An HTML element with attributes and text.
  UI.el = function (tag, attrs, text) {
    return fill(document.createElement(tag), attrs, text);
  };

  // An SVG element with attributes and text.
  UI.svg = function (tag, attrs, text) {
    return fill(document.createElementNS(SVG_NS, tag), attrs, text);
  };

  UI.clear = function (node) {
    while (node.firstChild) node.removeChild(node.firstChild);
  };

  // -- times ------------------------------------------------------------------
  // Emulated times are seconds since the epoch, shown in the site's time zone; a
  // replay of a trace without a start date shows them as offsets from its start.
  let zone = "UTC";
  let relative = false;
  let shift = 0; // seconds added before formatting in UTC, when the zone is unknown here
  let formatter = null;

  function makeFormatter(name) {
    return new Intl.DateTimeFormat("en-CA", {
      timeZone: name,
      year: "numeric", month: "2-digit", day: "2-digit",
      hour: "2-digit", minute: "2-digit", second: "2-digit",
      hourCycle: "h23",
    });
  }

  // The site's zone by name; if this browser does not know it, its offset from UTC.
  UI.setTimeZone = function (name, isRelative, offset) {
    relative = Boolean(isRelative);
    zone = name || "UTC";
    shift = 0;
    try {
      formatter = makeFormatter(zone);
    } catch (e) {
      shift = Number(offset) || 0;
      const h = shift / 3600;
      zone = `UTC${h >= 0 ? "+" : ""}${h}`;
      formatter = makeFormatter("UTC");
    }
  };
  UI.setTimeZone("UTC", false, 0);
  UI.timeZone = () => zone;

  function parts(t) {
    const out = {};
    for (const p of formatter.formatToParts(new Date((t + shift) * 1000))) out[p.type] = p.value;
    return out;
  }

  function pad(n) {
    return String(n).padStart(2, "0");
  }

  function offset(t) {
    const sign = t < 0 ? "-" : "+";
    t = Math.abs(Math.round(t));
    const d = Math.floor(t / 86400);
    const h = Math.floor((t % 86400) / 3600);
    const m = Math.floor((t % 3600) / 60);
    const s = t % 60;
    return `${sign}${d}d ${pad(h)}:${pad(m)}:${pad(s)}`;
  }

  // 2026-11-23 19:00:00
  UI.formatTime = function (t) {
    if (t === null || t === undefined) return "-";
    if (relative) return offset(t);
    const p = parts(t);
    return `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}:${p.second}`;
  };

  // A tick label: the day where the day changes, else the time of day.
  UI.formatTick = function (t, step) {
    if (relative) {
      const o = offset(t);
      return step >= 86400 ? o.split(" ")[0] : o;
    }
    const p = parts(t);
    if (step >= 86400) return `${p.month}-${p.day}`;
    if (p.hour === "00" && p.minute === "00" && step < 86400) return `${p.month}-${p.day}`;
    return step >= 60 ? `${p.hour}:${p.minute}` : `${p.hour}:${p.minute}:${p.second}`;
  };

  // Seconds of local time past midnight (to put day ticks at local midnights).
  UI.localSecondOfDay = function (t) {
    if (relative) return ((t % 86400) + 86400) % 86400;
    const p = parts(t);
    return Number(p.hour) * 3600 + Number(p.minute) * 60 + Number(p.second);
  };

  // 1:30:00, 2d 04:00:00
  UI.formatDuration = function (s) {
    if (s === null || s === undefined) return "-";
    s = Math.max(0, Math.round(s));
    const d = Math.floor(s / 86400);
    const h = Math.floor((s % 86400) / 3600);
    const m = Math.floor((s % 3600) / 60);
    const text = `${h}:${pad(m)}:${pad(s % 60)}`;
    return d > 0 ? `${d}d ${pad(h)}:${pad(m)}:${pad(s % 60)}` : text;
  };

  // A short span for the toolbar: 6 h, 3.5 d.
  UI.formatSpan = function (s) {
    if (s < 120) return `${Math.round(s)} s`;
    if (s < 7200) return `${Math.round(s / 60)} min`;
    if (s < 172800) return `${(s / 3600).toFixed(s < 36000 ? 1 : 0)} h`;
    return `${(s / 86400).toFixed(s < 864000 ? 1 : 0)} d`;
  };

  UI.percent = function (x) {
    return `${(100 * x).toFixed(x < 0.1 ? 1 : 0)}%`;
  };

  UI.STATE_NAMES = {
    Q: "queued", H: "held", W: "waiting for its time", R: "running", E: "exiting", F: "finished",
  };
})(window.BatchdUI);
