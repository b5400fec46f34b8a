// The workspace page's chart of runs a day (templates/library/workspace.html): the data is the page's
// #runs-chart-data JSON; a file of its own because the Content-Security-Policy runs no inline script.
(function () {
  var data = JSON.parse(document.getElementById("runs-chart-data").textContent);
  var datasets = data.series.map(function (s) {
    return {type: "bar", label: s.status, data: s.counts, backgroundColor: s.colour, stack: "runs", yAxisID: "y",
            borderRadius: 3, maxBarThickness: 28};
  });
  datasets.push({type: "line", label: "cost (USD)", data: data.cost, yAxisID: "cost", borderColor: "#15233f",
                 backgroundColor: "#15233f", cubicInterpolationMode: "monotone", pointRadius: 2, borderWidth: 2});
  new Chart(document.getElementById("runs-chart"), {
    data: {labels: data.days, datasets: datasets},
    options: {
      animation: false, maintainAspectRatio: false, interaction: {mode: "index", intersect: false},
      plugins: {legend: {position: "bottom", labels: {boxWidth: 12, boxHeight: 12}},
                tooltip: {callbacks: {label: function (c) {
                  return c.dataset.yAxisID === "cost" ? " cost $" + Number(c.raw).toFixed(4) : " " + c.dataset.label + ": " + c.raw;
                }}}},
      scales: {
        x: {stacked: true, grid: {display: false}},
        y: {stacked: true, beginAtZero: true, ticks: {precision: 0}, title: {display: true, text: "runs"}},
        cost: {position: "right", beginAtZero: true, grid: {display: false},
               ticks: {callback: function (v) { return "$" + Number(v).toFixed(Number(v) < 1 ? 3 : 2); }}}
      }
    }
  });
})();
