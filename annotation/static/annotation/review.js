/* The review page: a toggle per annotator's layer of boxes on the shared image, a click on a box
 * goes to its note field, and "Take all four" picks every part of one annotation (nothing is
 * preselected; the server refuses an approval with a part not chosen). */
(function () {
  "use strict";
  document.querySelectorAll("#overlay-legend input[data-layer]").forEach((box) => {
    box.addEventListener("change", () => {
      const layer = document.querySelector(`#overlay g.layer[data-layer="${box.dataset.layer}"]`);
      if (layer) layer.classList.toggle("off", !box.checked);
    });
  });
  document.querySelectorAll("#overlay rect[data-note]").forEach((rect) => {
    rect.addEventListener("click", () => {
      const input = document.getElementById(rect.dataset.note);
      if (!input) return; // not an annotation that can be sent back
      input.scrollIntoView({ block: "center" });
      input.focus();
    });
  });
  document.querySelectorAll(".take-all").forEach((button) => {
    button.addEventListener("click", () => {
      document.querySelectorAll(`#approve-form input[type=radio][value="${button.dataset.annotation}"]`).forEach((r) => { r.checked = true; });
    });
  });
})();
