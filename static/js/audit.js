/* The audit rating page: keys pick the rubric's values, Enter saves and shows the next item.
   While the auditor rates, the server reserves their next item for a short while and sends its
   page (loaded off screen by page-ahead.js); saving then swaps that page in at once and sends
   the rating in the background: once it is saved the reservation becomes the auditor's lease
   and the one after is fetched. Without a reserved page (nothing left, or not loaded yet) the
   rating is saved and the next item opened by a page load. Saving is idempotent (one
   submission id per page), so a double Enter makes one rating. A rating sent in the background
   stays in this browser until the server has it (page-ahead.js's outbox, as the workbench keeps
   its reviews): one the server refused is shown with "Try again", "Open it" and "Discard it",
   after a reload too, and one a page left unconfirmed is sent again. Zoom, pan and the waveform are
   media.js's. Every string shown comes from the page's JSON config (translated by the
   server). Without this script the form posts and the server opens the next item. */
(function () {
  "use strict";
  const KEY_AT = "audit-key-at";
  const OUTBOX = "audit-outbox";
  const RENEW_MS = 45000;
  const root = document.documentElement;
  const Ahead = window.PageAhead;
  let config = null;
  let ahead = null; // the next item: {token, item, url, title, holder, ready}
  let shown = null; // the reservation on screen, not yet taken as the lease
  let loadSeq = 0;
  let renewTimer = null;
  let chain = null; // the background rating, take and prefetch in flight
  const uuidOf = (entry) => entry.body.submission_uuid;
  const kept = Ahead.outbox(OUTBOX, uuidOf); // ratings sent in the background, until saved
  let keyAt = null;

  function post(url, fields) {
    return fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: { "X-CSRFToken": window.StudioApi.csrfToken() },
      body: new URLSearchParams(fields),
    });
  }

  function run(promise) {
    const mine = Promise.resolve(promise).catch(() => null).then(function () {
      if (chain === mine) chain = null;
    });
    chain = mine;
    return mine;
  }

  function messageOf(body) {
    if (!body) return config.strings.failed;
    if (typeof body.detail === "string") return body.detail;
    if (Array.isArray(body.detail)) return body.detail.join(" ");
    return Object.values(body).flat().join(" ") || config.strings.failed;
  }

  /* ---- the ratings sent in the background, and refusals shown with "Try again" ---- */
  function showFailed() {
    const box = document.getElementById("pending-rating");
    if (!box) return;
    Ahead.showPending(box, kept.failed(), config.strings, {
      idOf: uuidOf,
      retry: function (entry) { run(deliver(entry)); },
      discard: function (entry) { kept.drop(uuidOf(entry)); showFailed(); },
    });
  }

  function fail(entry, reason) {
    kept.put(Object.assign({}, entry, { failed: reason }));
    showFailed();
  }

  function deliver(entry) {
    return window.StudioApi.send("POST", entry.url, entry.body).then(function (r) {
      // 409: rated already, or no rating is needed any more: nothing to keep either way.
      if (!r.ok && r.status !== 409) {
        return r.json().catch(() => null).then((d) => fail(entry, messageOf(d)));
      }
      kept.drop(uuidOf(entry));
      showFailed();
      // The address follows the server: the next item's once this rating is saved.
      if (shown && window.location.pathname !== shown.url) history.pushState({ item: shown.item }, "", shown.url);
      return take();
    }, function () { fail(entry, config.strings.offline); });
  }

  function take() {
    if (!shown || kept.all().length) return null;
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
      // The reservation is gone: claim as usual, and open another item if that is one.
      return window.StudioApi.send("POST", config.urls.claim, {}).then(function (c) {
        if (c.status !== 200) { window.location.assign(config.urls.detail); return; }
        return c.json().then(function (d) {
          if (d.item !== taking.item) window.location.assign(d.url);
          else return prefetch();
        });
      });
    });
  }

  /* ---- the next item, reserved and loaded off screen ---- */
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
        const page = Ahead.adopt(d.html);
        const next = { token: d.token, item: d.item, url: d.url, title: page.title, holder: page.holder, ready: false };
        ahead = next;
        return page.ready.then(function () {
          if (seq !== loadSeq || ahead !== next) return;
          next.ready = true;
          root.dataset.ahead = "ready";
        });
      });
    }).catch(function () {
      if (seq === loadSeq) root.dataset.ahead = "none"; // offline: the plain way stays
    }).finally(scheduleRenew);
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

  window.addEventListener("popstate", function () { window.location.reload(); });
  window.addEventListener("pagehide", function () {
    if (!config || !config.urls.release) return;
    [ahead, shown].forEach(function (reserved) { if (reserved) release(reserved.token); });
    ahead = null;
    shown = null;
  });

  /* ---- one rating page: its form, keys and media; destroy() unbinds it before the next ---- */
  function mount(swapped) {
    const bound = new AbortController();
    const on = { signal: bound.signal };
    config = JSON.parse(document.getElementById("audit-config").textContent);
    const S = config.strings;
    const form = document.getElementById("audit-form");
    const errorBox = document.getElementById("form-error");
    const state = document.getElementById("save-state");
    const media = window.StudioMedia.mount(document, config.peaks);
    const started = Date.now();
    let busy = false;

    function choose(name, value) {
      for (const input of form.querySelectorAll('input[name="' + name + '"]')) {
        input.checked = input.value === value;
      }
    }

    function value(name) {
      const checked = form.querySelector('input[name="' + name + '"]:checked');
      return checked ? checked.value : null;
    }

    function payload() {
      const body = {
        item: config.itemId,
        submission_uuid: config.submissionUuid,
        note: form.elements.note.value,
        seconds_spent: (Date.now() - started) / 1000,
      };
      for (const field of config.fields) {
        const v = value(field.name);
        if (v === null) return null;
        body[field.name] = field.name === "safety_label" ? v : Number(v);
      }
      return body;
    }

    function goNext() {
      if (keyAt !== null) sessionStorage.setItem(KEY_AT, String(performance.timeOrigin + keyAt));
      return window.StudioApi.send("POST", config.urls.claim, {}).then(function (claimed) {
        if (claimed.status !== 200) { window.location.assign(config.urls.detail); return; }
        return claimed.json().then(function (lease) { window.location.assign(lease.url); });
      });
    }

    function submit() {
      if (busy) return;
      const body = payload();
      if (body === null || kept.failed().length) {
        errorBox.textContent = body === null ? S.incomplete : S.pendingFirst;
        keyAt = null;
        return;
      }
      if (chain) {
        // The earlier rating is still on its way, or the next item still loading.
        state.textContent = S.submitting;
        chain.then(submit);
        return;
      }
      busy = true;
      errorBox.textContent = "";
      if (ahead && ahead.ready) {
        const entry = { url: config.urls.ratings, body: body, pageUrl: window.location.pathname };
        kept.put(entry); // kept until the server has it, a reload meanwhile sends it again
        const next = ahead;
        ahead = null;
        loadSeq += 1;
        clearTimeout(renewTimer);
        Ahead.swapIn(next);
        shown = next;
        root.dataset.ahead = "none";
        remount();
        run(deliver(entry));
        return;
      }
      state.textContent = S.submitting;
      window.StudioApi.send("POST", config.urls.ratings, body).then(function (response) {
        if (response.status === 409 || response.ok) {
          state.textContent = S.submitted;
          return goNext();
        }
        return response.json().catch(() => null).then(function (problem) {
          errorBox.textContent = messageOf(problem);
          state.textContent = "";
          busy = false;
        });
      }).catch(function () {
        errorBox.textContent = S.failed;
        state.textContent = "";
        busy = false;
      });
    }

    form.addEventListener("submit", function (event) {
      event.preventDefault();
      keyAt = event.timeStamp;
      submit();
    });

    const mediaKeys = {
      "+": media.zoomIn,
      "=": media.zoomIn,
      "-": media.zoomOut,
      f: media.full,
      p: media.togglePlay,
      ArrowLeft: () => media.seek(-5),
      ArrowRight: () => media.seek(5),
    };
    document.addEventListener("keydown", function (event) {
      const target = event.target;
      const typing = target instanceof HTMLTextAreaElement || target instanceof HTMLInputElement && target.type === "text";
      if (typing) {
        if (event.key === "Escape") target.blur();
        if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
          event.preventDefault();
          keyAt = event.timeStamp;
          submit();
        }
        return;
      }
      if (event.ctrlKey || event.metaKey || event.altKey) return;
      if (event.key === "Enter") {
        event.preventDefault();
        keyAt = event.timeStamp;
        submit();
        return;
      }
      for (const field of config.fields) {
        const v = field.keys[event.key.toLowerCase()];
        if (v !== undefined) {
          event.preventDefault();
          choose(field.name, v);
          errorBox.textContent = "";
          return;
        }
      }
      const act = mediaKeys[event.key];
      if (act) { event.preventDefault(); act(); }
    }, on);

    const carried = sessionStorage.getItem(KEY_AT);
    if (carried !== null) {
      sessionStorage.removeItem(KEY_AT);
      keyAt = Number(carried) - performance.timeOrigin;
    }
    if (keyAt !== null) {
      Ahead.measureShown(keyAt, "audit-next");
      keyAt = null;
    }
    showFailed();
    if (!swapped) {
      // Ratings a page left unconfirmed are sent again (the server keeps one of each).
      const begin = function () { run(Promise.all(kept.all().map(deliver)).then(prefetch)); };
      if (document.readyState === "complete") begin();
      else window.addEventListener("load", begin, { once: true });
    }
    return {
      destroy: function () {
        bound.abort();
        media.destroy();
      },
    };
  }

  let current = mount(false);
  function remount() {
    current.destroy();
    current = mount(true);
  }
})();
