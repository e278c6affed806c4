/* The column chooser's order: the ticked columns are sent (and shown) in the list's order, and
   each item's up and down buttons move it, the focus staying on the button pressed and the new
   place said to screen readers. Without this script the buttons stay hidden. */
(function () {
  "use strict";
  const list = document.getElementById("column-order");
  if (!list) return;
  const status = document.getElementById("column-order-status");

  function announce(item) {
    if (!status) return;
    const items = Array.from(list.children);
    const label = item.querySelector("label");
    status.textContent = (list.dataset.moved || "")
      .replace("{column}", label ? label.textContent.trim() : "")
      .replace("{position}", String(items.indexOf(item) + 1))
      .replace("{count}", String(items.length));
  }

  list.querySelectorAll(".move-buttons").forEach(function (buttons) { buttons.hidden = false; });
  list.addEventListener("click", function (event) {
    const button = event.target.closest("button[data-move]");
    if (!button) return;
    const item = button.closest("li");
    const up = button.dataset.move === "up";
    const other = up ? item.previousElementSibling : item.nextElementSibling;
    if (!other) return;
    list.insertBefore(item, up ? other : other.nextElementSibling);
    button.focus();  // moving the item in the page takes the focus from it
    announce(item);
  });
})();

/* The sample list's selection: "select this page" ticks every row, and once the whole page is
   ticked the list offers every sample the filter matches (the bulk form's scope "all"). The
   scope select stays the truth, and works alone without this script. */
(function () {
  "use strict";
  const form = document.getElementById("bulk-form");
  const pageBox = document.getElementById("select-page");
  const scope = document.getElementById("bulk-scope");
  if (!form || !pageBox || !scope) return;
  const rows = Array.from(document.querySelectorAll("input[name=ids][form=bulk-form]"));
  const pageSelected = document.getElementById("page-selected");
  const allSelected = document.getElementById("all-selected");
  const selectAll = document.getElementById("select-all-matching");
  const clear = document.getElementById("clear-selection");

  function show() {
    const ticked = rows.filter(function (box) { return box.checked; }).length;
    const all = scope.value === "all";
    pageBox.checked = all || (rows.length > 0 && ticked === rows.length);
    pageBox.indeterminate = !all && ticked > 0 && ticked < rows.length;
    if (pageSelected) pageSelected.hidden = all || ticked !== rows.length || rows.length === 0;
    if (allSelected) allSelected.hidden = !all;
  }

  function tickPage(on) {
    rows.forEach(function (box) { box.checked = on; });
  }

  pageBox.addEventListener("change", function () {
    tickPage(pageBox.checked);
    scope.value = "selected";
    show();
  });
  rows.forEach(function (box) {
    box.addEventListener("change", function () {
      scope.value = "selected";
      show();
    });
  });
  scope.addEventListener("change", function () {
    if (scope.value === "all") tickPage(true);  // back to "ticked": the boxes stay as they are
    show();
  });
  if (selectAll) {
    selectAll.addEventListener("click", function () {
      scope.value = "all";
      tickPage(true);
      show();
    });
  }
  if (clear) {
    clear.addEventListener("click", function () {
      scope.value = "selected";
      tickPage(false);
      show();
    });
  }
  show();
})();
