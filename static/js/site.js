// Site-wide behaviour without inline handlers (the Content-Security-Policy allows no inline script).

// A form with data-confirm="question" asks before it is sent.
document.addEventListener("submit", (e) => {
  const question = e.target.dataset && e.target.dataset.confirm;
  if (question && !window.confirm(question)) e.preventDefault();
}, true);

// The menu at phone width (base.html, site.css): the "Menu" button shows and hides the site's
// links; Escape closes it. Without this script the links simply wrap under the site's name.
(() => {
  const header = document.querySelector(".site-header");
  const toggle = header && header.querySelector(".nav-toggle");
  if (!toggle) return;
  header.classList.add("js-menu");
  const set = (open) => {
    header.classList.toggle("open", open);
    toggle.setAttribute("aria-expanded", String(open));
  };
  toggle.addEventListener("click", () => set(toggle.getAttribute("aria-expanded") !== "true"));
  document.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && header.classList.contains("open")) {
      set(false);
      toggle.focus();
    }
  });
})();
