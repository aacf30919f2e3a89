/* perfblog's seo plugin: Material's copy buttons on code blocks (theme feature content.code.copy), added
   once the page has loaded, a few blocks per task, instead of by Material's script while the page loads:
   on a post with many code blocks that work blocked the main thread for most of a second. The buttons
   are Material's own markup, so its stylesheet draws them and its clipboard handler copies and says so. */
(function () {
  "use strict";
  var config = document.getElementById("__config");
  var words = config ? JSON.parse(config.textContent).translations || {} : {};
  var title = words["clipboard.copy"] || "Copy to clipboard";
  var BUDGET_MS = 8;  // per task: far below the 50 ms that counts as blocking
  var unnamed = 0;

  function addButton(code) {
    var pre = code.parentElement;
    if (!pre.id) pre.id = "__code_copy_" + unnamed++;  // Material names every block it sets up
    var nav = pre.querySelector(":scope > .md-code__nav");
    if (!nav) {
      nav = document.createElement("nav");
      nav.className = "md-code__nav";
      pre.insertBefore(nav, code);
    }
    var button = document.createElement("button");
    button.className = "md-code__button";
    button.title = title;
    button.setAttribute("data-clipboard-target", "#" + pre.id + " > code");
    button.setAttribute("data-md-type", "copy");
    nav.appendChild(button);
  }

  function addButtons() {
    var blocks = Array.prototype.filter.call(
      document.querySelectorAll("pre:not(.mermaid) > code"),
      function (code) {
        return !code.closest(".no-copy") && !code.parentElement.querySelector("[data-md-type=copy]");
      });
    (function step() {
      var start = performance.now();
      while (blocks.length && performance.now() - start < BUDGET_MS) addButton(blocks.shift());
      if (blocks.length) setTimeout(step, 0);
    })();
  }

  function later() {
    (window.requestIdleCallback || setTimeout)(addButtons);
  }

  if (window.document$ && typeof window.document$.subscribe === "function") {
    window.document$.subscribe(later);  // each page, instant navigation included
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", later);
  } else {
    later();
  }
})();
