// Live progress of a judge job: polls the job's JSON endpoint until the job has finished.
(function () {
  "use strict";
  var section = document.getElementById("job-progress");
  if (!section) {
    return;
  }
  var url = section.dataset.url;
  var finished = ["succeeded", "failed", "cancelled"];

  function show(progress) {
    section.querySelectorAll("[data-field]").forEach(function (node) {
      var value = progress[node.dataset.field];
      node.textContent = value === null || value === undefined || value === "" ? "—" : value;
    });
    document.getElementById("job-bar").value = progress.percent;
    var running = finished.indexOf(progress.status) === -1;
    var results = document.getElementById("job-results");
    if (results) {
      results.hidden = running;
    }
    return running;
  }

  function poll() {
    fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (reply) {
        return reply.ok ? reply.json() : Promise.reject(reply.status);
      })
      .then(function (progress) {
        if (show(progress)) {
          window.setTimeout(poll, 1000);
        }
      })
      .catch(function () {
        window.setTimeout(poll, 5000);
      });
  }

  if (section.dataset.finished !== "1") {
    poll();
  }
})();
