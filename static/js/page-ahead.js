/* The next page of a work loop, loaded before it is asked for and swapped in without a page
   load: its <main> is adopted into this document off screen (so its images load and decode
   there), then replaces the <main> on screen at once. Shared by the review workbench
   (review-ahead.js) and the audit rating page (audit.js), which reserve the next sample or
   item on their server and say when to swap; measureShown() records how long the swap took
   from the key to the next image on screen (the benches read it). */
window.PageAhead = (function () {
  "use strict";
  const root = document.documentElement;

  /* The page in html, off screen: {holder, title, ready}, ready resolving once its images
     are decoded. */
  function adopt(html) {
    const doc = new DOMParser().parseFromString(html, "text/html");
    const holder = document.createElement("div");
    // Adopted into this document, its images start loading while it is off screen.
    doc.querySelector("main").childNodes.forEach((n) => holder.append(document.importNode(n, true)));
    if (window.StudioSite) window.StudioSite.sizeViewers(holder);
    const images = Array.from(holder.querySelectorAll("img"), (img) => img.decode().catch(() => null));
    return { holder: holder, title: doc.title, ready: Promise.all(images) };
  }

  /* The adopted page on screen instead of the current one. */
  function swapIn(page) {
    document.querySelector("main").replaceChildren(...page.holder.childNodes);
    document.title = page.title;
    window.scrollTo(0, 0);
  }

  /* From start (a performance.now() time: the key's event.timeStamp) to the task after the
     frame that shows the page's first image, decoded: performance.measure(name), and on the
     root element data-next-ms (the last time) and data-shown (how many were measured). */
  function measureShown(start, name) {
    const img = document.querySelector("main .zoom-image");
    const done = function () {
      // After the frame that shows it: a task queued from requestAnimationFrame runs after paint.
      requestAnimationFrame(function () {
        setTimeout(function () {
          const end = performance.now();
          performance.measure(name, { start: Math.max(0, start), end: end });
          root.dataset.nextMs = (end - start).toFixed(1);
          root.dataset.shown = String(Number(root.dataset.shown || 0) + 1);
        }, 0);
      });
    };
    if (img) img.decode().then(done, done);
    else done();
  }

  return { adopt: adopt, swapIn: swapIn, measureShown: measureShown };
})();
