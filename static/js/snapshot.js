// Snapshot page: show the manifest readably (the build's progress is followed by job-progress.js).
(function () {
  "use strict";
  const manifest = document.getElementById("snapshot-manifest");
  const view = document.getElementById("manifest-view");
  if (manifest && view) {
    view.textContent = JSON.stringify(JSON.parse(manifest.textContent), null, 2);
  }
})();
