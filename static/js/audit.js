/* The audit rating form: keys pick the rubric's values, Enter saves and opens the next item.
   Saving is idempotent (one submission id per page), so a double Enter makes one rating.
   Every string shown comes from the page's JSON config (translated by the server). */
(function () {
  "use strict";
  const config = JSON.parse(document.getElementById("audit-config").textContent);
  const S = config.strings;
  const form = document.getElementById("audit-form");
  const errorBox = document.getElementById("form-error");
  const state = document.getElementById("save-state");
  const started = Date.now();
  const submissionId = window.StudioApi.newUuid();
  let busy = false;

  function post(url, body) {
    return window.StudioApi.send("POST", url, body || {});
  }

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
      submission_uuid: submissionId,
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

  async function next() {
    const claimed = await post(config.urls.claim);
    if (claimed.status === 204) {
      window.location.assign(config.urls.detail);
      return;
    }
    if (!claimed.ok) throw new Error("claim " + claimed.status);
    const lease = await claimed.json();
    window.location.assign(lease.url);
  }

  async function submit() {
    if (busy) return;
    const body = payload();
    if (body === null) {
      errorBox.textContent = S.incomplete;
      return;
    }
    busy = true;
    errorBox.textContent = "";
    state.textContent = S.submitting;
    try {
      const response = await post(config.urls.ratings, body);
      if (response.status === 409 || response.ok) {
        state.textContent = S.submitted;
        await next();
        return;
      }
      const problem = await response.json().catch(() => ({}));
      errorBox.textContent = Object.values(problem).flat().join(" ") || S.failed;
    } catch (e) {
      errorBox.textContent = S.failed;
    }
    state.textContent = "";
    busy = false;
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    submit();
  });

  document.addEventListener("keydown", (event) => {
    const typing = event.target instanceof HTMLTextAreaElement || event.target instanceof HTMLInputElement && event.target.type === "text";
    if (typing) {
      if (event.key === "Escape") event.target.blur();
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
        event.preventDefault();
        submit();
      }
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key === "Enter") {
      event.preventDefault();
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
  });
})();
