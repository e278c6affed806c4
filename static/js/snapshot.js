// Snapshot page: follow a running build through the API, and show the manifest readably.
(function () {
  "use strict";
  const manifest = document.getElementById("snapshot-manifest");
  const view = document.getElementById("manifest-view");
  if (manifest && view) {
    view.textContent = JSON.stringify(JSON.parse(manifest.textContent), null, 2);
  }
  const box = document.getElementById("snapshot-progress");
  if (!box || box.dataset.running !== "1") {
    return;
  }
  const bar = box.querySelector("progress");
  const field = (name) => box.querySelector('[data-field="' + name + '"]');
  async function poll() {
    try {
      const response = await fetch(box.dataset.statusUrl, { credentials: "same-origin" });
      if (response.ok) {
        const snapshot = await response.json();
        if (snapshot.status !== "queued" && snapshot.status !== "running") {
          window.location.reload();
          return;
        }
        field("done").textContent = snapshot.done;
        field("total").textContent = snapshot.total === null ? "?" : snapshot.total;
        bar.max = snapshot.total || 0;
        bar.value = snapshot.done;
      }
    } catch (error) {
      // A dropped request is retried on the next tick.
    }
    window.setTimeout(poll, 2000);
  }
  window.setTimeout(poll, 1000);
})();
