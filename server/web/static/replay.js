// The replay viewer's playback: play/pause at a chosen speed, keys (left/right step, Home/End,
// space plays and pauses), and every ?step=N link of the page (the steps, the hands, the
// timeline, the faults) followed in place. Each step's table is drawn by the server
// (GET /matches/{id}/table?step=N, the page's own template) and swapped in; the URL follows
// (history.replaceState) so the step can be linked. Without JavaScript the links do the same.
(function () {
  "use strict";
  var replay = document.getElementById("replay");
  if (!replay) { return; }
  var total = Number(replay.dataset.total);
  var view = document.getElementById("replay-view");
  var title = document.getElementById("replay-title");
  var button = document.getElementById("play");
  var speed = document.getElementById("speed");
  var box = replay.querySelector("form.jump input[name=step]");
  var timeline = document.getElementById("timeline");
  var now = document.getElementById("timeline-now");
  var step = Number(replay.dataset.step);
  var wanted = step;   // the step asked for last (a fetch may be on its way)
  var asked = 0;       // counts the fetches, so only the latest one's answer is shown
  var timer = null;
  var playing = false;

  function linkTo(n) { return "?step=" + n; }

  // Scroll the timeline's box (a long match is wider than it) to keep step n in sight.
  function keepInView(n) {
    if (!timeline) { return; }
    var frame = timeline.parentElement;
    var x = Number(timeline.dataset.pad) + n * Number(timeline.dataset.unit);
    if (x < frame.scrollLeft + 24 || x > frame.scrollLeft + frame.clientWidth - 24) {
      frame.scrollLeft = Math.max(0, x - frame.clientWidth / 2);
    }
  }

  function show(n, html) {
    view.innerHTML = html;
    var shown = view.firstElementChild;
    step = n;
    replay.dataset.step = String(n);
    title.textContent = shown.dataset.title;
    document.getElementById("prev").setAttribute("href", linkTo(Math.max(n - 1, 0)));
    document.getElementById("next").setAttribute("href", linkTo(Math.min(n + 1, total)));
    if (box) { box.value = String(n); }
    var hand = shown.dataset.hand;
    replay.querySelectorAll("nav.hands a").forEach(function (a) {
      a.classList.toggle("current", a.textContent === hand);
    });
    if (timeline) {
      var unit = Number(timeline.dataset.unit), pad = Number(timeline.dataset.pad);
      now.setAttribute("x", String(pad + n * unit - unit / 2 - 1));
      timeline.querySelectorAll("a.tl-step[aria-current]").forEach(function (a) {
        a.removeAttribute("aria-current");
      });
      var mark = timeline.querySelector('a.tl-step[data-step="' + n + '"]');
      if (mark) { mark.setAttribute("aria-current", "step"); }
      keepInView(n);
    }
    var url = new URL(window.location.href);
    url.searchParams.set("step", String(n));
    url.hash = "";
    window.history.replaceState(null, "", url.toString());
  }

  // Show step n (clamped); resolves once it is shown (or a later request took over).
  function go(n) {
    n = Math.max(0, Math.min(total, n));
    wanted = n;
    asked += 1;
    if (n === step) { return Promise.resolve(); }  // and any fetch on its way is dropped
    var mine = asked;
    return fetch(replay.dataset.table + linkTo(n), { headers: { Accept: "text/html" } })
      .then(function (response) {
        if (!response.ok) { throw new Error("step " + n + ": HTTP " + response.status); }
        return response.text();
      })
      .then(function (html) { if (mine === asked) { show(n, html); } })
      .catch(function () { window.location.assign(linkTo(n)); });  // the page can still do it
  }

  function interval() { return 1000 / Number(speed.value); }

  function tick() {
    timer = null;
    if (!playing) { return; }
    if (step >= total) { setPlaying(false); return; }
    go(step + 1).then(function () {
      if (playing && timer === null) {
        if (step >= total) { setPlaying(false); } else { timer = window.setTimeout(tick, interval()); }
      }
    });
  }

  function setPlaying(on) {
    playing = on;
    button.textContent = on ? "⏸ pause" : "▶ play";
    button.setAttribute("aria-pressed", on ? "true" : "false");
    if (timer !== null) { window.clearTimeout(timer); timer = null; }
    if (on) {
      if (step >= total) {  // from the end: play again from the start
        go(0).then(function () {
          if (playing && timer === null) { timer = window.setTimeout(tick, interval()); }
        });
      }
      else { tick(); }
    }
  }

  keepInView(step);
  button.hidden = false;
  document.getElementById("speed-box").hidden = false;
  button.addEventListener("click", function () { setPlaying(!playing); });
  speed.addEventListener("change", function () {
    if (playing && timer !== null) {
      window.clearTimeout(timer);
      timer = window.setTimeout(tick, interval());
    }
  });

  // Any link to ?step=N of this page (steps, hands, timeline, faults) is followed in place.
  document.addEventListener("click", function (event) {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey ||
        event.shiftKey || event.altKey) { return; }
    var link = event.target instanceof Element ? event.target.closest("a") : null;
    if (!link) { return; }
    var href = link.getAttribute("href") || "";
    if (!/^\?step=\d+(#.*)?$/.test(href)) { return; }
    event.preventDefault();
    var n = Number(new URLSearchParams(href.split("#")[0]).get("step"));
    if (playing) { setPlaying(false); }
    go(n);
    if (!replay.contains(link)) { replay.scrollIntoView(); }
  });

  document.addEventListener("keydown", function (event) {
    var target = event.target;
    if (event.altKey || event.ctrlKey || event.metaKey) { return; }
    if (target instanceof HTMLInputElement || target instanceof HTMLSelectElement ||
        target instanceof HTMLTextAreaElement) { return; }
    var moves = {
      ArrowLeft: function () { return wanted - 1; },
      ArrowRight: function () { return wanted + 1; },
      Home: function () { return 0; },
      End: function () { return total; }
    };
    if (moves[event.key]) {
      event.preventDefault();
      if (playing) { setPlaying(false); }
      go(moves[event.key]());
    } else if (event.key === " ") {
      if (target instanceof HTMLButtonElement) { return; }  // the button's own click
      event.preventDefault();
      button.click();
    }
  });
})();
