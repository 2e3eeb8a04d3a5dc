"use strict";
(function () {
  var cards = Array.prototype.slice.call(document.querySelectorAll("section.step"));
  cards.forEach(function (c) { c.tabIndex = -1; });
  // The step at the top of the window: the last card whose top is above the middle.
  function current() {
    var at = -1;
    for (var i = 0; i < cards.length; i++) {
      if (cards[i].getBoundingClientRect().top <= window.innerHeight / 3) { at = i; }
    }
    return at;
  }
  function go(i) {
    if (i < 0 || i >= cards.length) { return; }
    cards[i].scrollIntoView({ block: "start" });
    cards[i].focus({ preventScroll: true });
  }
  var zoom = document.getElementById("zoom");
  document.addEventListener("keydown", function (e) {
    if (e.altKey || e.ctrlKey || e.metaKey || (zoom && zoom.open)) { return; }
    if (e.key === "ArrowRight") { e.preventDefault(); go(current() + 1); }
    if (e.key === "ArrowLeft") { e.preventDefault(); go(Math.max(current() - 1, 0)); }
  });
  document.querySelectorAll("a.shot").forEach(function (a) {
    a.addEventListener("click", function (e) {
      if (!zoom || !zoom.showModal) { return; }
      e.preventDefault();
      zoom.querySelector("img").src = a.getAttribute("href");
      zoom.showModal();
    });
  });
  if (zoom) { zoom.addEventListener("click", function () { zoom.close(); }); }
})();
