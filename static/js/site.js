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

// An in-page update (htmx: a sort, a filter, a page of a board, a live status) that the server
// refused is not swapped in by htmx, so without this nothing would happen at all. Say why at the
// top of the page: too many requests (429, with how long to wait: the Retry-After header), or any
// other error. The notice goes once an update succeeds again.
(() => {
  const notice = document.getElementById("site-notice");
  if (!notice) return;
  let timer = null;
  const show = (text, seconds) => {
    notice.textContent = text;
    notice.hidden = false;
    clearTimeout(timer);
    timer = seconds ? setTimeout(() => { notice.hidden = true; timer = null; }, seconds * 1000) : null;
  };
  document.addEventListener("htmx:responseError", (e) => {
    const xhr = e.detail.xhr;
    if (xhr.status === 429) {
      const wait = parseInt(xhr.getResponseHeader("Retry-After") || "60", 10);
      const when = wait < 60 ? `${wait} second${wait === 1 ? "" : "s"}` : `${Math.ceil(wait / 60)} minute${wait < 120 ? "" : "s"}`;
      show(`Too many requests: you have opened more pages in a short time than this site serves to one visitor. Wait ${when}, then try again.`, wait);
    } else if (xhr.status === 503) {
      show("The server cannot do this right now (HTTP 503). Try again in a minute; reload the page if this stays.");
    } else {
      show(`This part of the page could not be updated (HTTP ${xhr.status}). Reload the page to try again.`);
    }
  });
  document.addEventListener("htmx:sendError", () => {
    show("The server could not be reached: check your connection, then try again.");
  });
  document.addEventListener("htmx:afterSwap", () => {
    if (!notice.hidden && !timer) notice.hidden = true;
  });
})();
