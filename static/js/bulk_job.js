/* A bulk action running in the background: reload its page until it has ended. */
(function () {
  "use strict";
  const box = document.getElementById("bulk-job");
  if (box && box.dataset.running === "1") {
    window.setTimeout(function () { window.location.reload(); }, 2000);
  }
})();
