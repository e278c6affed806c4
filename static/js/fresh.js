/* A page that shows the state of a form (submitted or not) is never shown from the browser's
   back-forward cache: coming back to it loads it again, so it tells what the server knows. */
(function () {
  "use strict";
  window.addEventListener("pageshow", function (event) {
    if (event.persisted) window.location.reload();
  });
})();
