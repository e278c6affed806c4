/* Live progress of an import job: polls the job's JSON endpoint until the job has finished.
   Only numbers and data are written here; every label comes translated from the template. */
(function () {
  "use strict";

  var root = document.getElementById("import-job");
  if (!root) {
    return;
  }
  var url = root.getAttribute("data-status-url");
  var progress = document.getElementById("import-progress");
  var errorBody = document.querySelector("#import-errors tbody");
  var noErrors = document.getElementById("import-no-errors");
  var FIELDS = ["status_label", "rows_done", "total_rows", "imported", "unchanged", "updated",
    "rejected", "message", "attempts"];
  var activeForm = root.querySelector('[data-when="active"]');
  var endedForm = root.querySelector('[data-when="ended"]');
  var results = root.querySelector('[data-when="finished"]');
  var INTERVAL_MS = 1000;

  function setField(name, value) {
    var element = root.querySelector('[data-field="' + name + '"]');
    if (element) {
      element.textContent = value === null || value === undefined ? "…" : String(value);
    }
  }

  function showErrors(errors) {
    var rows = document.createDocumentFragment();
    errors.forEach(function (error) {
      var tr = document.createElement("tr");
      [error.row, error.external_id, error.message].forEach(function (value) {
        var td = document.createElement("td");
        td.textContent = String(value);
        tr.appendChild(td);
      });
      rows.appendChild(tr);
    });
    errorBody.replaceChildren(rows);
    noErrors.hidden = errors.length > 0;
  }

  function show(job) {
    FIELDS.forEach(function (name) {
      setField(name, job[name]);
    });
    if (job.message === "") {
      setField("message", "");
    }
    progress.value = job.percent;
    root.setAttribute("data-status", job.status);
    root.querySelector('[data-field="status_label"]').setAttribute("data-status", job.status);
    if (activeForm) {
      activeForm.hidden = !job.can_cancel;
    }
    if (endedForm) {
      endedForm.hidden = !job.can_retry;
    }
    if (results) {
      results.hidden = !job.finished;
    }
    showErrors(job.row_errors || []);
  }

  function poll() {
    fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (response) {
        if (!response.ok) {
          throw new Error(String(response.status));
        }
        return response.json();
      })
      .then(function (job) {
        show(job);
        if (!job.finished) {
          window.setTimeout(poll, INTERVAL_MS);
        }
      })
      .catch(function () {
        window.setTimeout(poll, INTERVAL_MS * 5);
      });
  }

  poll();
})();
