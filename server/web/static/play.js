// The person's table: follows /api/play/{id}/events (server-sent events) and swaps in each view;
// posts the person's action. The panel's HTML is drawn and escaped by the server (the same
// template as the page); this script sets only text and that HTML. Without JavaScript the page
// still works: each action is a button of a plain form, and the page reloads while it waits.
// Keyboard: Tab / Shift-Tab move through the actions, Enter or Space plays the focused one, the
// digits 1-9 play the Nth legal action, and the focus lands on the first action at each turn.
(function () {
  "use strict";
  var play = document.getElementById("play");
  if (!play) { return; }
  var panel = document.getElementById("play-panel");
  var error = document.getElementById("play-error");
  var ticking = null;
  var source = null;

  function actions() {
    return Array.prototype.slice.call(panel.querySelectorAll("[data-action]"));
  }

  function showError(text) {
    error.textContent = text;
    error.hidden = !text;
  }

  function tick() {
    if (ticking !== null) { clearInterval(ticking); ticking = null; }
    var clock = document.getElementById("play-clock");
    if (!clock) { return; }
    var left = clock.querySelector(".clock-left");
    var until = Date.now() + Number(clock.dataset.moveMs);
    var bank = Number(clock.dataset.bankMs);
    function show() {
      var ms = until - Date.now();
      if (ms >= 0) {
        left.textContent = Math.ceil(ms / 1000) + " s";
      } else {
        var banked = Math.max(0, bank + ms);
        left.textContent = "0 s (bank: " + Math.ceil(banked / 1000) + " s)";
      }
    }
    show();
    ticking = setInterval(show, 250);
  }

  function turnBegins() {
    // The list of actions first (Tab goes on through it); the table's marks come before it.
    var first = panel.querySelector("#play-actions [data-action]") || actions()[0];
    if (first) { first.focus(); }
  }

  function swap(view) {
    // The view the page shows already (the stream's first event, after a load): keep it, and
    // the focus in it.
    if (play.dataset.version === String(view.version) && play.dataset.state === view.state) {
      return;
    }
    panel.innerHTML = view.html;
    play.dataset.state = view.state;
    play.dataset.version = String(view.version);
    play.dataset.step = String(view.step);
    tick();
    if (view.state === "turn") { turnBegins(); }
    if (view.state === "over" && source) { source.close(); }
  }

  function act(action) {
    if (play.dataset.state !== "turn" || play.dataset.sending === "yes") { return; }
    play.dataset.sending = "yes";
    var shown = play.dataset.version;
    showError("");
    var body = "csrf=" + encodeURIComponent(play.dataset.csrf) +
      "&action=" + encodeURIComponent(action);
    fetch(play.dataset.act, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json" },
      body: body,
      credentials: "same-origin"
    }).then(function (response) {
      if (response.status === 204) {
        // Waiting until the next view, unless it came already (the bots are quick).
        if (play.dataset.version === shown) { play.dataset.state = "waiting"; }
        return null;
      }
      return response.json().then(function (answer) { showError(answer.error); });
    }).catch(function () {
      showError("Your move could not be sent; try again.");
    }).then(function () {
      play.dataset.sending = "no";
    });
  }

  panel.addEventListener("click", function (event) {
    var target = event.target.closest("[data-action]");
    if (!target || !panel.contains(target)) { return; }
    event.preventDefault();
    act(target.dataset.action);
  });

  panel.addEventListener("keydown", function (event) {
    var target = event.target.closest("[data-action]");
    // Buttons click on Enter and Space by themselves; the marks on the drawn table do not.
    if (target && target.tagName !== "BUTTON" && (event.key === "Enter" || event.key === " ")) {
      event.preventDefault();
      act(target.dataset.action);
    }
  });

  document.addEventListener("keydown", function (event) {
    if (event.altKey || event.ctrlKey || event.metaKey) { return; }
    if (!/^[1-9]$/.test(event.key)) { return; }
    var tag = document.activeElement ? document.activeElement.tagName : "";
    if (tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT") { return; }
    var buttons = Array.prototype.slice.call(panel.querySelectorAll("#play-actions [data-action]"));
    var chosen = buttons[Number(event.key) - 1];
    if (chosen) {
      event.preventDefault();
      act(chosen.dataset.action);
    }
  });

  tick();
  if (play.dataset.state === "turn") { turnBegins(); }
  if (play.dataset.state === "over") { return; }
  source = new EventSource(play.dataset.events);
  source.addEventListener("view", function (event) {
    play.dataset.followed = "yes";
    swap(JSON.parse(event.data));
  });
  source.addEventListener("error", function () {
    if (source.readyState === EventSource.CLOSED && play.dataset.state !== "over") {
      play.dataset.state = "closed";
      showError("The stream of your match closed; reload the page to go on.");
    }
  });
})();
