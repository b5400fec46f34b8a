// The Run page (templates/runs/run.html); a file of its own because the Content-Security-Policy runs no
// inline script.
// Polls swap the live part; keep what the reader opened (a trace, a reply) open across swaps.
(function () {
  var open = [];
  document.body.addEventListener("htmx:beforeSwap", function (e) {
    if (e.detail.target && e.detail.target.id === "run-live") {
      open = Array.prototype.map.call(e.detail.target.querySelectorAll("details[open][id]"), function (d) { return d.id; });
    }
  });
  document.body.addEventListener("htmx:afterSwap", function () {
    open.forEach(function (id) { var d = document.getElementById(id); if (d) { d.open = true; } });
  });
})();
