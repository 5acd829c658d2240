// The live viewer: follows /api/live/{id}/events (server-sent events) and swaps in each table.
// The table's HTML is drawn and escaped by the server (the same template as the page); this
// script sets only text and that HTML. Without JavaScript the page shows the table at load.
(function () {
  "use strict";
  var live = document.getElementById("live");
  if (!live || live.dataset.state !== "live") { return; }
  var board = document.getElementById("live-table");
  var status = document.getElementById("live-status");
  var last = document.getElementById("live-last");
  var over = document.getElementById("live-over");
  var players = [];
  var source = new EventSource(live.dataset.events);
  function data(event) { return JSON.parse(event.data); }
  function finish(text) {
    source.close();
    status.textContent = text;
  }
  source.addEventListener("start", function (event) {
    players = data(event).players;
    live.dataset.followed = "yes";  // the stream is open: what comes next arrives here
  });
  source.addEventListener("step", function (event) {
    var step = data(event);
    if (!step.html) { return; }  // an earlier step of the backlog: the latest comes with its table
    board.innerHTML = step.html;
    live.dataset.step = String(step.step);
    status.textContent = "Live: " + step.step + (step.step === 1 ? " step" : " steps") + " played.";
    var who = step.seat === null ? "the deal" : "seat " + step.seat + " (" + players[step.seat] + ")";
    // Numbered from 0, as the replay viewer numbers them (its ?step=N shows the table after it).
    last.textContent = "Step " + (step.step - 1) + ": " + who + ": ";
    var action = document.createElement("strong");
    action.textContent = step.action;
    last.appendChild(action);
  });
  source.addEventListener("hand", function (event) {
    var hand = data(event);
    status.textContent = "End of deal " + hand.deal + ": " + hand.detail +
      "; scores by side: " + hand.scores.join(" / ") + ".";
  });
  source.addEventListener("end", function (event) {
    var end = data(event);
    live.dataset.state = "over";
    finish("Match over: " + end.result);
    over.hidden = false;
  });
  source.addEventListener("cut", function (event) {
    live.dataset.state = "cut";
    finish(data(event).reason);
  });
  source.addEventListener("error", function () {
    if (source.readyState === EventSource.CLOSED && live.dataset.state === "live") {
      live.dataset.state = "closed";
      status.textContent = "The live stream closed; reload the page to follow the match again.";
    }
  });
})();
