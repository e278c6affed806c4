/* The judges page: while a judge's test is queued or running, poll it and show the page
   again once it has ended (the template writes its outcome, translated). */
(function () {
  "use strict";

  var INTERVAL_MS = 1000;
  var pending = Array.prototype.filter.call(
    document.querySelectorAll("[data-check-url]"),
    function (cell) {
      var status = cell.getAttribute("data-status");
      return status === "queued" || status === "running";
    }
  );
  if (!pending.length) {
    return;
  }

  function poll() {
    Promise.all(pending.map(function (cell) {
      return fetch(cell.getAttribute("data-check-url"), {
        headers: { Accept: "application/json" },
        credentials: "same-origin"
      }).then(function (response) {
        return response.ok ? response.json() : { finished: false };
      });
    })).then(function (checks) {
      if (checks.some(function (check) { return check.finished; })) {
        window.location.reload();
      } else {
        window.setTimeout(poll, INTERVAL_MS);
      }
    }).catch(function () {
      window.setTimeout(poll, INTERVAL_MS * 3);
    });
  }

  window.setTimeout(poll, INTERVAL_MS);
})();
