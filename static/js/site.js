// Site-wide behaviour without inline handlers (the Content-Security-Policy allows no inline script):
// a form with data-confirm="question" asks before it is sent.
document.addEventListener("submit", (e) => {
  const question = e.target.dataset && e.target.dataset.confirm;
  if (question && !window.confirm(question)) e.preventDefault();
}, true);
