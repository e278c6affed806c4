// While a newer result is being computed, wait for it and show it: poll the JSON of the
// computation when the page names one (data-poll-url), else reload the page, which is cheap.
(function () {
  "use strict";
  var state = document.querySelector("[data-computing]");
  if (!state) {
    return;
  }
  var poll = state.dataset.pollUrl;
  var delay = 3000;
  function tick() {
    if (!poll) {
      window.location.reload();
      return;
    }
    fetch(poll, { headers: { Accept: "application/json" }, credentials: "same-origin" })
      .then(function (response) {
        return response.ok ? response.json() : null;
      })
      .then(function (body) {
        if (body && !body.computing) {
          window.location.reload();
        } else {
          setTimeout(tick, delay);
        }
      })
      .catch(function () {
        setTimeout(tick, delay);
      });
  }
  setTimeout(tick, delay);
})();
