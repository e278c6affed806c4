/* A sample's media as templates/annotation/_media.html shows them: zoom and pan in each image
   viewer (wheel, drag, the buttons below it) and the audio's waveform from precomputed peaks,
   seekable by a click. Shared by the review workbench and the audit rating page, which call
   mount() on each page they show (the first, and each one swapped in) and bind the keys. */
window.StudioMedia = (function () {
  "use strict";

  function viewerOf(viewer) {
    const img = viewer.querySelector("img");
    const view = { scale: 1, x: 0, y: 0 };
    const label = viewer.nextElementSibling && viewer.nextElementSibling.querySelector(".zoom-level");
    function draw() {
      img.style.transform = "translate(" + view.x + "px," + view.y + "px) scale(" + view.scale + ")";
      img.dataset.scale = String(view.scale);
      if (label) label.textContent = Math.round(view.scale * 100) + "%";
    }
    view.by = function (factor) {
      view.scale = Math.min(16, Math.max(1, view.scale * factor));
      if (view.scale === 1) { view.x = 0; view.y = 0; }
      draw();
    };
    view.reset = function () { view.scale = 1; view.x = 0; view.y = 0; draw(); };
    view.full = function () { if (img.dataset.full && img.src !== img.dataset.full) img.src = img.dataset.full; };
    viewer.addEventListener("wheel", function (e) {
      e.preventDefault();
      view.by(e.deltaY < 0 ? 1.25 : 0.8);
      if (view.scale > 2) view.full();
    }, { passive: false });
    let drag = null;
    viewer.addEventListener("pointerdown", function (e) {
      drag = { x: e.clientX - view.x, y: e.clientY - view.y };
      viewer.setPointerCapture(e.pointerId);
    });
    viewer.addEventListener("pointermove", function (e) {
      if (!drag || view.scale === 1) return;
      view.x = e.clientX - drag.x;
      view.y = e.clientY - drag.y;
      draw();
    });
    viewer.addEventListener("pointerup", function () { drag = null; });
    const tools = viewer.nextElementSibling;
    if (tools) {
      tools.addEventListener("click", function (e) {
        const button = e.target.closest("[data-zoom]");
        if (!button) return;
        const action = button.dataset.zoom;
        if (action === "in") view.by(1.5);
        else if (action === "out") view.by(1 / 1.5);
        else if (action === "reset") view.reset();
        else view.full();
      });
    }
    draw();
    return view;
  }

  function clock(t) {
    const s = Math.floor(t || 0);
    return Math.floor(s / 60) + ":" + String(s % 60).padStart(2, "0");
  }

  /* Binds the media now in root; peaks: the audio's waveform (or null). */
  function mount(root, peaks) {
    const zoom = Array.from(root.querySelectorAll("[data-viewer]"), viewerOf);
    const audio = root.querySelector("#audio");
    const canvas = root.querySelector("#waveform");
    const timeLabel = root.querySelector("#audio-time");
    function drawWave() {
      if (!canvas) return;
      const ctx = canvas.getContext("2d");
      const w = canvas.width, h = canvas.height, bars = peaks || [];
      ctx.clearRect(0, 0, w, h);
      const played = audio && audio.duration ? audio.currentTime / audio.duration : 0;
      const step = bars.length ? w / bars.length : w;
      bars.forEach(function (p, i) {
        const bar = Math.max(1, p * (h - 4));
        ctx.fillStyle = i / bars.length < played ? "#2563eb" : "#94a3b8";
        ctx.fillRect(i * step, (h - bar) / 2, Math.max(1, step - 0.5), bar);
      });
      ctx.fillStyle = "#111827";
      ctx.fillRect(played * w, 0, 1, h);
      if (timeLabel && audio) timeLabel.textContent = clock(audio.currentTime) + " / " + clock(audio.duration);
    }
    function togglePlay() {
      if (!audio) return;
      if (audio.paused) audio.play();
      else audio.pause();
    }
    if (audio) {
      ["timeupdate", "loadedmetadata", "seeked", "play", "pause"].forEach(function (name) {
        audio.addEventListener(name, drawWave);
      });
      const play = root.querySelector("#play");
      if (play) play.addEventListener("click", togglePlay);
      if (canvas) {
        canvas.addEventListener("click", function (e) {
          if (!audio.duration) return;
          const rect = canvas.getBoundingClientRect();
          audio.currentTime = ((e.clientX - rect.left) / rect.width) * audio.duration;
        });
      }
      drawWave();
    }
    return {
      zoomIn: function () { zoom.forEach((z) => z.by(1.5)); },
      zoomOut: function () { zoom.forEach((z) => z.by(1 / 1.5)); },
      reset: function () { zoom.forEach((z) => z.reset()); },
      full: function () { zoom.forEach((z) => z.full()); },
      togglePlay: togglePlay,
      seek: function (delta) {
        if (audio && audio.duration) audio.currentTime = Math.min(audio.duration, Math.max(0, audio.currentTime + delta));
      },
      destroy: function () { if (audio) audio.pause(); },
    };
  }

  return { mount: mount };
})();
