// The legends of the Plan and Machine views: what each colour means.
"use strict";

(function (UI) {
  function item(label, colour, extra) {
    const span = UI.el("span", { class: "item" });
    const swatch = UI.el("span", { class: `swatch${extra ? ` ${extra}` : ""}` });
    swatch.style.background = colour;
    span.appendChild(swatch);
    span.appendChild(document.createTextNode(label));
    return span;
  }

  function hatched(label, colour) {
    const span = item(label, "transparent");
    const swatch = span.firstChild;
    swatch.style.background = `repeating-linear-gradient(45deg, ${colour} 0 2px, transparent 2px 5px)`;
    swatch.style.borderColor = colour;
    return span;
  }

  UI.drawLegends = function (mode) {
    const css = getComputedStyle(document.documentElement);
    const v = (name) => css.getPropertyValue(name).trim();
    const plan = document.getElementById("legend-plan");
    UI.clear(plan);
    if (mode === "replay") {
      plan.appendChild(item("finished job (start to end)", v("--finished")));
    } else {
      plan.appendChild(item("running (to its walltime)", v("--running")));
      plan.appendChild(item("waiting, at its planned start", v("--planned")));
      const mine = item("your jobs", "transparent");
      mine.firstChild.style.border = `2px solid ${v("--ink")}`;
      plan.appendChild(mine);
      const over = item("planned over other jobs (see its reason)", "transparent");
      over.firstChild.style.border = "1px dashed #7a4d00";
      over.firstChild.style.background = "rgba(240, 160, 48, 0.55)";
      plan.appendChild(over);
      plan.appendChild(hatched("reservation", v("--reserved")));
      plan.appendChild(hatched("queue closed", v("--closed")));
      plan.appendChild(item("node offline", v("--offline")));
      plan.appendChild(item("node down", v("--down")));
      plan.appendChild(item("now", v("--now"), "line"));
    }
    const machine = document.getElementById("legend-machine");
    UI.clear(machine);
    for (const [label, name] of [
      ["idle", "--idle"], ["allocated", "--running"], ["reserved", "--reserved"],
      ["offline", "--offline"], ["down", "--down"],
    ]) {
      machine.appendChild(item(label, v(name)));
    }
  };
})(window.BatchdUI);
