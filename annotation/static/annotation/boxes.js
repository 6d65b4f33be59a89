/* The box editor: an SVG overlay whose user units are full-size pixels of the transformed image.
 * The preview <image> is stretched over the whole frame, so a box never passes through preview
 * pixels and the server's downscaling cannot shift it. Zoom and pan change the viewBox. */
(function () {
  "use strict";
  const NS = "http://www.w3.org/2000/svg";
  const CORNERS = ["nw", "ne", "sw", "se"];
  const MIN_SIZE = 2; // full-size pixels; a click without a drag draws nothing
  const HANDLE_SEEN = 12, HANDLE_HIT = 22; // screen pixels, whatever the zoom

  function isTyping(el) {
    return el && (el.tagName === "INPUT" || el.tagName === "TEXTAREA" || el.tagName === "SELECT" || el.isContentEditable);
  }

  class BoxEditor {
    constructor(svg, group, onChange) {
      this.svg = svg;
      this.g = group;
      this.onChange = onChange;
      this.boxes = [];
      this.selected = -1;
      this.undoStack = [];
      this.redoStack = [];
      this.drag = null;
      this.space = false;
      this.editable = true;
      this.setFrame(+svg.dataset.frameWidth, +svg.dataset.frameHeight);
      svg.addEventListener("pointerdown", (e) => this.down(e));
      svg.addEventListener("pointermove", (e) => this.move(e));
      svg.addEventListener("pointerup", (e) => this.up(e));
      svg.addEventListener("wheel", (e) => this.wheel(e), { passive: false });
      document.addEventListener("keydown", (e) => this.key(e));
      document.addEventListener("keyup", (e) => { if (e.key === " ") this.space = false; });
    }

    setFrame(width, height) {
      this.W = width;
      this.H = height;
      this.svg.dataset.frameWidth = width;
      this.svg.dataset.frameHeight = height;
      const image = this.svg.querySelector("image");
      image.setAttribute("width", width);
      image.setAttribute("height", height);
      this.fit();
    }

    fit() { this.view = { x: 0, y: 0, w: this.W, h: this.H }; this.applyView(); }

    applyView() {
      const v = this.view;
      this.svg.setAttribute("viewBox", `${v.x} ${v.y} ${v.w} ${v.h}`);
      const zoom = document.getElementById("zoom-level");
      if (zoom) zoom.textContent = `${Math.round((this.W / v.w) * 100)}%`;
      this.render();
    }

    // `proposal`: the index of the model's proposed box this one was taken from (docs/annotation.md, "Proposals").
    load(regions) { this.boxes = regions.map((r) => ({ box: r.box.slice(), label: r.label || "", proposal: r.proposal })); this.selected = -1; this.render(); }

    get regions() { return this.boxes.map((b) => (b.proposal === undefined ? { box: b.box.slice(), label: b.label } : { box: b.box.slice(), label: b.label, proposal: b.proposal })); }

    point(e) {
      const p = this.svg.createSVGPoint();
      p.x = e.clientX; p.y = e.clientY;
      const q = p.matrixTransform(this.svg.getScreenCTM().inverse());
      return { x: Math.min(this.W, Math.max(0, q.x)), y: Math.min(this.H, Math.max(0, q.y)), rawX: q.x, rawY: q.y };
    }

    checkpoint() {
      this.undoStack.push(JSON.stringify(this.boxes));
      if (this.undoStack.length > 200) this.undoStack.shift();
      this.redoStack = [];
    }

    restore(from, to) {
      if (!from.length) return;
      to.push(JSON.stringify(this.boxes));
      this.boxes = JSON.parse(from.pop());
      this.selected = Math.min(this.selected, this.boxes.length - 1);
      this.changed();
    }

    undo() { this.restore(this.undoStack, this.redoStack); }
    redo() { this.restore(this.redoStack, this.undoStack); }

    changed() { this.render(); this.onChange(); }

    select(index) { this.selected = index; this.render(); }

    remove(index) {
      if (index < 0 || index >= this.boxes.length) return;
      this.checkpoint();
      this.boxes.splice(index, 1);
      this.selected = -1;
      this.changed();
    }

    // Screen pixels to full-size pixels at the current zoom.
    px(screen) { return (screen * this.view.w) / Math.max(1, this.svg.clientWidth); }

    render() {
      while (this.g.firstChild) this.g.removeChild(this.g.firstChild);
      const stroke = this.px(2);
      this.boxes.forEach((b, i) => {
        const [x1, y1, x2, y2] = b.box;
        const rect = document.createElementNS(NS, "rect");
        rect.setAttribute("x", x1); rect.setAttribute("y", y1);
        rect.setAttribute("width", x2 - x1); rect.setAttribute("height", y2 - y1);
        rect.setAttribute("class", "box" + (i === this.selected ? " selected" : ""));
        rect.setAttribute("stroke-width", stroke);
        rect.dataset.index = i;
        this.g.appendChild(rect);
        if (i === this.selected) {
          CORNERS.forEach((c) => {
            const hx = c.includes("w") ? x1 : x2, hy = c.includes("n") ? y1 : y2;
            // A 12 px square to see, under a transparent 22 px square to grab.
            [[HANDLE_SEEN, "handle"], [HANDLE_HIT, "handle-hit"]].forEach(([screen, kind]) => {
              const s = this.px(screen);
              const h = document.createElementNS(NS, "rect");
              h.setAttribute("x", hx - s / 2); h.setAttribute("y", hy - s / 2);
              h.setAttribute("width", s); h.setAttribute("height", s);
              h.setAttribute("class", `${kind} handle-${c}`);
              h.setAttribute("stroke-width", stroke);
              h.dataset.index = i; h.dataset.corner = c;
              this.g.appendChild(h);
            });
          });
        }
      });
      document.dispatchEvent(new CustomEvent("boxes:render", { detail: this }));
    }

    down(e) {
      if (e.button === 1 || this.space) {
        this.drag = { kind: "pan", sx: e.clientX, sy: e.clientY, view: { ...this.view } };
      } else if (e.button !== 0 || !this.editable) {
        return;
      } else {
        const p = this.point(e);
        const t = e.target;
        if (t.dataset && t.dataset.corner) {
          this.drag = { kind: "resize", index: +t.dataset.index, corner: t.dataset.corner, moved: false };
        } else if (t.dataset && t.dataset.index !== undefined) {
          const i = +t.dataset.index;
          this.select(i);
          this.drag = { kind: "move", index: i, start: p, orig: this.boxes[i].box.slice(), moved: false };
        } else {
          this.select(-1);
          this.drag = { kind: "draw", start: p, index: -1, moved: false };
        }
      }
      this.svg.setPointerCapture(e.pointerId);
      this.svg.focus({ preventScroll: true });
      e.preventDefault();
    }

    move(e) {
      const d = this.drag;
      if (!d) return;
      if (d.kind === "pan") {
        const k = this.view.w / Math.max(1, this.svg.clientWidth);
        this.view = { ...d.view, x: d.view.x - (e.clientX - d.sx) * k, y: d.view.y - (e.clientY - d.sy) * k };
        this.applyView();
        return;
      }
      const p = this.point(e);
      if (!d.moved) { this.checkpoint(); d.moved = true; }
      if (d.kind === "draw") {
        if (d.index < 0) { this.boxes.push({ box: [p.x, p.y, p.x, p.y], label: "" }); d.index = this.boxes.length - 1; this.selected = d.index; }
        this.boxes[d.index].box = [Math.min(d.start.x, p.x), Math.min(d.start.y, p.y), Math.max(d.start.x, p.x), Math.max(d.start.y, p.y)];
      } else if (d.kind === "move") {
        const [x1, y1, x2, y2] = d.orig;
        const dx = Math.min(this.W - x2, Math.max(-x1, p.x - d.start.x));
        const dy = Math.min(this.H - y2, Math.max(-y1, p.y - d.start.y));
        this.boxes[d.index].box = [x1 + dx, y1 + dy, x2 + dx, y2 + dy];
      } else if (d.kind === "resize") {
        const b = this.boxes[d.index].box;
        if (d.corner.includes("w")) b[0] = p.x; else b[2] = p.x;
        if (d.corner.includes("n")) b[1] = p.y; else b[3] = p.y;
      }
      this.render();
    }

    up(e) {
      const d = this.drag;
      this.drag = null;
      if (!d || d.kind === "pan" || !d.moved) return;
      const b = this.boxes[d.index];
      // Whole full-size pixels, corners in order: what the benchmark file stores.
      const [a, c] = [Math.round(Math.min(b.box[0], b.box[2])), Math.round(Math.max(b.box[0], b.box[2]))];
      const [bb, dd] = [Math.round(Math.min(b.box[1], b.box[3])), Math.round(Math.max(b.box[1], b.box[3]))];
      b.box = [a, bb, c, dd];
      if (c - a < MIN_SIZE || dd - bb < MIN_SIZE) {
        this.boxes.splice(d.index, 1);
        this.undoStack.pop();
        this.selected = -1;
        this.render();
        return;
      }
      this.changed();
    }

    wheel(e) {
      e.preventDefault();
      const factor = e.deltaY < 0 ? 1 / 1.2 : 1.2;
      const w = Math.min(this.W * 4, Math.max(8, this.view.w * factor));
      const k = w / this.view.w;
      const p = this.point(e);
      // Keep the point under the cursor where it is.
      this.view = { x: p.rawX - (p.rawX - this.view.x) * k, y: p.rawY - (p.rawY - this.view.y) * k, w, h: this.view.h * k };
      this.applyView();
    }

    key(e) {
      if (isTyping(document.activeElement) || document.querySelector("dialog[open]")) return; // a panel over the image has the keys
      const ctrl = e.ctrlKey || e.metaKey;
      if (e.key === " ") { this.space = true; if (document.activeElement === this.svg) e.preventDefault(); return; }
      if (ctrl && (e.key === "z" || e.key === "Z")) { e.preventDefault(); if (e.shiftKey) this.redo(); else this.undo(); return; }
      if (ctrl && e.key === "y") { e.preventDefault(); this.redo(); return; }
      if (e.key === "Escape") { this.drag = null; this.select(-1); return; }
      if (this.selected < 0 || !this.editable) return;
      if (e.key === "Delete" || e.key === "Backspace") { e.preventDefault(); this.remove(this.selected); return; }
      const step = e.shiftKey ? 10 : 1;
      const moves = { ArrowLeft: [-step, 0], ArrowRight: [step, 0], ArrowUp: [0, -step], ArrowDown: [0, step] };
      if (moves[e.key]) {
        e.preventDefault();
        const b = this.boxes[this.selected].box;
        const dx = Math.min(this.W - b[2], Math.max(-b[0], moves[e.key][0]));
        const dy = Math.min(this.H - b[3], Math.max(-b[1], moves[e.key][1]));
        if (!dx && !dy) return;
        this.checkpoint();
        this.boxes[this.selected].box = [b[0] + dx, b[1] + dy, b[2] + dx, b[3] + dy];
        this.changed();
      }
    }
  }

  window.BoxEditor = BoxEditor;
})();
