/* The workbench's next sample before it is asked for. While the reviewer works, the server
   reserves their next sample for a short while and sends its page; its images load and decode
   off screen. "Submit and next" then swaps that page in at once and sends the review in the
   background: once it is saved the reservation becomes the reviewer's lease and the one after
   is fetched. A review the server did not take stays in this browser (the outbox) and is shown
   above the form with "Try again", "Open it" and "Discard it"; nothing is dropped unseen. An
   unused reservation is given back when the page is left (a beacon), else it expires. The page
   is loaded off screen and swapped in by page-ahead.js. Loaded before review.js, which calls start() on every page it mounts. */
window.ReviewAhead = (function () {
  "use strict";
  const OUTBOX = "review-outbox";
  const KEY_AT = "review-key-at";
  const RENEW_MS = 45000;
  const root = document.documentElement;
  let config = null;
  let ahead = null; // the next sample: {token, sample, url, title, holder, ready}
  let shown = null; // the reservation on screen, not yet taken as the lease
  let loadSeq = 0;
  let renewTimer = null;
  let chain = null; // the background submit, take and prefetch in flight
  let keyAt = null;

  function post(url, fields) {
    return fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: { "X-CSRFToken": window.StudioApi.csrfToken() },
      body: new URLSearchParams(fields),
    });
  }

  /* ---- the outbox: reviews sent in the background until the server has them ---- */
  const uuidOf = (entry) => entry.body.client_uuid;
  const kept = window.PageAhead.outbox(OUTBOX, uuidOf);
  const outbox = kept.all;
  const outboxPut = kept.put;
  const outboxDrop = kept.drop;

  function messageOf(body) {
    if (!body) return config.strings.failed;
    if (typeof body.detail === "string") return body.detail;
    if (Array.isArray(body.detail)) return body.detail.join(" ");
    return Object.values(body).flat().join(" ");
  }

  function showPending() {
    const box = document.getElementById("pending-reviews");
    if (!box) return;
    window.PageAhead.showPending(box, kept.failed(), config.strings, {
      idOf: uuidOf,
      retry: function (entry) { run(deliver(entry)); },
      discard: function (entry) { outboxDrop(uuidOf(entry)); showPending(); },
    });
  }

  function fail(entry, reason) {
    outboxPut(Object.assign({}, entry, { failed: reason }));
    showPending();
  }

  /* Send a review (again: the same client_uuid never makes a second one); once saved, take
     the sample on screen as the lease, then fetch the next one. */
  function deliver(entry) {
    return window.StudioApi.send("POST", entry.url, entry.body).then(function (r) {
      if (r.status !== 200 && r.status !== 201) {
        return r.json().catch(() => null).then((d) => fail(entry, messageOf(d)));
      }
      outboxDrop(entry.body.client_uuid);
      try { localStorage.removeItem(entry.storageKey); } catch (e) { /* nothing kept */ }
      showPending();
      window.dispatchEvent(new CustomEvent("review-delivered", { detail: { label: entry.label, pageUrl: entry.pageUrl } }));
      return r.json().catch(() => null).then(function (d) {
        // After a gold item with feedback on, its page shows the feedback first.
        if (d && d.feedback) { window.location.assign(entry.pageUrl); return; }
        // The address follows the server: the next sample's once this review is saved (until
        // then a reload shows the sample whose review is on its way, with its draft).
        if (shown && window.location.pathname !== shown.url) history.pushState({ sample: shown.sample }, "", shown.url);
        return take();
      });
    }, function () { fail(entry, config.strings.offline); });
  }

  function take() {
    if (!shown || outbox().length) return null;
    const taking = shown;
    return post(config.urls.take, { token: taking.token }).then(function (r) {
      if (shown === taking) shown = null;
      if (r.ok) {
        return r.json().then(function (d) {
          const note = document.getElementById("lease-note");
          if (note) note.textContent = d.lease_note;
          return prefetch();
        });
      }
      // The reservation is gone: claim as usual, and open another sample if that is one.
      return window.StudioApi.send("POST", config.urls.claim, {}).then(function (c) {
        if (c.status !== 200) { window.location.assign(config.urls.queue); return; }
        return c.json().then(function (d) {
          if (d.sample.id !== taking.sample) window.location.assign(d.url);
          else return prefetch();
        });
      });
    });
  }

  function run(promise) {
    const mine = Promise.resolve(promise).catch(() => null).then(function () {
      if (chain === mine) chain = null;
    });
    chain = mine;
    return mine;
  }

  /* ---- the next sample, reserved and loaded off screen ---- */
  function prefetch() {
    if (!config.urls.ahead) return null;
    const seq = ++loadSeq;
    const previous = ahead ? ahead.token : "";
    root.dataset.ahead = "loading";
    return post(config.urls.ahead, previous ? { token: previous } : {}).then(function (r) {
      if (seq !== loadSeq) return null;
      if (!r.ok || r.status === 204) { ahead = null; root.dataset.ahead = "none"; return null; }
      return r.json().then(function (d) {
        if (d.renewed && ahead) {
          ahead.token = d.token;
          root.dataset.ahead = ahead.ready ? "ready" : "loading";
          return null;
        }
        return load(d, seq);
      });
    }).catch(function () {
      if (seq === loadSeq) root.dataset.ahead = "none"; // offline: the plain way stays
    }).finally(scheduleRenew);
  }

  function load(data, seq) {
    const page = window.PageAhead.adopt(data.html);
    ahead = { token: data.token, sample: data.sample, url: data.url, title: page.title, holder: page.holder, ready: false };
    const next = ahead;
    return page.ready.then(function () {
      if (seq !== loadSeq || ahead !== next) return;
      next.ready = true;
      root.dataset.ahead = "ready";
    });
  }

  function scheduleRenew() {
    clearTimeout(renewTimer);
    if (!ahead) return;
    renewTimer = setTimeout(function () {
      if (document.visibilityState === "visible" && !chain) run(prefetch());
      else scheduleRenew();
    }, RENEW_MS);
  }

  function release(token) {
    const body = new FormData();
    body.append("csrfmiddlewaretoken", window.StudioApi.csrfToken());
    body.append("token", token);
    navigator.sendBeacon(config.urls.release, body);
  }

  /* ---- the swap, and how long it took from the key to the image on screen ---- */
  function swap() {
    const next = ahead;
    ahead = null;
    loadSeq += 1;
    clearTimeout(renewTimer);
    window.PageAhead.swapIn(next);
    shown = next;
    root.dataset.ahead = "none";
    window.ReviewWorkbench.remount();
  }

  function measureShown() {
    if (keyAt === null) return;
    const start = keyAt;
    keyAt = null;
    window.PageAhead.measureShown(start, "review-next");
  }

  window.addEventListener("popstate", function () { window.location.reload(); });
  window.addEventListener("pagehide", function () {
    if (!config || !config.urls.release) return;
    [ahead, shown].forEach(function (reserved) { if (reserved) release(reserved.token); });
    ahead = null;
    shown = null;
  });

  return {
    /* Called by review.js on every workbench it mounts (the first, and each one swapped in). */
    start: function (pageConfig, swapped) {
      config = pageConfig;
      const carried = sessionStorage.getItem(KEY_AT);
      if (carried !== null) {
        sessionStorage.removeItem(KEY_AT);
        keyAt = Number(carried) - performance.timeOrigin;
      }
      measureShown();
      showPending();
      if (swapped) return;
      // Reviews a page left unconfirmed are sent again (the server keeps one of each).
      const begin = function () {
        run(Promise.all(outbox().map(deliver)).then(prefetch));
      };
      if (document.readyState === "complete") begin();
      else window.addEventListener("load", begin, { once: true });
    },
    /* Ctrl+Enter's time, so that the next page can say how long it took to show. */
    markKey: function (timeStamp) { keyAt = timeStamp; },
    /* Before a page load takes the next sample the plain way. */
    carryMark: function () {
      if (keyAt !== null) sessionStorage.setItem(KEY_AT, String(performance.timeOrigin + keyAt));
    },
    ready: function () { return Boolean(ahead && ahead.ready); },
    busy: function () { return chain; },
    blocked: function () { return outbox().some((e) => e.failed); },
    advance: function (entry) {
      outboxPut(entry);
      swap();
      run(deliver(entry));
    },
  };
})();
