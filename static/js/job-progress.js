/* Live progress of a background job (import, judge job, snapshot, audit draw), driven by data
   attributes; every label comes translated in the page or the JSON, only data is written here.

   On the element that holds the job:
     data-job-progress-url  the job's JSON endpoint, polled while the job is active
     data-status            the job's status, kept current (styles and tests read it)
     data-job-interval      milliseconds between polls (default 1000; five times as long after
                            a failed request)
     data-job-active        the statuses of a job still at work (default "queued running"); a
                            reply with "finished": true also ends the polling
     data-job-reload        reload the page once the job has ended, to show its final state
   Inside it:
     [data-field=KEY]       shows the reply's KEY (data-empty: the text for a missing value,
                            "—" by default); with a data-status attribute too, it follows the
                            status (a badge)
     progress[data-job-bar] "percent" of 100, or "done" of "total"
     [data-when=active]     shown while the job can be cancelled ("can_cancel", else active)
     [data-when=ended]      shown when the job can be retried ("can_retry")
     [data-when=finished]   shown once the job is no longer active (links to its results)
     tbody[data-job-rows=KEY][data-job-columns="a b c"]  one row per item of the list KEY
     [data-job-rows-empty=KEY]                           shown when that list is empty
   Each reply is also sent to the element as a "job-progress" event (detail: the reply), for
   what only one page does. */
(function () {
  "use strict";

  function text(value, empty) {
    return value === null || value === undefined || value === "" ? empty : String(value);
  }

  function showRows(root, job) {
    root.querySelectorAll("tbody[data-job-rows]").forEach(function (body) {
      var key = body.dataset.jobRows;
      var items = job[key];
      if (!Array.isArray(items)) {
        return;
      }
      var columns = (body.dataset.jobColumns || "").split(/\s+/).filter(Boolean);
      var rows = document.createDocumentFragment();
      items.forEach(function (item) {
        var tr = document.createElement("tr");
        columns.forEach(function (column) {
          var td = document.createElement("td");
          td.textContent = text(item[column], "");
          tr.appendChild(td);
        });
        rows.appendChild(tr);
      });
      body.replaceChildren(rows);
      root.querySelectorAll('[data-job-rows-empty="' + key + '"]').forEach(function (note) {
        note.hidden = items.length > 0;
      });
    });
  }

  function show(root, job, active) {
    root.dataset.status = job.status;
    root.querySelectorAll("[data-field]").forEach(function (node) {
      var key = node.dataset.field;
      if (key in job) {
        node.textContent = text(job[key], node.dataset.empty === undefined ? "—" : node.dataset.empty);
      }
      if (node.hasAttribute("data-status")) {
        node.dataset.status = job.status;
      }
    });
    root.querySelectorAll("progress[data-job-bar]").forEach(function (bar) {
      if (typeof job.percent === "number") {
        bar.max = 100;
        bar.value = job.percent;
      } else if (typeof job.done === "number") {
        bar.max = job.total || 0;
        bar.value = job.done;
      }
    });
    root.querySelectorAll('[data-when="active"]').forEach(function (node) {
      node.hidden = !("can_cancel" in job ? job.can_cancel : active);
    });
    root.querySelectorAll('[data-when="ended"]').forEach(function (node) {
      node.hidden = !("can_retry" in job ? job.can_retry : false);
    });
    root.querySelectorAll('[data-when="finished"]').forEach(function (node) {
      node.hidden = active;
    });
    showRows(root, job);
    root.dispatchEvent(new CustomEvent("job-progress", { detail: job }));
  }

  /* A message that says the job started ("until-job-ends") goes once the job has ended. */
  function dropStartedMessages() {
    document.querySelectorAll(".messages li.until-job-ends").forEach(function (item) {
      var list = item.parentElement;
      item.remove();
      if (list && !list.children.length) list.remove();
    });
  }

  function follow(root) {
    var url = root.dataset.jobProgressUrl;
    var interval = Number(root.dataset.jobInterval) || 1000;
    var activeStatuses = (root.dataset.jobActive || "queued running").split(/\s+/);
    function isActive(job) {
      return job.finished !== true && activeStatuses.indexOf(job.status) !== -1;
    }
    if (activeStatuses.indexOf(root.dataset.status) === -1) {
      dropStartedMessages();
      return;
    }
    function poll() {
      fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
        .then(function (reply) {
          return reply.ok ? reply.json() : Promise.reject(reply.status);
        })
        .then(function (job) {
          var active = isActive(job);
          show(root, job, active);
          if (active) {
            window.setTimeout(poll, interval);
            return;
          }
          dropStartedMessages();
          if (root.hasAttribute("data-job-reload")) {
            window.location.reload();
          }
        })
        .catch(function () {
          window.setTimeout(poll, interval * 5);
        });
    }
    poll();
  }

  document.querySelectorAll("[data-job-progress-url]").forEach(follow);
})();
