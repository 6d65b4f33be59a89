// The upload page: drop zone, size check, and an XHR upload with a progress bar (submission_new.html).
(() => {
  const form = document.getElementById("upload-form");
  const input = form.querySelector('input[type="file"]');
  const zone = document.getElementById("dropzone");
  const label = document.getElementById("file-label");
  const show = () => { label.textContent = input.files.length ? `${input.files[0].name} (${input.files[0].size.toLocaleString()} bytes)` : "No file chosen"; };
  zone.addEventListener("click", (e) => { if (e.target !== input) input.click(); });
  input.addEventListener("change", show);
  ["dragenter", "dragover"].forEach((t) => zone.addEventListener(t, (e) => { e.preventDefault(); zone.classList.add("over"); }));
  ["dragleave", "drop"].forEach((t) => zone.addEventListener(t, (e) => { e.preventDefault(); zone.classList.remove("over"); }));
  zone.addEventListener("drop", (e) => { if (e.dataTransfer.files.length) { input.files = e.dataTransfer.files; show(); } });
  form.addEventListener("submit", (e) => {
    // An XHR upload, so the page can show how much of a large file has gone up.
    e.preventDefault();
    const errors = document.getElementById("form-errors");
    errors.innerHTML = "";
    // Over the limit: say so now rather than send the file for a 413 (the server refuses it unread too).
    const max = Number(form.dataset.maxBytes || 0);
    if (max && input.files.length && input.files[0].size > max) {
      const li = document.createElement("li");
      li.textContent = form.dataset.maxMessage.replace("{size}", input.files[0].size.toLocaleString("en-US"));
      errors.appendChild(li);
      return;
    }
    const box = document.getElementById("upload-progress"), bar = document.getElementById("upload-bar"), text = document.getElementById("upload-text");
    const xhr = new XMLHttpRequest();
    xhr.open("POST", window.location.pathname);
    xhr.setRequestHeader("X-Requested-With", "XMLHttpRequest");
    xhr.upload.addEventListener("progress", (ev) => {
      if (!ev.lengthComputable) return;
      const pct = Math.round(100 * ev.loaded / ev.total);
      bar.style.width = pct + "%";
      text.textContent = `Uploading… ${pct}% (${ev.loaded.toLocaleString()} of ${ev.total.toLocaleString()} bytes)`;
    });
    xhr.addEventListener("load", () => {
      let body = {};
      try { body = JSON.parse(xhr.responseText); } catch (err) { body = {detail: `The server answered ${xhr.status}.`}; }
      if (xhr.status === 202) { text.textContent = "Uploaded; opening the submission…"; window.location.assign(body.page); return; }
      box.hidden = true;
      document.getElementById("submit-button").disabled = false;
      const msgs = body.detail ? [body.detail] : Object.entries(body.errors || {}).map(([f, es]) => `${f === "__all__" ? "" : f + ": "}${es.map((x) => x.message).join(" ")}`);
      msgs.forEach((m) => { const li = document.createElement("li"); li.textContent = m; errors.appendChild(li); });
    });
    xhr.addEventListener("error", () => { box.hidden = true; document.getElementById("submit-button").disabled = false; errors.innerHTML = "<li>The upload was interrupted; check your connection and try again.</li>"; });
    box.hidden = false;
    document.getElementById("submit-button").disabled = true;
    xhr.send(new FormData(form));
  });
})();
