// Keyboard-first trace review: one key per verdict, each answer moves on, Enter saves and opens the next trace.
// Without JavaScript the form is plain radio buttons and submit buttons.
(() => {
  const form = document.getElementById("verdict-form");
  if (!form) return;
  const questions = [...form.querySelectorAll("fieldset.q")];
  const comment = document.getElementById("comment");
  const status = document.getElementById("verdict-status");
  const KEYS = {
    binary: { y: "1", 1: "1", n: "0", 0: "0" },
    score: { 1: "1", h: "0.5", 5: "0.5", 0: "0" },
  };
  let current = 0;

  const answered = (q) => q.querySelector("input:checked") !== null;
  const open = () => questions.filter((q) => !answered(q));

  function show() {
    questions.forEach((q, i) => {
      q.classList.toggle("current", i === current);
      q.classList.toggle("answered", answered(q));
    });
    const left = open().length;
    status.textContent = left
      ? `${questions.length - left} of ${questions.length} answered`
      : "All answered: Enter saves and opens the next trace.";
  }

  function focusQuestion(i) {
    if (!questions.length) return;
    current = Math.max(0, Math.min(questions.length - 1, i));
    show();
    questions[current].scrollIntoView({ block: "nearest" });
  }

  function nextOpen(from) {
    for (let j = from + 1; j < questions.length; j++) if (!answered(questions[j])) return j;
    for (let j = 0; j < questions.length; j++) if (!answered(questions[j])) return j;
    return -1;
  }

  function choose(key) {
    const q = questions[current];
    if (!q) return false;
    const value = (KEYS[q.dataset.kind] || {})[key];
    const input = value && q.querySelector(`input[value="${value}"]`);
    if (!input) return false;
    input.checked = true;
    const n = nextOpen(current);
    if (n >= 0) focusQuestion(n); else show();
    return true;
  }

  function save() {
    const left = open();
    if (left.length) {
      focusQuestion(questions.indexOf(left[0]));
      status.textContent = `${left.length} question${left.length > 1 ? "s" : ""} still open: `
        + `${left.map((q) => q.dataset.short).join(", ")}.`;
      return;
    }
    form.requestSubmit(document.getElementById("save-next"));
  }

  form.addEventListener("change", (e) => {
    const q = e.target.closest("fieldset.q");
    if (q) { current = questions.indexOf(q); show(); }
  });

  document.addEventListener("keydown", (e) => {
    const t = e.target;
    if (t === comment || (t.tagName === "INPUT" && t.type !== "radio") || t.tagName === "SELECT") {
      if (e.key === "Escape") { t.blur(); e.preventDefault(); }
      else if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) { e.preventDefault(); save(); }
      return;
    }
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const key = e.key.toLowerCase();
    if (key === "enter") { e.preventDefault(); save(); return; }
    if (key === "c") { e.preventDefault(); comment.focus(); return; }
    if (key === "j" || key === "arrowdown") { e.preventDefault(); focusQuestion(current + 1); return; }
    if (key === "k" || key === "arrowup") { e.preventDefault(); focusQuestion(current - 1); return; }
    if (choose(key)) e.preventDefault();
  });

  const first = nextOpen(-1);
  focusQuestion(first >= 0 ? first : 0);
})();
