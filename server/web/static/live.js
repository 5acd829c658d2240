// The live viewer: follows /api/live/{id}/events (server-sent events) and plays what arrives at
// a pace the watcher picks. Every step is buffered, then shown at 0.5, 1 (the default), 2 or 4
// steps a second, or as it comes; "N steps behind" counts what is buffered, and "jump to the
// present" shows it all at once. Hand ends and the match's end are shown when the playback
// reaches them, not when they arrive. Each step's table HTML is drawn and escaped by the server
// (the same template as the page; once per match, shared by every browser); this script sets
// only text and that HTML. Without JavaScript the page shows the table at load.
(function () {
  "use strict";
  var live = document.getElementById("live");
  if (!live || live.dataset.state !== "live") { return; }
  var board = document.getElementById("live-table");
  var status = document.getElementById("live-status");
  var last = document.getElementById("live-last");
  var over = document.getElementById("live-over");
  var handEnd = document.getElementById("live-hand");
  var pace = document.getElementById("pace");
  var behind = document.getElementById("live-behind");
  var jump = document.getElementById("live-jump");
  var source = new EventSource(live.dataset.events);
  var drawn = Number(live.dataset.step);  // the step the page was drawn after
  var seen = 0;        // the latest step the stream told of (played or not)
  var queued = drawn;  // the latest step buffered or shown
  var queue = [];      // events waiting for the playback: {name, data}
  var timer = null;
  var playedAt = -Infinity;  // when the playback last showed a step (the page's clock)
  document.getElementById("live-pace").hidden = false;

  function data(event) { return JSON.parse(event.data); }

  function plural(n, one, many) { return n + " " + (n === 1 ? one : many); }

  function showStep(step) {
    board.innerHTML = step.html;
    live.dataset.step = String(step.step);
    status.textContent = "Live: " + plural(step.step, "step", "steps") + " played.";
    // Numbered from 0, as the replay viewer numbers them (its ?step=N shows the table after it).
    last.textContent = "Step " + (step.step - 1) + ": " + step.who;
    if (step.seat !== null) {
      last.appendChild(document.createTextNode(": "));
      var action = document.createElement("strong");
      action.textContent = step.action;
      last.appendChild(action);
    }
  }

  function play(item) {
    var d = item.data;
    if (item.name === "step") {
      showStep(d);
    } else if (item.name === "hand") {
      handEnd.hidden = false;
      handEnd.textContent = "End of deal " + d.deal + ": " + d.detail +
        "; scores by side: " + d.scores.join(" / ") + ".";
    } else if (item.name === "end") {
      live.dataset.state = "over";
      status.textContent = "Match over: " + d.result;
      over.hidden = false;
    } else if (item.name === "cut") {
      live.dataset.state = "cut";
      status.textContent = d.reason;
    }
  }

  function stepsWaiting() {
    return queue.filter(function (item) { return item.name === "step"; }).length;
  }

  function tell() {
    var n = stepsWaiting();
    behind.dataset.behind = String(n);
    behind.textContent = n ? plural(n, "step", "steps") + " behind" : "Up to the present.";
    jump.disabled = n === 0;
  }

  // Show the events at the head that are not steps (they come with the step before them).
  function playHead() {
    while (queue.length && queue[0].name !== "step") { play(queue.shift()); }
  }

  function tick() {
    timer = null;
    playHead();
    if (queue.length) {
      play(queue.shift());
      playedAt = Date.now();
      playHead();
    }
    schedule();
  }

  function schedule() {
    playHead();
    if (pace.value === "live") {
      while (queue.length) { play(queue.shift()); }
      playedAt = Date.now();
    } else if (timer === null && queue.length) {
      var wait = 1000 / Number(pace.value) - (Date.now() - playedAt);
      if (wait <= 0) { tick(); return; }
      timer = window.setTimeout(tick, wait);
    }
    tell();
  }

  function arrive(name, d) {
    queue.push({ name: name, data: d });
    schedule();
  }

  pace.addEventListener("change", function () {
    if (timer !== null) { window.clearTimeout(timer); timer = null; }
    schedule();
  });
  jump.addEventListener("click", function () {
    if (timer !== null) { window.clearTimeout(timer); timer = null; }
    while (queue.length) { play(queue.shift()); }
    playedAt = Date.now();
    tell();
  });

  source.addEventListener("start", function () {
    live.dataset.followed = "yes";  // the stream is open: what comes next arrives here
  });
  source.addEventListener("step", function (event) {
    var step = data(event);
    seen = step.step;
    // A step the page was drawn after, or an earlier step of the referee's backlog (from
    // before this web face watched: it has no table), is not played.
    if (!step.html || step.step <= queued) { return; }
    queued = step.step;
    arrive("step", step);
  });
  source.addEventListener("hand", function (event) {
    // A hand that ended before the page was drawn is not played.
    if (seen >= drawn) { arrive("hand", data(event)); }
  });
  source.addEventListener("end", function (event) {
    source.close();
    arrive("end", data(event));
  });
  source.addEventListener("cut", function (event) {
    source.close();
    arrive("cut", data(event));
  });
  source.addEventListener("error", function () {
    if (source.readyState === EventSource.CLOSED && live.dataset.state === "live") {
      source.close();
      arrive("cut", { reason: "The live stream closed; reload the page to follow the match again." });
    }
  });
})();
