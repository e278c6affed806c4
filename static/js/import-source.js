// The import form: only the chosen source's input is shown (the file for an upload, the path
// for a server folder, the prefix for S3); without scripts every input stays visible.
(function () {
  "use strict";
  var form = document.getElementById("import-form");
  if (!form) return;
  var radios = form.querySelectorAll("input[name=source_kind]");
  function show() {
    var chosen = form.querySelector("input[name=source_kind]:checked");
    form.querySelectorAll("[data-source]").forEach(function (field) {
      field.hidden = !!chosen && field.getAttribute("data-source") !== chosen.value;
    });
  }
  radios.forEach(function (radio) {
    radio.addEventListener("change", show);
  });
  show();
})();
