// Live progress of a judge job: polls the job's JSON endpoint until the job has ended, showing
// its counts, its failed calls by judge and kind and its latest errors; once it has ended, the
// Cancel button goes, the links to its results appear and Retry shows where it applies.
(function () {
  "use strict";
  var section = document.getElementById("job-progress");
  if (!section) {
    return;
  }
  var url = section.dataset.url;

  function fillTable(id, rows, columns) {
    var body = document.getElementById(id);
    if (!body) {
      return;
    }
    body.textContent = "";
    if (!rows.length) {
      var empty = body.insertRow();
      var cell = empty.insertCell();
      cell.colSpan = columns.length;
      cell.textContent = body.dataset.empty;
      return;
    }
    rows.forEach(function (row) {
      var line = body.insertRow();
      columns.forEach(function (column) {
        line.insertCell().textContent = row[column];
      });
    });
  }

  function ended(progress) {
    var cancel = document.getElementById("job-cancel");
    if (cancel) {
      cancel.remove();
    }
    var links = document.getElementById("job-links");
    if (links) {
      links.hidden = false;
    }
    var retry = document.getElementById("job-retry");
    if (retry) {
      retry.hidden = retry.dataset.retryable.split(",").indexOf(progress.status) === -1;
    }
  }

  function show(progress) {
    section.querySelectorAll("[data-field]").forEach(function (node) {
      var value = progress[node.dataset.field];
      node.textContent = value === null || value === undefined || value === "" ? "—" : value;
    });
    document.getElementById("job-bar").value = progress.percent;
    fillTable("error-counts", progress.error_counts, ["judge", "kind", "n"]);
    fillTable("recent-errors", progress.recent_errors, ["judge", "item", "kind", "error"]);
    section.dataset.status = progress.status;
    if (progress.finished) {
      ended(progress);
    }
    return !progress.finished;
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
