// The response upload form: a folder input (webkitdirectory) sends its files under their
// names only, so their paths inside the folder (webkitRelativePath) go in the hidden field
// named by its data-folder-paths attribute, in the order the files are sent.
(function () {
  "use strict";
  document.querySelectorAll("input[type=file][data-folder-paths]").forEach(function (input) {
    var target = document.getElementById(input.getAttribute("data-folder-paths"));
    if (!target) return;
    input.addEventListener("change", function () {
      var paths = Array.prototype.map.call(input.files, function (file) {
        return file.webkitRelativePath || file.name;
      });
      target.value = JSON.stringify(paths);
    });
  });
})();
