/* Behaviour every page shares, kept out of the markup so the Content-Security-Policy can
   refuse all inline code: the language and theme menus submit themselves, an image viewer takes its
   image's aspect ratio, no taller than 70% of the window, and copy buttons copy. */
(function () {
  "use strict";

  ["language-select", "theme-select"].forEach(function (id) {
    var menu = document.getElementById(id);
    if (menu) {
      menu.addEventListener("change", function () {
        menu.form.submit();
      });
    }
  });

  /* Also called on a page swapped in without a reload (the review workbench's next sample). */
  function sizeViewers(root) {
    root.querySelectorAll("[data-viewer][data-width][data-height]").forEach(function (viewer) {
      var width = Number(viewer.dataset.width);
      var height = Number(viewer.dataset.height);
      if (width > 0 && height > 0) {
        // CSSOM properties, not a style attribute: the policy allows these.
        viewer.style.aspectRatio = width + " / " + height;
        viewer.style.maxWidth = "min(100%, calc(70vh * " + width + " / " + height + "))";
      }
    });
  }
  sizeViewers(document);
  window.StudioSite = { sizeViewers: sizeViewers };

  /* A button with data-copy="ID" copies the value of the field ID (an invitation's link). */
  document.querySelectorAll("button[data-copy]").forEach(function (button) {
    button.addEventListener("click", function () {
      var field = document.getElementById(button.dataset.copy);
      if (!field) {
        return;
      }
      field.select();
      var done = function () {
        button.textContent = button.dataset.copied || button.textContent;
      };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(field.value).then(done, function () {});
      } else if (document.execCommand("copy")) {
        done();
      }
    });
  });

  /* A wide table's scroll hint shows while more of it lies to the right: the box's own
     widths decide, on load, on resize and as it scrolls (static/css/site.css). */
  document.querySelectorAll(".scroll-box").forEach(function (box) {
    function update() {
      box.classList.toggle("more-right", box.scrollWidth - box.scrollLeft - box.clientWidth > 1);
    }
    if (window.ResizeObserver) {
      var observer = new ResizeObserver(update);
      observer.observe(box);
      Array.prototype.forEach.call(box.children, function (child) {
        observer.observe(child);
      });
    }
    box.addEventListener("scroll", update, { passive: true });
    window.addEventListener("resize", update);
    update();
  });
})();
