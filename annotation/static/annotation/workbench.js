/* The item page: autosave with stale-version handling, transform controls, question and answer,
 * key steps (drag or Alt+arrows to reorder) and the toolchain editor (argument forms generated
 * from each tool's JSON Schema). The server validates everything again on save. */
(function () {
  "use strict";
  const $ = (id) => document.getElementById(id);
  const json = (id) => JSON.parse($(id).textContent);
  const data = json("editor-data");
  const tools = json("tools-data");
  const urls = json("editor-urls");
  const toolByName = Object.fromEntries(tools.map((t) => [t.name, t]));
  const csrf = JSON.parse(document.body.getAttribute("hx-headers"))["X-CSRFToken"];
  const state = data.snapshot;
  let version = data.version;
  let conflict = false;
  let timer = null, saving = false, again = false;

  // ---- the reviewer's notes, beside the item they are on -------------------------------------------
  // Boxes and steps are found by what they were when the reviewer saw them (so a reordered step
  // keeps its note), calls by their place; a box or step since changed shows its note no more
  // (the list above the editor keeps every note).
  const reviewNotes = data.review_notes || [];
  function reviewNote(part, match) {
    const n = reviewNotes.find((x) => x.part === part && match(x));
    if (!n) return null;
    const p = document.createElement("p");
    p.className = "review-note";
    p.textContent = `Reviewer: ${n.text}`;
    return p;
  }

  // ---- saving --------------------------------------------------------------------------------
  function status(text) { $("save-status").textContent = text; }
  function showErrors(errors) {
    const ul = $("errors");
    ul.innerHTML = "";
    (errors || []).forEach((msg) => { const li = document.createElement("li"); li.textContent = msg; ul.appendChild(li); });
  }
  function payload() {
    return {
      question: $("qa-question").value, answer_type: $("qa-type").value, options: parseOptions(),
      answer: $("qa-answer").value, transform: buildTransform(), regions: allRegions(),
      key_steps: state.key_steps, toolchain: state.toolchain, ...proposalPayload(),
    };
  }
  // Counts edits, so a save that answers after newer edits does not claim everything is saved.
  let changes = 0;
  let heldProblems = []; // the problems of the parts the last save kept as stored
  function dirty() {
    if (!data.editable || conflict) return;
    changes += 1;
    status("Unsaved changes");
    clearTimeout(timer);
    timer = setTimeout(() => save(false), 1200);
  }
  async function save(submit) {
    if (!data.editable) return true;
    if (conflict) return false;
    if (saving) { again = true; return false; }
    clearTimeout(timer);
    saving = true;
    status(submit ? "Submitting…" : "Saving…");
    let resp, body;
    const sent = changes;
    try {
      resp = await fetch(urls.save, { method: "POST", headers: { "Content-Type": "application/json", "X-CSRFToken": csrf },
        body: JSON.stringify({ version, data: payload(), submit }) });
      body = await resp.json();
    } catch (err) {
      saving = false; status("Not saved: the server did not answer (will retry)"); timer = setTimeout(() => save(false), 5000); return false;
    }
    saving = false;
    if (resp.ok) {
      version = body.version;
      // A part with a problem (an unfinished tool call) is kept as stored and the rest saved: its problems are
      // listed and shown on it, and the page keeps what was typed there until it is fixed and saved.
      const held = (body.held || []).length ? body.errors || [] : [];
      const changedHeld = JSON.stringify(held) !== JSON.stringify(heldProblems);
      heldProblems = held;
      showErrors(held);
      if (changedHeld) renderChain();
      status(changes !== sent || again ? "Unsaved changes" : held.length ? `${body.message} (version ${version})` : `Saved · version ${version}`);
      if (submit) { window.location.href = urls.queue; return true; }
    } else if (resp.status === 409) {
      conflict = true;
      const box = $("conflict");
      box.hidden = false;
      box.textContent = body.message + " ";
      const a = document.createElement("a"); a.href = "history/"; a.textContent = "Open the history";
      box.appendChild(a);
      status("Not saved (stale version)");
    } else {
      showErrors(body.errors);
      status("Not saved: fix the problems listed");
    }
    if (again) { again = false; save(false); }
    return resp.ok;
  }
  // Ctrl+S (Cmd+S) saves, from anywhere on the page, a text field included.
  document.addEventListener("keydown", (e) => {
    if ((e.ctrlKey || e.metaKey) && !e.altKey && e.key.toLowerCase() === "s") { e.preventDefault(); save(false); }
  });
  // "Save and next": saved, then the queue's next item other than this one (this one stays yours).
  $("save-next-btn").addEventListener("click", async () => {
    while (saving) await new Promise((r) => setTimeout(r, 50));
    if (await save(false)) $("next-form").submit();
  });
  $("save-btn").addEventListener("click", () => save(false));
  $("submit-btn").addEventListener("click", () => save(true));
  window.addEventListener("beforeunload", (e) => { if ($("save-status").textContent === "Unsaved changes" || heldProblems.length) e.preventDefault(); });

  // ---- boxes -----------------------------------------------------------------------------------
  const boxes = new window.BoxEditor($("canvas"), $("boxes"), () => { dirty(); refreshOracle(); });
  boxes.editable = data.editable;
  // Several media: each has its own boxes; the canvas shows one medium at a time (img0 first).
  const media = data.media && data.media.length ? data.media : [{ ref: "img0", kind: "image", width: data.width, height: data.height }];
  const regionsByRef = {};
  (state.regions || []).forEach((r) => { (regionsByRef[r.image || "img0"] ||= []).push({ box: r.box, label: r.label }); });
  let current = "img0";
  function allRegions() {
    regionsByRef[current] = boxes.regions;
    return media.flatMap((m) => (regionsByRef[m.ref] || []).map((r) => ({ ...r, image: m.ref })));
  }
  boxes.load(regionsByRef.img0 || []);
  $("fit-btn").addEventListener("click", () => boxes.fit());
  document.addEventListener("boxes:render", () => {
    const ol = $("box-list");
    ol.innerHTML = "";
    boxes.boxes.forEach((b, i) => {
      const li = document.createElement("li");
      li.className = i === boxes.selected ? "selected" : "";
      li.dataset.box = JSON.stringify(b.box.map((v) => Math.round(v)));
      const span = document.createElement("span");
      span.className = "coords";
      span.textContent = `[${b.box.map((v) => Math.round(v)).join(", ")}]`;
      span.addEventListener("click", () => boxes.select(i));
      const label = document.createElement("input");
      label.placeholder = "label"; label.value = b.label; label.size = 10;
      label.addEventListener("change", () => { b.label = label.value; dirty(); });
      const del = document.createElement("button");
      del.type = "button"; del.className = "secondary"; del.textContent = "✕"; del.title = "Delete box";
      del.addEventListener("click", () => boxes.remove(i));
      li.append(span, " ", label, " ", del);
      const target = `${current} [${b.box.map((v) => Math.round(v)).join(", ")}]`;
      const note = reviewNote("region", (x) => x.target === target || x.target.startsWith(target + " "));
      if (note) li.appendChild(note);
      ol.appendChild(li);
    });
  });
  boxes.render();

  // ---- transform ---------------------------------------------------------------------------------
  // The fields and the transform they stand for: recovery_fields.js (contrast α and brightness β are one step).
  const FIELD_IDS = { rotate: "t-rotate", angle: "t-angle", flip: "t-flip", alpha: "t-contrast", beta: "t-brightness", gamma: "t-gamma" };
  let extraOps = [];
  function loadTransform(ops) {
    const { fields, extra } = window.RecoveryFields.fromOps(ops);
    Object.entries(FIELD_IDS).forEach(([name, id]) => { $(id).value = fields[name]; });
    $("t-angle").disabled = fields.rotate !== "custom";
    extraOps = extra; // anything else (imported files may hold more) is kept as it is
  }
  function buildTransform() {
    const fields = Object.fromEntries(Object.entries(FIELD_IDS).map(([name, id]) => [name, $(id).value]));
    return window.RecoveryFields.toOps(fields).concat(extraOps);
  }
  function frameSize(ops) { // as annotation.benchmark_format.frame_size
    let w = data.width, h = data.height;
    for (const op of ops) {
      if (op.op !== "rotate") continue;
      const a = ((op.angle % 360) + 360) % 360;
      if (a % 90 === 0) { if (a % 180 === 90) [w, h] = [h, w]; }
      else {
        const r = (a * Math.PI) / 180, c = Math.abs(Math.cos(r)), s = Math.abs(Math.sin(r));
        [w, h] = [Math.round(w * c + h * s), Math.round(w * s + h * c)];
      }
    }
    return [w, h];
  }
  const geometry = (ops) => JSON.stringify(ops.filter((o) => o.op === "rotate" || o.op === "flip"));
  let lastGeometry = null;
  let lastTransform = null;
  function transformChanged() {
    const ops = buildTransform();
    if (lastGeometry !== null && geometry(ops) !== lastGeometry) {
      if (boxes.boxes.length && !window.confirm("The boxes are in the rotated/flipped frame. Clear them and change the transform?")) {
        loadTransform(lastTransform); return;
      }
      if (boxes.boxes.length) { boxes.checkpoint(); boxes.boxes = []; boxes.selected = -1; }
      const [w, h] = frameSize(ops);
      boxes.setFrame(w, h);
    }
    lastGeometry = geometry(ops);
    const before = lastTransform;
    lastTransform = ops;
    if (before !== null && canonical(before) !== canonical(ops)) followTransform(before, ops);
    if (current === "img0") $("stage-image").setAttribute("href", `${urls.image}?transform=${encodeURIComponent(JSON.stringify(ops))}`);
    refreshOracle();
  }
  function showMedium(ref) {
    const m = media.find((x) => x.ref === ref);
    if (!m || ref === current) return;
    regionsByRef[current] = boxes.regions;
    current = ref;
    if (ref === "img0") {
      const [w, h] = frameSize(buildTransform());
      boxes.setFrame(w, h);
      $("stage-image").setAttribute("href", `${urls.image}?transform=${encodeURIComponent(JSON.stringify(buildTransform()))}`);
    } else {
      boxes.setFrame(m.width, m.height);
      $("stage-image").setAttribute("href", m.still);
    }
    boxes.undoStack = []; boxes.redoStack = []; // undo stays within one medium
    boxes.load(regionsByRef[ref] || []);
    document.querySelectorAll(".medium-tab").forEach((b) => b.setAttribute("aria-pressed", String(b.dataset.ref === ref)));
    document.querySelectorAll(".transform-grid select, .transform-grid input").forEach((el) => {
      el.disabled = ref !== "img0" || (el.id === "t-angle" && $("t-rotate").value !== "custom");
    });
    const note = $("medium-note");
    if (note) { note.hidden = ref === "img0"; $("medium-ref").textContent = ref; }
    showVideo(m);
  }
  function showVideo(m) {
    const panel = $("video-panel");
    if (!panel) return;
    panel.hidden = m.kind !== "video";
    if (m.kind !== "video") { $("video-player").removeAttribute("src"); return; }
    const player = $("video-player");
    if (player.getAttribute("src") !== m.file) { player.setAttribute("src", m.file); player.setAttribute("poster", m.frames[0].url); }
    const ol = $("video-frames");
    ol.innerHTML = "";
    m.frames.forEach((f, i) => {
      const li = document.createElement("li");
      const b = document.createElement("button");
      b.type = "button"; b.title = `Play from ${f.time} s`;
      const img = document.createElement("img");
      img.src = f.url; img.alt = `Frame ${i + 1} at ${f.time} s`;
      b.append(img, `${f.time} s`);
      b.addEventListener("click", () => { player.currentTime = f.time; });
      li.appendChild(b);
      ol.appendChild(li);
    });
  }
  document.querySelectorAll(".medium-tab").forEach((b) => b.addEventListener("click", () => showMedium(b.dataset.ref)));
  showVideo(media[0]);
  let oracleTimer = null;
  function refreshOracle() {
    clearTimeout(oracleTimer);
    oracleTimer = setTimeout(() => {
      const onFirst = current === "img0" ? boxes.regions : regionsByRef.img0 || []; // I_E is cut from img0
      const q = `transform=${encodeURIComponent(JSON.stringify(buildTransform()))}&regions=${encodeURIComponent(JSON.stringify(onFirst.map((r) => r.box)))}`;
      $("oracle-image").src = `${urls.image}?oracle=1&${q}`;
    }, 300);
  }
  loadTransform(state.transform || []);
  transformChanged();
  $("t-rotate").addEventListener("change", () => {
    const custom = $("t-rotate").value === "custom";
    $("t-angle").disabled = !custom;
    if (custom && !parseFloat($("t-angle").value)) { // "other…" starts from the turn there was, not from none
      const turn = (lastTransform || []).find((op) => op.op === "rotate");
      if (turn) $("t-angle").value = String(turn.angle);
    }
    transformChanged(); dirty();
  });
  ["t-angle", "t-flip", "t-contrast", "t-brightness", "t-gamma"].forEach((id) =>
    $(id).addEventListener("change", () => { transformChanged(); dirty(); }));

  // ---- question and answer -----------------------------------------------------------------------
  function parseOptions() {
    if ($("qa-type").value !== "choice") return null;
    const out = {};
    $("qa-options").value.split("\n").forEach((line) => {
      const m = line.match(/^\s*([A-Za-z])\s*[:.)]\s*(.+)$/);
      if (m) out[m[1].toUpperCase()] = m[2].trim();
    });
    return Object.keys(out).length ? out : null;
  }
  $("qa-question").value = state.question || "";
  $("qa-type").value = state.answer_type || "text";
  $("qa-options").value = Object.entries(state.options || {}).map(([k, v]) => `${k}: ${v}`).join("\n");
  $("qa-answer").value = state.answer || "";
  const showOptions = () => { $("qa-options-label").hidden = $("qa-type").value !== "choice"; };
  showOptions();
  ["qa-question", "qa-type", "qa-options", "qa-answer"].forEach((id) => $(id).addEventListener("input", () => { showOptions(); dirty(); }));

  // ---- key steps ---------------------------------------------------------------------------------
  let dragFrom = -1;
  function moveStep(from, to) {
    if (to < 0 || to >= state.key_steps.length || from === to) return;
    const [s] = state.key_steps.splice(from, 1);
    state.key_steps.splice(to, 0, s);
    renderSteps();
    dirty();
    const moved = $("steps").children[to];
    if (moved) moved.querySelector("textarea").focus();
  }
  function renderSteps() {
    const ol = $("steps");
    ol.innerHTML = "";
    state.key_steps.forEach((s, i) => {
      const li = document.createElement("li");
      li.className = "step" + (s.origin === "llm" && !s.verified ? " unverified" : "");
      li.draggable = true;
      li.dataset.index = i;
      li.innerHTML = '<span class="grip" title="Drag to reorder">⠿</span>';
      const text = document.createElement("textarea");
      text.rows = 2; text.value = s.text; text.setAttribute("aria-label", `Step ${i + 1}`);
      text.addEventListener("input", () => { s.text = text.value; if (s.origin === "human") s.verified = true; dirty(); });
      li.appendChild(text);
      if (s.origin === "llm") {
        const badge = document.createElement("label");
        badge.className = "badge";
        const cb = document.createElement("input");
        cb.type = "checkbox"; cb.checked = s.verified;
        cb.addEventListener("change", () => { s.verified = cb.checked; li.classList.toggle("unverified", !cb.checked); dirty(); });
        badge.append(cb, " LLM draft: verified");
        li.appendChild(badge);
      }
      const note = document.createElement("input");
      note.placeholder = "note"; note.value = s.note || ""; note.className = "note";
      note.addEventListener("input", () => { s.note = note.value; dirty(); });
      li.appendChild(note);
      const said = reviewNote("key_step", (x) => x.target === s.text);
      if (said) li.appendChild(said);
      [["↑", i - 1, "Move up"], ["↓", i + 1, "Move down"]].forEach(([label, to, title]) => {
        const b = document.createElement("button");
        b.type = "button"; b.className = "secondary"; b.textContent = label; b.title = title;
        b.addEventListener("click", () => moveStep(i, to));
        li.appendChild(b);
      });
      const del = document.createElement("button");
      del.type = "button"; del.className = "secondary"; del.textContent = "✕"; del.title = "Delete step";
      del.addEventListener("click", () => { state.key_steps.splice(i, 1); renderSteps(); dirty(); });
      li.appendChild(del);
      li.addEventListener("keydown", (e) => {
        if (e.altKey && (e.key === "ArrowUp" || e.key === "ArrowDown")) { e.preventDefault(); moveStep(i, e.key === "ArrowUp" ? i - 1 : i + 1); }
      });
      li.addEventListener("dragstart", (e) => { dragFrom = i; e.dataTransfer.effectAllowed = "move"; e.dataTransfer.setData("text/plain", String(i)); });
      li.addEventListener("dragover", (e) => { e.preventDefault(); });
      li.addEventListener("drop", (e) => { e.preventDefault(); if (dragFrom >= 0) moveStep(dragFrom, i); dragFrom = -1; });
      ol.appendChild(li);
    });
  }
  renderSteps();
  $("add-step").addEventListener("click", () => {
    state.key_steps.push({ text: "", origin: "human", verified: true, note: "" });
    renderSteps();
    $("steps").lastChild.querySelector("textarea").focus();
  });
  document.addEventListener("click", (e) => {
    const btn = e.target.closest(".insert-draft");
    if (!btn) return;
    JSON.parse(btn.dataset.steps).forEach((text) => state.key_steps.push({ text, origin: "llm", verified: false, note: "" }));
    btn.disabled = true;
    renderSteps();
    dirty();
  });

  // ---- toolchain ---------------------------------------------------------------------------------
  function nextRef() {
    const used = new Set([...media.map((m) => m.ref), ...state.toolchain.map((c) => c.output)]);
    let k = 1;
    while (used.has(`img${k}`)) k += 1;
    return `img${k}`;
  }
  function chainEdited() { $("chain-verified").innerHTML = ""; staleResult(); showChainStart(); dirty(); }

  // ---- the chain follows the recovery transform ------------------------------------------------
  // A chain starts from the transform: its first calls are the transform's operations, each a registry tool of the
  // same name and arguments, wired img0 -> ... in order. When the transform changes, a chain that starts from the
  // old one has those calls replaced; a chain whose first calls were edited by hand is not rewritten silently: a
  // notice says so and offers to start it from the transform.
  const TRANSFORM_OPS = new Set(data.transform_ops || []);
  function canonical(value) { // JSON with sorted keys: {angle: 90} is the same call whatever the key order
    if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
    if (value && typeof value === "object") return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(",")}}`;
    return JSON.stringify(value);
  }
  function opCalls(ops) {
    return ops.filter((op) => toolByName[op.op]).map((op) => { const { op: tool, ...args } = op; return { tool, args: args.args || args }; });
  }
  const runnableChain = () => state.toolchain.length > 0 && state.toolchain.every((c) => "args" in c);
  // How many first calls are exactly the transform's, or -1 when they are not.
  function transformPrefix(ops) {
    const want = opCalls(ops);
    let input = "img0";
    for (let k = 0; k < want.length; k++) {
      const c = state.toolchain[k];
      if (!c || !("args" in c) || c.tool !== want[k].tool || c.input !== input || canonical(c.args) !== canonical(want[k].args)) return -1;
      input = c.output;
    }
    return want.length;
  }
  // The first calls that stand for a transform, edited or not: transform operations wired from img0 in order.
  function transformLikePrefix() {
    let input = "img0", n = 0;
    for (const c of state.toolchain) {
      if (!("args" in c) || c.input !== input || !TRANSFORM_OPS.has(c.tool)) break;
      input = c.output; n += 1;
    }
    return n;
  }
  // The chain's first n calls replaced by the transform's. A call left as it was keeps its verdict and note; a
  // changed one is unchecked. Outputs keep their names in order (new ones get names no call uses); the calls
  // that read the old last output read the new one. With no old calls, the first call reads the new last output
  // if it read img0 or an image nothing makes (its input was deleted), not if it reads another medium.
  function startChainFrom(ops, n) {
    const old = state.toolchain.slice(0, n), rest = state.toolchain.slice(n);
    const used = new Set([...media.map((m) => m.ref), ...state.toolchain.flatMap((c) => [c.input, c.output])]);
    const fresh = () => { let k = 1; while (used.has(`img${k}`)) k += 1; used.add(`img${k}`); return `img${k}`; };
    let input = "img0";
    const calls = opCalls(ops).map((want, k) => {
      const was = old[k];
      const output = was ? was.output : fresh();
      const same = was && was.tool === want.tool && was.input === input && canonical(was.args) === canonical(want.args);
      const call = same ? was : { ...want, input, output, verdict: "unchecked", note: was && was.tool === want.tool ? was.note || "" : "" };
      input = output;
      return call;
    });
    const lastOld = n ? old[n - 1].output : "img0";
    const made = new Set([...media.map((m) => m.ref), ...rest.map((c) => c.output)]);
    const readers = n ? rest.filter((c) => c.input === lastOld)
      : rest.slice(0, 1).filter((c) => c.input === "img0" || !made.has(c.input));
    readers.forEach((c) => { c.input = input; });
    state.toolchain.splice(0, state.toolchain.length, ...calls, ...rest);
  }
  let transformRemoved = false; // the transform was removed from a chain whose first calls were edited
  function followTransform(before, ops) {
    $("chain-verified").innerHTML = ""; // the server withdraws the mark too: it was given with the old transform
    if (!runnableChain()) return;
    const n = transformPrefix(before);
    transformRemoved = !opCalls(ops).length && n < 0;
    if (n > 0) { // the chain started from the old transform: it starts from the new one
      const old = state.toolchain.slice(0, n).map((c) => ({ ...c, args: { ...c.args } }));
      startChainFrom(ops, n);
      showReframed(reframeChain(old, opCalls(ops).length));
      renderChain();
      chainEdited();
    } else showChainStart();
  }

  // ---- a chain whose frame changes under it ------------------------------------------------------
  // The calls after the transform's read an image whose frame the new transform changed: the map from the old
  // frame to the new one is D = new o old^-1 (frames.js). Where D is exact (quarter turns and flips: whole
  // pixels onto whole pixels) each box argument goes through it, and the frame of each output follows
  // (D' = new step o D o old step^-1); where it is not, or a frame is not known, a call with a box or
  // coordinates is marked invalid. The notice says which calls and why, before anyone runs the chain.
  function exactMap([a, b, c, d, e, f]) {
    const unit = (v) => Math.abs(v) < 1e-9 || Math.abs(Math.abs(v) - 1) < 1e-9;
    const whole = (v) => Math.abs(v - Math.round(v)) < 1e-6;
    return [a, b, d, e].every(unit) && Math.abs(Math.abs(a * e - b * d) - 1) < 1e-9 && whole(c) && whole(f);
  }
  function prefixFrame(calls) { // img0 -> the last output of these calls, and its size; null when not known
    let size = [data.width, data.height], matrix = Frames.IDENTITY;
    for (const c of calls) {
      const s = Frames.step(c.tool, c.args, size, keepsFrame(c.tool));
      if (!s) return null;
      matrix = Frames.compose(s.matrix, matrix); size = s.size;
    }
    return { matrix, size };
  }
  // A call's arguments in pixels of its input: its boxes and points (each with a setter and how it maps), and what
  // cannot be carried (a box argument not written as four numbers).
  const POINTS = [["x1", "y1"], ["x2", "y2"], ["x", "y"]];
  function placedArgs(call) {
    const props = (toolByName[call.tool] && toolByName[call.tool].schema.properties) || {};
    const slots = [], loose = [];
    Object.entries(props).forEach(([name, spec]) => {
      if (spec.format !== "bbox" || !(name in call.args)) return;
      const b = call.args[name];
      if (Array.isArray(b) && b.length === 4 && b.every(Number.isFinite)) {
        slots.push({ name, value: b, map: (D) => Frames.mapBox(D, b), set: (v) => { call.args[name] = v; } });
      } else loose.push(name);
    });
    const a = call.args;
    if (["x", "y", "width", "height"].every((k) => props[k] && Number.isFinite(a[k]))) { // crop's corner and size
      slots.push({ name: "x, y, width, height", value: [a.x, a.y, a.x + a.width, a.y + a.height],
        map: (D) => Frames.mapBox(D, [a.x, a.y, a.x + a.width, a.y + a.height]),
        set: ([x1, y1, x2, y2]) => Object.assign(a, { x: x1, y: y1, width: x2 - x1, height: y2 - y1 }) });
    } else {
      POINTS.forEach(([kx, ky]) => { // a pixel (column, row): its centre goes through the map
        if (!props[kx] || !props[ky] || !Number.isFinite(a[kx]) || !Number.isFinite(a[ky])) return;
        slots.push({ name: `${kx}, ${ky}`, value: [a[kx], a[ky]],
          map: (D) => Frames.apply(D, [a[kx] + 0.5, a[ky] + 0.5]).map((v) => Math.floor(v + 1e-6)),
          set: ([x, y]) => { a[kx] = x; a[ky] = y; } });
      });
    }
    return { slots, loose };
  }
  function reframeChain(oldPrefix, n) {
    const converted = [], invalid = [];
    const fo = prefixFrame(oldPrefix), fn = prefixFrame(state.toolchain.slice(0, n));
    const last = n ? state.toolchain[n - 1].output : "img0";
    const maps = {};
    if (!fo || !fn) maps[last] = null;
    else {
      const D = Frames.compose(fn.matrix, Frames.invert(fo.matrix));
      if (D.every((v, i) => Math.abs(v - Frames.IDENTITY[i]) < 1e-9) && fo.size.join() === fn.size.join()) return { converted, invalid };
      maps[last] = { D, oldSize: fo.size, newSize: fn.size };
    }
    state.toolchain.slice(n).forEach((c, k) => {
      if (!("args" in c) || !(c.input in maps)) return;
      const m = maps[c.input], place = n + k + 1, oldArgs = { ...c.args };
      const { slots, loose } = placedArgs(c);
      const placed = slots.length + loose.length > 0;
      let why = null;
      if (m === null) why = "the frame it reads is not known here (a step before it has no known geometry)";
      else if (placed && !exactMap(m.D)) why = "the new frame is not the old one turned by quarter turns or flipped, so its pixels cannot be carried over exactly";
      else if (loose.length) why = `its ${loose.join(", ")} is not four numbers, so it cannot be carried over`;
      if (why && placed) {
        c.verdict = "invalid";
        invalid.push(`call ${place} (${c.tool}): ${why}; draw its box again`);
      } else if (m) {
        slots.forEach((slot) => {
          const after = slot.map(m.D);
          converted.push(`call ${place} (${c.tool}) ${slot.name}: [${slot.value.join(", ")}] → [${after.join(", ")}]`);
          slot.set(after);
        });
      }
      if (!c.output) return;
      if (m === null || (why && placed)) { maps[c.output] = null; return; }
      const so = Frames.step(c.tool, oldArgs, m.oldSize, keepsFrame(c.tool)), sn = Frames.step(c.tool, c.args, m.newSize, keepsFrame(c.tool));
      maps[c.output] = so && sn ? { D: Frames.compose(sn.matrix, Frames.compose(m.D, Frames.invert(so.matrix))), oldSize: so.size, newSize: sn.size } : null;
    });
    return { converted, invalid };
  }
  function showReframed({ converted, invalid }) {
    const box = $("chain-reframed");
    box.hidden = !converted.length && !invalid.length;
    box.innerHTML = "";
    if (box.hidden) return;
    const say = (cls, text, items) => {
      if (!items.length) return;
      const p = document.createElement("p"); p.className = cls; p.textContent = text; box.appendChild(p);
      const ul = document.createElement("ul"); items.forEach((t) => { const li = document.createElement("li"); li.textContent = t; ul.appendChild(li); });
      box.appendChild(ul);
    };
    say("reframed-converted", "The transform changed the frame the chain reads; the boxes were carried into the new frame (same pixels of the image):", converted);
    say("reframed-invalid", "Marked invalid, as their boxes are in the old frame:", invalid);
  }
  const writeCalls = (calls) => calls.map((c) => `${c.tool}(${Object.entries(c.args).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(", ")})`).join(", ");
  function showChainStart() {
    const box = $("chain-transform");
    const want = opCalls(buildTransform());
    const off = runnableChain() && (want.length ? transformPrefix(buildTransform()) < 0 : transformRemoved && transformLikePrefix() > 0);
    box.hidden = !off;
    if (!off) { transformRemoved = false; return; }
    box.querySelector("p").textContent = want.length
      ? `The chain does not start from the recovery transform any more: its first calls are not ${writeCalls(want)} (from img0, in this order).`
      : `The chain does not start from the recovery transform any more: the transform is empty, but the chain starts with ${writeCalls(state.toolchain.slice(0, transformLikePrefix()))}.`;
  }
  $("chain-from-transform").addEventListener("click", () => {
    const n = transformLikePrefix(), old = state.toolchain.slice(0, n).map((c) => ({ ...c, args: { ...c.args } }));
    // With no old calls, the first call's frame is known only if it read img0 (not an image since deleted).
    const known = n > 0 || (state.toolchain[0] && state.toolchain[0].input === "img0");
    startChainFrom(buildTransform(), n);
    showReframed(known ? reframeChain(old, opCalls(buildTransform()).length) : { converted: [], invalid: [] });
    transformRemoved = false;
    renderChain();
    chainEdited();
  });
  // What "verified" needs, said before the annotator tries: every call marked valid, a clean run.
  function showVerifyNeeds() {
    const el = $("verify-needs");
    if (!el) return;
    const runnable = state.toolchain.filter((c) => "args" in c);
    const valid = state.toolchain.filter((c) => c.verdict === "valid").length;
    el.querySelector(".count").textContent = !state.toolchain.length ? "no calls yet"
      : runnable.length < state.toolchain.length ? "a name-only chain is never run, so it cannot be verified"
        : `${valid} of ${state.toolchain.length} marked valid`;
    el.classList.toggle("ready", state.toolchain.length > 0 && valid === state.toolchain.length);
  }
  // A message speaks of what was on the page when it was given: when that changes, it goes.
  function staleResult() {
    const result = document.querySelector("#chain-result .chain-result");
    if (result && !result.classList.contains("stale")) {
      result.classList.add("stale");
      const p = document.createElement("p");
      p.className = "stale-note"; p.textContent = "The chain has changed since this run: run it again to see it.";
      result.prepend(p);
    }
    document.querySelectorAll(".take-error").forEach((el) => { el.hidden = true; el.textContent = ""; });
  }
  function argControl(call, name, spec, required) {
    const wrap = document.createElement("label");
    wrap.className = "arg";
    wrap.title = spec.description || "";
    wrap.append(name + (required ? " *" : "") + " ");
    const types = [].concat(spec.type || []);
    const value = call.args[name];
    let input;
    const set = (v) => { if (v === undefined) delete call.args[name]; else call.args[name] = v; chainEdited(); };
    if (spec.enum) {
      input = document.createElement("select");
      input.innerHTML = `<option value="">${spec.default !== undefined ? "default (" + spec.default + ")" : "—"}</option>` +
        spec.enum.map((v) => `<option>${v}</option>`).join("");
      input.value = value ?? "";
      input.addEventListener("change", () => set(input.value || undefined));
    } else if (types.includes("boolean") && types.length === 1) {
      input = document.createElement("input");
      input.type = "checkbox"; input.checked = value ?? spec.default ?? false;
      input.addEventListener("change", () => set(input.checked));
    } else if ((types.includes("number") || types.includes("integer")) && types.length === 1) {
      input = document.createElement("input");
      input.type = "number"; input.step = types.includes("integer") ? "1" : "any";
      if (spec.minimum !== undefined) input.min = spec.minimum;
      if (spec.maximum !== undefined) input.max = spec.maximum;
      input.placeholder = spec.default !== undefined ? String(spec.default) : "";
      input.value = value ?? "";
      input.addEventListener("change", () => set(input.value === "" ? undefined : Number(input.value)));
    } else if (types.length === 1 && types[0] === "string") {
      input = document.createElement("input");
      input.placeholder = spec.default !== undefined ? String(spec.default) : "";
      input.value = value ?? "";
      input.addEventListener("change", () => set(input.value === "" ? undefined : input.value));
    } else { // arrays, objects, unions: JSON
      input = document.createElement("input");
      input.placeholder = spec.default !== undefined ? JSON.stringify(spec.default) : "JSON";
      input.value = value === undefined ? "" : JSON.stringify(value);
      input.addEventListener("change", () => {
        if (input.value === "") { input.classList.remove("invalid"); set(undefined); return; }
        try { set(JSON.parse(input.value)); input.classList.remove("invalid"); } catch (err) { input.classList.add("invalid"); }
      });
    }
    input.name = `arg-${name}`;
    wrap.appendChild(input);
    if (spec.format === "bbox") wrap.appendChild(takeBoxButton(call, `Put the drawn box into ${name}`, (b) => set(b)));
    return wrap;
  }

  // ---- a drawn box into a call's arguments -----------------------------------------------------
  // The box is drawn on the medium shown (img0 after the recovery transform); the call reads an image
  // the chain makes from a medium. The box goes back through the transform to img0, then forward
  // through each step that makes the call's input (frames.js: every geometric step is an affine map,
  // every other tool keeps its frame). Refused only where a step's geometry is not known, named.
  const Frames = window.Frames;
  function keepsFrame(name) {
    const t = toolByName[name];
    return !!t && !t.declared && t.module !== "geometry" && name !== "zoom_in";
  }
  function mediumSize(ref) {
    if (ref === "img0") return [data.width, data.height];
    const m = media.find((x) => x.ref === ref);
    return m ? [m.width, m.height] : null;
  }
  function drawnBoxFor(call) {
    if (!boxes.boxes.length) throw new Error("Draw a box on the image first.");
    const drawn = (boxes.boxes[boxes.selected] || boxes.boxes[boxes.boxes.length - 1]).box;
    const path = []; // the steps that make the call's input, from a medium on
    let ref = call.input;
    while (!media.some((m) => m.ref === ref)) {
      const k = state.toolchain.findIndex((c) => c.output === ref);
      if (k < 0 || path.includes(k)) throw new Error(`This call reads ${call.input}, which no medium and no earlier step makes.`);
      path.unshift(k);
      ref = state.toolchain[k].input;
    }
    if (ref !== current) throw new Error(`This call reads ${call.input}, which comes from ${ref}, not from ${current} (the medium shown): show ${ref} first.`);
    let size = mediumSize(ref);
    let matrix = Frames.IDENTITY;
    if (current === "img0") { // drawn after the recovery transform: back through it to the original img0
      let forward = Frames.IDENTITY;
      buildTransform().forEach((op, i) => {
        const { op: name, ...rest } = op;
        const s = Frames.step(name, rest.args || rest, size, keepsFrame(name));
        if (!s) throw new Error(`The recovery transform's operation ${i + 1} (${name}) has no known geometry, so the box cannot be taken back through it: type the box in ${call.input}'s pixels.`);
        forward = Frames.compose(s.matrix, forward);
        size = s.size;
      });
      matrix = Frames.invert(forward);
      size = mediumSize("img0");
    }
    path.forEach((k) => {
      const c = state.toolchain[k];
      const t = toolByName[c.tool];
      const s = "args" in c ? Frames.step(c.tool, c.args, size, keepsFrame(c.tool)) : null;
      if (!s) throw new Error(`This call reads ${call.input}, made through step ${k + 1} (${c.tool}), whose geometry is not known here${t && t.declared ? " (a declared tool, not run here)" : ""}: type the box in ${call.input}'s pixels.`);
      matrix = Frames.compose(s.matrix, matrix);
      size = s.size;
    });
    const b = Frames.mapBox(matrix, drawn);
    const inside = [Math.max(b[0], 0), Math.max(b[1], 0), Math.min(b[2], size[0]), Math.min(b[3], size[1])];
    if (inside[2] <= inside[0] || inside[3] <= inside[1]) throw new Error(`The box lies outside ${call.input} (the part of ${current} it shows).`);
    return inside;
  }
  const boxesKey = () => JSON.stringify([current, boxes.selected, boxes.boxes.map((b) => b.box)]);
  function takeBoxButton(call, title, fill) {
    const b = document.createElement("button");
    b.type = "button"; b.className = "secondary take-box"; b.textContent = "⬚ from drawn box"; b.title = title;
    b.addEventListener("click", () => {
      const li = b.closest("li.call");
      const note = li.querySelector(".take-error");
      try {
        fill(drawnBoxFor(call));
        renderChain();
      } catch (err) {
        note.textContent = err.message; note.hidden = false; note.dataset.boxes = boxesKey();
      }
    });
    return b;
  }
  function renderChain() {
    const ol = $("chain");
    ol.innerHTML = "";
    showVerifyNeeds();
    showChainStart();
    state.toolchain.forEach((call, i) => {
      const li = document.createElement("li");
      li.className = "call";
      const head = document.createElement("div");
      head.className = "call-head";
      const select = document.createElement("select");
      select.className = "tool";
      const modules = [...new Set(tools.map((t) => t.module))];
      select.innerHTML = modules.map((m) => `<optgroup label="${m}">` +
        tools.filter((t) => t.module === m).map((t) => `<option value="${t.name}">${t.name}</option>`).join("") + "</optgroup>").join("");
      select.value = call.tool;
      const nameOnly = !("args" in call); // a name-only chain (VTC-Bench's): names, no arguments, never run
      select.addEventListener("change", () => { call.tool = select.value; if (!nameOnly) call.args = {}; renderChain(); chainEdited(); });
      if (nameOnly) {
        li.classList.add("name-only");
        const hint = document.createElement("span"); hint.className = "muted"; hint.textContent = " name only, not run";
        head.append(select, hint);
        li.appendChild(head);
      }
      const input = document.createElement("input");
      input.value = call.input; input.size = 5; input.title = "input image";
      input.addEventListener("change", () => { call.input = input.value; chainEdited(); });
      const output = document.createElement("input");
      output.value = call.output; output.size = 5; output.title = "output image";
      output.addEventListener("change", () => { call.output = output.value; chainEdited(); });
      if (!nameOnly) {
        head.append(output, " = ", select, "(", input, ")");
        li.appendChild(head);
      }
      const tool = toolByName[call.tool];
      if (tool && tool.declared) {
        const note = document.createElement("p"); note.className = "muted"; note.textContent = "Declared by the benchmark: validated, not run here.";
        li.appendChild(note);
      }
      if (tool && nameOnly) {
        const desc = document.createElement("p"); desc.className = "muted"; desc.textContent = tool.description;
        li.appendChild(desc);
      } else if (tool) {
        const desc = document.createElement("p"); desc.className = "muted"; desc.textContent = tool.description;
        li.appendChild(desc);
        const args = document.createElement("div"); args.className = "args";
        const required = tool.schema.required || [];
        const props = tool.schema.properties || {};
        Object.entries(props).forEach(([name, spec]) => args.appendChild(argControl(call, name, spec, required.includes(name))));
        if (["x", "y", "width", "height"].every((k) => props[k])) { // crop's form: a corner and a size
          args.appendChild(takeBoxButton(call, "Put the drawn box into x, y, width and height", ([x1, y1, x2, y2]) => {
            call.args = { ...call.args, x: x1, y: y1, width: x2 - x1, height: y2 - y1 };
            delete call.args.bbox;
            chainEdited();
          }));
        }
        li.appendChild(args);
        const error = document.createElement("p"); error.className = "take-error"; error.setAttribute("role", "alert"); error.hidden = true;
        li.appendChild(error);
      }
      const verdict = document.createElement("select");
      verdict.className = "verdict";
      verdict.innerHTML = '<option value="unchecked">unchecked</option><option value="valid">valid</option><option value="invalid">invalid</option>';
      verdict.value = call.verdict || "unchecked";
      verdict.addEventListener("change", () => { call.verdict = verdict.value; showVerifyNeeds(); chainEdited(); });
      const note = document.createElement("input");
      note.placeholder = "note"; note.value = call.note || ""; note.className = "note";
      note.addEventListener("input", () => { call.note = note.value; dirty(); });
      const del = document.createElement("button");
      del.type = "button"; del.className = "secondary"; del.textContent = "✕"; del.title = "Delete call";
      del.addEventListener("click", () => { state.toolchain.splice(i, 1); renderChain(); chainEdited(); });
      const foot = document.createElement("div");
      foot.append("Step is ", verdict, " ", note, " ", del);
      li.appendChild(foot);
      const said = reviewNote("tool_call", (x) => x.position === i);
      if (said) li.appendChild(said);
      const problems = heldProblems.filter((m) => m.startsWith(`toolchain[${i + 1}]`));
      if (problems.length) {
        const p = document.createElement("p");
        p.className = "call-problem"; p.setAttribute("role", "alert");
        p.textContent = `Not saved yet (the rest is): ${problems.join("; ")}`;
        li.appendChild(p);
      }
      ol.appendChild(li);
    });
  }
  renderChain();
  // A new chain starts from the recovery transform: it is entered once, in the transform panel, and its
  // operations become the chain's first calls (each a registry tool of the same name and arguments).
  function transformCalls() {
    let input = "img0";
    return opCalls(buildTransform()).map(({ tool, args }) => {
      const call = { tool, args, input, output: nextRef(), verdict: "unchecked", note: "" };
      state.toolchain.push(call); // nextRef counts it
      input = call.output;
      return call;
    });
  }
  $("add-call").addEventListener("click", () => {
    let last = state.toolchain[state.toolchain.length - 1];
    if (!last && current === "img0") last = transformCalls().pop();
    if (last && !("args" in last)) state.toolchain.push({ tool: "zoom_in", verdict: "unchecked", note: "" }); // stays name-only
    else state.toolchain.push({ tool: "zoom_in", args: {}, input: last ? last.output : current, output: nextRef(), verdict: "unchecked", note: "" });
    renderChain();
    chainEdited();
  });
  // Verification uses the saved chain: save first, then let htmx send the request.
  $("verify-chain").addEventListener("htmx:confirm", (e) => {
    e.preventDefault();
    (async () => { await save(false); e.detail.issueRequest(true); })();
  });

  $("chain-result").addEventListener("htmx:afterSwap", () => {
    const refused = document.querySelector('#chain-verified [data-verified="false"]');
    if (refused) refused.remove();
  });
  // A refused "from drawn box" speaks of the boxes as they were.
  document.addEventListener("boxes:render", () => document.querySelectorAll(".take-error").forEach((el) => {
    if (!el.hidden && el.dataset.boxes !== boxesKey()) { el.hidden = true; el.textContent = ""; }
  }));

  // "Run chain" sends the chain being edited (not eval'd from an hx-vals "js:" value: the CSP forbids eval).
  $("run-chain").addEventListener("htmx:configRequest", (e) => { e.detail.parameters.chain = JSON.stringify(state.toolchain); });

  // ---- the shortcuts panel (?) -------------------------------------------------------------------
  const shortcuts = $("shortcuts");
  const openShortcuts = () => { if (!shortcuts.open) shortcuts.showModal(); };
  $("shortcuts-btn").addEventListener("click", openShortcuts);
  $("shortcuts-close").addEventListener("click", () => shortcuts.close());
  document.addEventListener("keydown", (e) => {
    const el = document.activeElement;
    const typing = el && (el.tagName === "INPUT" || el.tagName === "TEXTAREA" || el.tagName === "SELECT" || el.isContentEditable);
    if (e.key === "?" && !typing && !e.ctrlKey && !e.metaKey && !e.altKey) { e.preventDefault(); openShortcuts(); }
  });

  // ---- a model's proposal (docs/annotation.md, "Proposals") ------------------------------------------
  // Its boxes are a dashed, labelled layer over the image; its transform, steps and chain a "proposed" block.
  // Each part: Accept (A), Edit (E: taken, then selected or focused to change), Reject (R), on the focused part.
  // The server reads what was done from the saved work (a box accepted then moved is "edited", with its IoU).
  const proposal = data.proposal;
  const decisions = {}; // "part:index" -> the action pressed
  // Decided in an earlier visit: shown as saved, never sent again (the boxes no longer say where they came from).
  const decidedBefore = {};
  (data.proposal_decided || []).forEach((d) => { decisions[`${d.part}:${d.index}`] = "recorded"; decidedBefore[`${d.part}:${d.index}`] = d.action; });
  let proposalChain = false;
  function proposalPayload() {
    if (!proposal) return {};
    const list = Object.entries(decisions).filter(([, a]) => a !== "recorded")
      .map(([key, action]) => { const [part, index] = key.split(":"); return { part, index: Number(index), action }; });
    return list.length ? { proposal: { id: proposal.id, decisions: list }, proposal_chain: proposalChain } : {};
  }
  function proposalParts() {
    const parts = [];
    (proposal.regions || []).forEach((r, i) => parts.push({ part: "region", index: i, text: `Box ${i + 1} [${r.box.map(Math.round).join(", ")}]${r.label ? " " + r.label : ""}` }));
    if (proposal.transform) parts.push({ part: "transform", index: 0, text: `Transform: ${proposal.transform.length ? proposal.transform.map((o) => Object.entries(o).map(([k, v]) => (k === "op" ? v : `${k} ${v}`)).join(" ")).join(", ") : "none"}` });
    (proposal.key_steps || []).forEach((t, i) => parts.push({ part: "key_step", index: i, text: `Step ${i + 1}: ${t}` }));
    if (proposal.toolchain && proposal.toolchain.length) parts.push({ part: "toolchain", index: 0, text: `Chain: ${proposal.toolchain.map((c) => c.tool).join(" → ")}` });
    return parts;
  }
  function renderProposalLayer() {
    const g = $("proposal-layer");
    if (!g) return;
    g.innerHTML = "";
    if (!proposal || current !== "img0") return;
    const ns = "http://www.w3.org/2000/svg";
    (proposal.regions || []).forEach((r, i) => {
      if (decisions[`region:${i}`]) return;
      const [x1, y1, x2, y2] = r.box;
      const rect = document.createElementNS(ns, "rect");
      Object.entries({ x: x1, y: y1, width: x2 - x1, height: y2 - y1, class: "proposed-box", "data-index": i }).forEach(([k, v]) => rect.setAttribute(k, v));
      const label = document.createElementNS(ns, "text");
      label.setAttribute("x", x1); label.setAttribute("y", Math.max(0, y1 - 2)); label.setAttribute("class", "proposed-label");
      label.textContent = `proposed ${i + 1}${r.label ? ": " + r.label : ""}`;
      g.append(rect, label);
    });
  }
  function decide(part, index, action) {
    if (!data.editable || decisions[`${part}:${index}`]) return;
    decisions[`${part}:${index}`] = action;
    if (action !== "rejected") {
      if (part === "region") {
        const r = proposal.regions[index];
        boxes.checkpoint();
        boxes.boxes.push({ box: r.box.slice(), label: r.label || "", proposal: index });
        boxes.select(boxes.boxes.length - 1);
        boxes.render();
        if (action === "edited") $("canvas").focus();
      } else if (part === "transform") {
        loadTransform(proposal.transform);
        transformChanged();
        if (action === "edited") $("t-rotate").focus();
      } else if (part === "key_step") {
        state.key_steps.push({ text: proposal.key_steps[index], origin: "human", verified: true, note: "", proposal: index });
        renderSteps();
        if (action === "edited") { const t = $("steps").lastChild.querySelector("textarea"); t.focus(); t.select(); }
      } else if (part === "toolchain") {
        state.toolchain = proposal.toolchain.map((c) => ({ tool: c.tool, args: { ...(c.args || {}) }, input: c.input, output: c.output, verdict: "unchecked", note: "" }));
        proposalChain = true;
        renderChain();
        chainEdited();
      }
    }
    renderProposal();
    dirty();
  }
  function renderProposal() {
    const box = $("proposal");
    if (!box || !proposal) return;
    box.hidden = false;
    const ol = $("proposal-parts");
    const focused = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.key : null;
    ol.innerHTML = "";
    proposalParts().forEach((p) => {
      const key = `${p.part}:${p.index}`;
      const li = document.createElement("li");
      li.tabIndex = 0; li.className = "proposed-part"; li.dataset.key = key; li.dataset.part = p.part; li.dataset.index = p.index;
      const done = decisions[key];
      if (done) li.dataset.decided = done;
      const span = document.createElement("span"); span.textContent = p.text; li.appendChild(span);
      if (done) {
        const tag = document.createElement("em"); tag.className = "decided"; tag.textContent = ` ${done === "recorded" ? decidedBefore[key] : done}`; li.appendChild(tag);
      } else if (data.editable) {
        [["accepted", "Accept", "A"], ["edited", "Edit", "E"], ["rejected", "Reject", "R"]].forEach(([action, label, key2]) => {
          const b = document.createElement("button");
          b.type = "button"; b.className = "secondary"; b.dataset.action = action; b.innerHTML = `${label} <kbd>${key2}</kbd>`;
          b.addEventListener("click", () => decide(p.part, p.index, action));
          li.appendChild(b);
        });
      }
      ol.appendChild(li);
    });
    if (focused) { const again = ol.querySelector(`[data-key="${focused}"]`); if (again) again.focus(); }
    renderProposalLayer();
  }
  document.addEventListener("keydown", (e) => {
    const li = document.activeElement && document.activeElement.closest ? document.activeElement.closest(".proposed-part") : null;
    if (!li || e.ctrlKey || e.metaKey || e.altKey) return;
    const action = { a: "accepted", e: "edited", r: "rejected" }[e.key.toLowerCase()];
    if (!action) return;
    e.preventDefault();
    decide(li.dataset.part, Number(li.dataset.index), action);
  });
  document.addEventListener("boxes:render", renderProposalLayer);
  if (proposal) renderProposal();

  window.WB = { chainJSON: () => JSON.stringify(state.toolchain), save, boxes, state };
})();
