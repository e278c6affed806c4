/* The next page of a work loop, loaded before it is asked for and swapped in without a page
   load: its <main> is adopted into this document off screen (so its images load and decode
   there), then replaces the <main> on screen at once. Shared by the review workbench
   (review-ahead.js) and the audit rating page (audit.js), which reserve the next sample or
   item on their server and say when to swap; measureShown() records how long the swap took
   from the key to the next image on screen (the benches read it). The outbox keeps what was
   sent in the background (reviews, ratings) until the server has it, in this browser's
   storage, so that a reload offers again what it refused; showPending() lists those. */
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

  /* Work sent in the background until the server has it, kept in localStorage under key (a
     reload finds it), or in this page alone when the browser keeps no storage. idOf(entry) is
     an entry's idempotency key: putting one again replaces it. An entry the server refused
     carries the reason in entry.failed. */
  function outbox(key, idOf) {
    let inPage = null;
    function all() {
      if (inPage) return inPage;
      try {
        return JSON.parse(localStorage.getItem(key) || "[]");
      } catch (e) {
        return [];
      }
    }
    function save(entries) {
      if (inPage) { inPage = entries; return; }
      try {
        localStorage.setItem(key, JSON.stringify(entries));
      } catch (e) {
        inPage = entries; // storage full or disabled: the entries live in this page
      }
    }
    return {
      all: all,
      put: function (entry) { save(all().filter((e) => idOf(e) !== idOf(entry)).concat([entry])); },
      drop: function (id) { save(all().filter((e) => idOf(e) !== id)); },
      failed: function () { return all().filter((e) => e.failed); },
    };
  }

  /* The refused entries in box, each with its reason, "Try again", "Open it" (its page) and
     "Discard it". strings: pendingFailed (with %(sample)s, the entry's label, and
     %(reason)s), retry, openIt, discard; act: {idOf, retry(entry), discard(entry)}. */
  function showPending(box, entries, strings, act) {
    box.replaceChildren();
    box.hidden = entries.length === 0;
    entries.forEach(function (entry) {
      const row = document.createElement("p");
      row.className = "error";
      row.dataset.pending = act.idOf(entry);
      row.textContent = strings.pendingFailed
        .replace("%(sample)s", entry.label || "")
        .replace("%(reason)s", entry.failed) + " ";
      const retry = document.createElement("button");
      retry.type = "button";
      retry.dataset.action = "retry";
      retry.textContent = strings.retry;
      retry.addEventListener("click", function () { act.retry(entry); });
      const open = document.createElement("a");
      open.href = entry.pageUrl;
      open.textContent = strings.openIt;
      const discard = document.createElement("button");
      discard.type = "button";
      discard.className = "secondary";
      discard.dataset.action = "discard";
      discard.textContent = strings.discard;
      discard.addEventListener("click", function () { act.discard(entry); });
      row.append(retry, " ", open, " ", discard);
      box.append(row);
    });
  }

  return {
    adopt: adopt,
    swapIn: swapIn,
    measureShown: measureShown,
    outbox: outbox,
    showPending: showPending,
  };
})();
