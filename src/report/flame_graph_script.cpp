#include "report/flame_graph_script.h"

namespace vperf::report {

// Plain ES5 so that any SVG viewer with a script engine runs it. Boxes keep their original
// geometry (read once from the document), so zooming, unzooming and searching never depend
// on what an earlier zoom did to the attributes.
const std::string_view kFlameGraphScript = R"JS(
"use strict";
(function () {
  var frames = document.getElementById("frames");
  if (!frames) return;
  var XPAD = parseFloat(frames.getAttribute("data-xpad"));
  var FULL = parseFloat(frames.getAttribute("data-inner-width"));
  var CHAR_W = parseFloat(frames.getAttribute("data-char-width"));
  var INVERTED = frames.getAttribute("data-inverted") === "1";
  var HIGHLIGHT = frames.getAttribute("data-search-color");
  var NAME_TYPE = frames.getAttribute("data-name-type");
  var EPS = 0.01;  // the SVG rounds to 0.1 px; edges that meet are equal within this
  var details = document.getElementById("details");
  var unzoomButton = document.getElementById("unzoom");
  var searchButton = document.getElementById("search");
  var caseButton = document.getElementById("ignorecase");
  var matched = document.getElementById("matched");

  var boxes = [];
  var total = 0;
  for (var i = 0; i < frames.children.length; i++) {
    var g = frames.children[i];
    var rect = g.getElementsByTagName("rect")[0];
    var title = g.getElementsByTagName("title")[0];
    if (!rect || !title) continue;
    var info = title.textContent;
    var open = info.lastIndexOf(" (");
    var box = {
      g: g, rect: rect, text: g.getElementsByTagName("text")[0], info: info,
      name: open < 0 ? info : info.substring(0, open),
      count: open < 0 ? 0 : parseFloat(info.substring(open + 2).replace(/,/g, "")),
      x: parseFloat(rect.getAttribute("x")), w: parseFloat(rect.getAttribute("width")),
      y: parseFloat(rect.getAttribute("y")), fill: rect.getAttribute("fill"),
      x0: rect.getAttribute("x"), w0: rect.getAttribute("width")
    };
    if (box.text) { box.tx0 = box.text.getAttribute("x"); box.label0 = box.text.textContent; }
    g.vperfBox = box;
    boxes.push(box);
    if (box.count > total) total = box.count;
  }
  var searchTerm = null;
  var ignoreCase = false;

  function boxOf(node) {
    while (node && node.parentNode !== frames) node = node.parentNode;
    return node ? node.vperfBox : undefined;
  }
  function fit(name, width) {
    var chars = Math.floor(width / CHAR_W);
    if (chars < 3) return "";
    var points = Array.from ? Array.from(name) : name.split("");
    if (chars >= points.length) return name;
    return points.slice(0, chars - 2).join("") + "..";
  }
  function place(box, x, w) {
    box.rect.setAttribute("x", x.toFixed(1));
    box.rect.setAttribute("width", w.toFixed(1));
    if (box.text) {
      box.text.setAttribute("x", (x + 3).toFixed(2));
      box.text.textContent = fit(box.name, w);
    }
  }
  function restore(box) {
    box.g.classList.remove("hide");
    box.g.classList.remove("parent");
    box.rect.setAttribute("x", box.x0);
    box.rect.setAttribute("width", box.w0);
    if (box.text) { box.text.setAttribute("x", box.tx0); box.text.textContent = box.label0; }
  }

  function resetZoom() {
    boxes.forEach(restore);
    unzoomButton.classList.add("hide");
  }
  // The target and its ancestors take the full width (ancestors dimmed), what lies above the
  // target within its span is stretched by the same ratio, everything else is hidden.
  function zoom(target) {
    if (target === boxes[0] || target.w >= FULL - EPS) { resetZoom(); return; }
    var ratio = FULL / target.w;
    var end = target.x + target.w;
    boxes.forEach(function (box) {
      restore(box);
      var nearerRoot = INVERTED ? box.y < target.y : box.y > target.y;
      if (nearerRoot) {
        if (box.x <= target.x + EPS && box.x + box.w + EPS >= end) {
          box.g.classList.add("parent");
          place(box, XPAD, FULL);
        } else {
          box.g.classList.add("hide");
        }
      } else if (box.x + EPS >= target.x && box.x + box.w <= end + EPS && (box === target || box.x < end - EPS)) {
        place(box, XPAD + (box.x - target.x) * ratio, box === target ? FULL : box.w * ratio);
      } else {
        box.g.classList.add("hide");
      }
    });
    unzoomButton.classList.remove("hide");
  }

  function resetSearch() {
    searchTerm = null;
    boxes.forEach(function (box) { box.rect.setAttribute("fill", box.fill); });
    searchButton.classList.remove("show");
    searchButton.textContent = "Search";
    matched.classList.add("hide");
    matched.textContent = " ";
  }
  // Colours the boxes whose name matches and shows the share of all counts they cover; a match
  // inside another match (same span, higher up) counts once.
  function search(term) {
    var re;
    try {
      re = new RegExp(term, ignoreCase ? "i" : "");
    } catch (e) {
      resetSearch();
      matched.classList.remove("hide");
      matched.textContent = "Bad regular expression";
      return;
    }
    searchTerm = term;
    var hits = [];
    boxes.forEach(function (box, index) {
      if (index > 0 && re.test(box.name)) {
        box.rect.setAttribute("fill", HIGHLIGHT);
        hits.push(box);
      } else {
        box.rect.setAttribute("fill", box.fill);
      }
    });
    hits.sort(function (a, b) { return a.x - b.x || b.w - a.w; });
    var sum = 0;
    var coveredTo = -Infinity;
    hits.forEach(function (box) {
      if (box.x >= coveredTo - EPS) {
        sum += box.count;
        coveredTo = box.x + box.w;
      }
    });
    var pct = total > 0 ? 100 * sum / total : 0;
    searchButton.classList.add("show");
    searchButton.textContent = "Reset Search";
    matched.classList.remove("hide");
    matched.textContent = "Matched: " + (pct === 100 ? "100" : pct.toFixed(1)) + "%";
  }
  function askSearch() {
    var term = window.prompt("Search for a regular expression (e.g. ^ext4_)" +
                             (ignoreCase ? ", ignoring case" : "") + ". Ctrl-I toggles case.", searchTerm || "");
    if (term) search(term);
  }
  function toggleCase() {
    ignoreCase = !ignoreCase;
    if (ignoreCase) caseButton.classList.add("show"); else caseButton.classList.remove("show");
    if (searchTerm !== null) search(searchTerm);
  }

  document.addEventListener("click", function (e) {
    var box = boxOf(e.target);
    if (box) { zoom(box); return; }
    var id = e.target && e.target.id;
    if (id === "unzoom") resetZoom();
    else if (id === "search") { if (searchTerm !== null) resetSearch(); else askSearch(); }
    else if (id === "ignorecase") toggleCase();
  }, false);
  document.addEventListener("mouseover", function (e) {
    var box = boxOf(e.target);
    if (box) details.textContent = NAME_TYPE + " " + box.info;
  }, false);
  document.addEventListener("mouseout", function (e) {
    if (boxOf(e.target)) details.textContent = " ";
  }, false);
  document.addEventListener("keydown", function (e) {
    var key = (e.key || "").toLowerCase();
    if (key === "f3" || (e.ctrlKey && key === "f")) { e.preventDefault(); askSearch(); }
    else if (e.ctrlKey && key === "i") { e.preventDefault(); toggleCase(); }
    else if (key === "escape") { resetSearch(); }
  }, false);
})();
)JS";

}  // namespace vperf::report
