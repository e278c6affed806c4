/* The review workbench: keyboard decisions, drafts that survive a reload or a dropped
   connection, and idempotent "submit and next" (zoom, pan and the waveform are media.js's).
   Every string shown comes from the page's JSON config (translated by the server). */
(function () {
  "use strict";
  const api = window.StudioApi.send;
  const newUuid = window.StudioApi.newUuid;
  const Ahead = window.ReviewAhead;

  /* Binds the workbench now in the page; destroy() unbinds it before the next one is swapped
     in (listeners on the document and window go with their AbortController). */
  function mount(swapped) {
    const bound = new AbortController();
    const on = { signal: bound.signal };
    const config = JSON.parse(document.getElementById("review-config").textContent);
    const S = config.strings;
    const form = document.getElementById("review-form");
    const saveState = document.getElementById("save-state");
    const errorBox = document.getElementById("form-error");
    const storageKey = "review-draft:" + config.sampleId;
    /* Drafts of version 1 held every field, also the empty drop-downs of datasets without
       terms; restoring them would send those blanks as edits, so they are ignored. */
    const DRAFT_VERSION = 2;
    let secondsSpent = 0;
    let submitting = false;

    /* ---- form state ---- */
    function readState() {
      const state = { version: DRAFT_VERSION, fields: {}, seconds: secondsSpent, savedAt: Date.now() };
      for (const el of form.elements) {
        if (!el.name || el.name === "csrfmiddlewaretoken") continue;
        if (el.type === "radio") {
          if (el.checked) state.fields[el.name] = el.value;
          else if (!(el.name in state.fields)) state.fields[el.name] = null;
        } else {
          state.fields[el.name] = el.value;
        }
      }
      return state;
    }

    function applyState(state) {
      if (!state || !state.fields) return;
      for (const el of form.elements) {
        if (!el.name || !(el.name in state.fields)) continue;
        const value = state.fields[el.name];
        if (el.type === "radio") el.checked = value !== null && el.value === value;
        else if (el.tagName === "SELECT" && !Array.from(el.options).some((o) => o.value === value)) continue;
        else if (value !== null && value !== undefined) el.value = value;
      }
      secondsSpent = Number(state.seconds) || 0;
    }

    function localDraft() {
      try {
        return JSON.parse(localStorage.getItem(storageKey) || "null");
      } catch (e) {
        return null;
      }
    }

    const local = localDraft();
    const server = config.serverDraft;
    const restored = [local, server].filter((d) => d && d.version === DRAFT_VERSION).sort((a, b) => (b.savedAt || 0) - (a.savedAt || 0))[0];
    if (restored) {
      applyState(restored);
      saveState.textContent = S.restored;
    }
    if (!form.elements.client_uuid.value) form.elements.client_uuid.value = newUuid();

    let saveTimer = null;
    function saveLocal() {
      try {
        localStorage.setItem(storageKey, JSON.stringify(readState()));
      } catch (e) {
        /* storage full or disabled: the server draft still works */
      }
    }
    function saveServer() {
      const state = readState();
      api("PUT", config.urls.draft, { payload: state })
        .then((r) => {
          saveState.textContent = r.ok ? S.saved : S.savedLocally;
          saveState.dataset.state = r.ok ? "server" : "local";
        })
        .catch(() => {
          saveState.textContent = S.savedLocally;
          saveState.dataset.state = "local";
        });
    }
    function changed() {
      saveLocal();
      clearTimeout(saveTimer);
      saveTimer = setTimeout(saveServer, 600);
    }
    form.addEventListener("input", changed);
    form.addEventListener("change", changed);
    window.addEventListener("online", saveServer, on);

    const ticker = setInterval(function () {
      if (document.visibilityState === "visible") secondsSpent += 1;
    }, 1000);

    /* ---- image zoom and pan, audio and its waveform (static/js/media.js) ---- */
    const media = window.StudioMedia.mount(document, config.peaks);

    /* ---- decisions ---- */
    function setRadio(name, value) {
      for (const el of form.querySelectorAll('input[type="radio"][name="' + name + '"]')) {
        el.checked = el.value === value;
      }
      changed();
    }
    function reject(reason) {
      setRadio("decision", "reject");
      form.elements.reject_reason.value = reason;
      changed();
    }

    /* Only the fields the reviewer changed are sent: a field left as the sample holds it is
       no edit, so accepting untouched changes the status and nothing else. */
    function conditions(value) {
      const items = Array.isArray(value) ? value : String(value || "").split("\n");
      return items.map((c) => String(c).trim()).filter(Boolean);
    }
    function edited(key, value) {
      const initial = (config.initial || {})[key];
      if (key === "predicate") return conditions(value).join("\n") !== conditions(initial).join("\n");
      return String(value === null || value === undefined ? "" : value).trim()
        !== String(initial === null || initial === undefined ? "" : initial).trim();
    }
    function payload() {
      const state = readState().fields;
      const values = {};
      for (const name in state) {
        if (!name.startsWith("values.")) continue;
        const key = name.slice(7);
        if (state[name] === null || !edited(key, state[name])) continue;
        values[key] = key === "predicate" ? conditions(state[name]) : state[name];
      }
      const bool = (v) => (v === "true" ? true : v === "false" ? false : null);
      const num = (v) => (v ? Number(v) : null);
      return {
        client_uuid: state.client_uuid,
        sample: config.sampleId,
        decision: state.decision,
        values: state.decision === "reject" ? {} : values,
        reject_reason: state.decision === "reject" ? state.reject_reason : "",
        clarity: num(state.clarity),
        naturalness: num(state.naturalness),
        image_aligned: bool(state.image_aligned),
        audio_aligned: bool(state.audio_aligned),
        note: state.note || "",
        seconds_spent: secondsSpent,
      };
    }

    function messageOf(body) {
      if (!body) return S.failed;
      if (typeof body.detail === "string") return body.detail;
      if (Array.isArray(body.detail)) return body.detail.join(" ");
      return Object.values(body).flat().join(" ");
    }

    function goNext() {
      Ahead.carryMark();
      return api("POST", config.urls.claim, {}).then(function (r) {
        if (r.status === 200) return r.json().then((d) => { window.location.assign(d.url); });
        window.location.assign(config.urls.queue);
      });
    }

    function submit() {
      if (submitting) return;
      const body = payload();
      if (!body.decision) { errorBox.textContent = S.noDecision; return; }
      if (body.decision === "reject" && !body.reject_reason) { errorBox.textContent = S.needReason; return; }
      const amend = config.urls.amend;
      if (!amend && Ahead.blocked()) { errorBox.textContent = S.pendingFirst; return; }
      if (!amend && Ahead.busy()) {
        // The earlier review is still on its way, or the next sample still loading.
        saveState.textContent = S.submitting;
        Ahead.busy().then(submit);
        return;
      }
      submitting = true;
      errorBox.textContent = "";
      if (!amend && Ahead.ready()) {
        saveLocal();
        clearTimeout(saveTimer);
        Ahead.advance({
          body: body,
          url: config.urls.reviews,
          storageKey: storageKey,
          label: config.externalId,
          pageUrl: window.location.pathname,
        });
        return;
      }
      saveState.textContent = S.submitting;
      api(amend ? "PUT" : "POST", amend || config.urls.reviews, body)
        .then(function (r) {
          if (r.status === 200 || r.status === 201) {
            localStorage.removeItem(storageKey);
            saveState.textContent = S.submitted;
            if (amend) {
              // Reopened by undo: back to the sample the reviewer left (their lease).
              if (config.afterAmend === "next") return goNext();
              window.location.assign(config.urls.mine);
              return;
            }
            // After a gold item with feedback on, the page shows it before moving on.
            return r.json().catch(() => null).then(function (d) {
              if (d && d.feedback) { window.location.reload(); return; }
              return goNext();
            });
          }
          return r.json().catch(() => null).then(function (data) {
            errorBox.textContent = messageOf(data);
            submitting = false;
          });
        })
        .catch(function () {
          errorBox.textContent = S.failed;
          submitting = false;
        });
    }
    form.addEventListener("submit", function (e) { e.preventDefault(); submit(); });

    /* Skip: `k` puts the caret in the reason, Enter there skips (not the form's submit). */
    let skipping = false;
    function skip() {
      if (skipping) return;
      const reason = form.elements.skip_reason.value.trim();
      if (!reason) { errorBox.textContent = S.needSkipReason; form.elements.skip_reason.focus(); return; }
      skipping = true;
      errorBox.textContent = "";
      api("POST", config.urls.skip, { reason: reason }).then(function (r) {
        if (r.ok) { localStorage.removeItem(storageKey); return goNext(); }
        skipping = false;
        return r.json().catch(() => null).then((d) => { errorBox.textContent = messageOf(d); });
      }, function () {
        skipping = false;
        errorBox.textContent = S.offline;
      });
    }
    document.getElementById("skip").addEventListener("click", skip);

    /* ---- undo: the last submission reopened to amend, while it still can be ---- */
    let undoTarget = config.undo || null;
    const undoLink = document.getElementById("undo");
    function showUndo() {
      if (!undoLink) return;
      undoLink.hidden = !undoTarget;
      if (!undoTarget) return;
      undoLink.href = undoTarget.url;
      undoLink.querySelector("[data-undo-label]").textContent = undoTarget.label;
    }
    showUndo();
    // A review sent in the background (the next sample already on screen) becomes the one to undo.
    window.addEventListener("review-delivered", function (e) {
      if (config.urls.amend) return;
      undoTarget = { url: e.detail.pageUrl + "?amend=1&undo=1", label: e.detail.label };
      showUndo();
    }, on);
    function undo() {
      if (config.urls.amend) return;
      if (Ahead.busy()) { saveState.textContent = S.submitting; Ahead.busy().then(undo); return; }
      if (!undoTarget) { errorBox.textContent = S.nothingToUndo; return; }
      saveLocal();
      window.location.assign(undoTarget.url);
    }
    if (undoLink) undoLink.addEventListener("click", function (e) { e.preventDefault(); undo(); });

    /* ---- the dataset's instructions: closed stays closed in this dataset ---- */
    const instructions = document.getElementById("instructions");
    if (instructions) {
      const closedKey = "review-instructions-closed:" + config.datasetId;
      try { if (localStorage.getItem(closedKey) === "1") instructions.open = false; } catch (e) { /* no storage */ }
      instructions.addEventListener("toggle", function () {
        try {
          if (instructions.open) localStorage.removeItem(closedKey);
          else localStorage.setItem(closedKey, "1");
        } catch (e) { /* no storage: it opens again on the next sample */ }
      });
    }

    /* ---- the "?" overlay of every key ---- */
    const keysHelp = document.getElementById("keys-help");
    function openKeys() { if (keysHelp && !keysHelp.open) keysHelp.showModal(); }
    for (const opener of document.querySelectorAll("[data-open-keys]")) opener.addEventListener("click", openKeys);
    if (keysHelp) {
      keysHelp.querySelector("[data-close-keys]").addEventListener("click", function () { keysHelp.close(); });
    }

    /* ---- comments ---- */
    const commentForm = document.getElementById("comment-form");
    commentForm.addEventListener("submit", function (e) {
      e.preventDefault();
      const text = commentForm.elements.text.value.trim();
      if (!text) return;
      api("POST", config.urls.comments, { text: text }).then(function (r) {
        if (!r.ok) return;
        return r.json().then(function (c) {
          const li = document.createElement("li");
          const who = document.createElement("b");
          who.textContent = c.author;
          const body = document.createElement("div");
          body.className = "data";
          body.textContent = c.text;
          li.append(who, body);
          document.getElementById("comments").append(li);
          commentForm.elements.text.value = "";
        });
      });
    });

    /* ---- keyboard ---- */
    const focusKeys = { g: "f-group", c: "f-category", b: "f-subcategory", e: "f-scenario", w: "f-answer", k: "f-skip" };
    focusKeys.t = document.getElementById("f-explanation") ? "f-explanation" : "f-predicate";
    document.addEventListener("keydown", function (e) {
      const target = e.target;
      const typing = target && (target.tagName === "INPUT" && target.type !== "radio" || target.tagName === "TEXTAREA" || target.tagName === "SELECT");
      if (keysHelp && keysHelp.open) return; // the dialog closes itself on Escape
      if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
        e.preventDefault();
        Ahead.markKey(e.timeStamp);
        submit();
        return;
      }
      if (e.key === "Enter" && target && target.id === "f-skip") {
        e.preventDefault();
        skip();
        return;
      }
      if (e.key === "Escape" && typing) { target.blur(); return; }
      if (typing || e.ctrlKey || e.metaKey || e.altKey) return;
      const digit = /^Digit([1-5])$/.exec(e.code);
      if (digit) { setRadio(e.shiftKey ? "naturalness" : "clarity", digit[1]); e.preventDefault(); return; }
      const key = e.key;
      const handled = {
        a: () => setRadio("decision", "accept"),
        x: () => setRadio("decision", "reject"),
        i: () => reject("invalid"),
        d: () => reject("duplicate"),
        o: () => reject("offensive"),
        l: () => reject("licence"),
        s: () => setRadio("values.safety_label", "safe"),
        u: () => setRadio("values.safety_label", "unsafe"),
        m: () => setRadio("image_aligned", "true"),
        M: () => setRadio("image_aligned", "false"),
        n: () => setRadio("audio_aligned", "true"),
        N: () => setRadio("audio_aligned", "false"),
        p: media.togglePlay,
        ArrowLeft: () => media.seek(-5),
        ArrowRight: () => media.seek(5),
        "+": media.zoomIn,
        "=": media.zoomIn,
        "-": media.zoomOut,
        "0": media.reset,
        f: media.full,
        z: undo,
        "?": openKeys,
      }[key];
      if (handled) { e.preventDefault(); handled(); return; }
      if (focusKeys[key] && document.getElementById(focusKeys[key])) {
        e.preventDefault();
        document.getElementById(focusKeys[key]).focus();
      }
    }, on);

    Ahead.start(config, swapped);
    return {
      destroy: function () {
        bound.abort();
        clearInterval(ticker);
        clearTimeout(saveTimer);
        media.destroy();
      },
    };
  }

  let current = mount(false);
  window.ReviewWorkbench = {
    remount: function () {
      current.destroy();
      current = mount(true);
    },
  };
})();
