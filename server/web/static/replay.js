// The replay viewer's keys and play/pause: left/right arrows step, Home/End jump, space plays.
// Without JavaScript the links do the same; this only follows them.
(function () {
  "use strict";
  var replay = document.getElementById("replay");
  if (!replay) { return; }
  var step = Number(replay.dataset.step), total = Number(replay.dataset.total);
  var playing = new URLSearchParams(window.location.search).get("play") === "1";
  var button = document.getElementById("play");
  function go(id, keepPlaying) {
    var link = document.getElementById(id);
    if (!link) { return; }
    var url = new URL(link.href);
    if (keepPlaying) { url.searchParams.set("play", "1"); }
    window.location.assign(url.toString());
  }
  button.hidden = false;
  button.textContent = playing ? "⏸ pause" : "▶ play";
  button.addEventListener("click", function () {
    if (playing) {
      var url = new URL(window.location.href);
      url.searchParams.delete("play");
      window.location.assign(url.toString());
    } else if (step < total) {
      go("next", true);
    }
  });
  if (playing && step < total) {
    window.setTimeout(function () { go("next", true); }, 700);
  }
  document.addEventListener("keydown", function (event) {
    if (event.target instanceof HTMLInputElement) { return; }
    var keys = { ArrowLeft: "prev", ArrowRight: "next", Home: "first", End: "last" };
    if (keys[event.key]) { event.preventDefault(); go(keys[event.key], false); }
    else if (event.key === " ") { event.preventDefault(); button.click(); }
  });
})();
