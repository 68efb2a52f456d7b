(function () {
  "use strict";
  // Untrusted text (arguments, results, names) only ever reaches the page as textContent.
  var data = JSON.parse(document.getElementById("trace-data").textContent);
  var panel = document.getElementById("details");
  var pinned = null;
  var FIELDS = [
    ["Kind", "kind"], ["Name", "name"], ["State", "state"], ["Start", "start_text"],
    ["Duration", "duration_text"], ["Timing", "timing"], ["Outcome", "outcome"],
    ["Model", "model"], ["Tokens", "tokens"], ["Cost", "cost"], ["Row", "id"],
  ];
  var BLOCKS = [["Arguments", "arguments"], ["Result", "result"], ["Text", "text"],
    ["Watchdog", "findings"]];
  function add(list, term, value, block) {
    if (value === null || value === undefined || value === "") { return; }
    var dt = document.createElement("dt");
    dt.textContent = term;
    var dd = document.createElement("dd");
    var holder = block ? document.createElement("pre") : dd;
    holder.textContent = String(value);
    if (block) { dd.appendChild(holder); }
    list.appendChild(dt);
    list.appendChild(dd);
  }
  function show(el) {
    var row = data.turns[+el.dataset.t].rows[+el.dataset.r];
    var list = document.createElement("dl");
    FIELDS.forEach(function (f) { add(list, f[0], row[f[1]], false); });
    BLOCKS.forEach(function (f) { add(list, f[0], row[f[1]], true); });
    panel.replaceChildren(list);
    panel.dataset.row = row.id;
  }
  document.querySelectorAll(".row[data-r]").forEach(function (el) {
    el.addEventListener("mouseenter", function () { if (!pinned) { show(el); } });
    el.addEventListener("focus", function () { if (!pinned) { show(el); } });
    el.addEventListener("click", function () {
      if (pinned) { pinned.classList.remove("pinned"); }
      pinned = pinned === el ? null : el;
      if (pinned) { el.classList.add("pinned"); }
      show(el);
    });
    el.addEventListener("keydown", function (e) {
      if (e.key === "Enter" || e.key === " ") { e.preventDefault(); el.click(); }
    });
  });
  document.body.dataset.ready = "1";
})();
