/* The item page's recovery-transform fields and the transform they stand for (docs/annotation.md,
 * "Recovery transform"). No DOM here: the fields are plain strings, as the inputs hold them.
 *
 * Contrast α and brightness β are one step, the registry's `contrast`: α × pixel + β, clipped to 0-255
 * once. Two steps (α, clipped, then + β, clipped again) lose what the first clip cut: α 2 then β -128
 * turns every channel above 127 into 127, a flat image, orange into olive. β alone is `brightness`.
 *
 * fromOps takes into the fields only what they give back unchanged: the operations in the fields' order
 * (rotate, flip, contrast or brightness, gamma), each once; from the first one that is not, the rest is
 * kept as it is, after them, in its order (an imported file may hold more). */
(function () {
  "use strict";
  const SLOTS = { rotate: 0, flip: 1, contrast: 2, brightness: 2, gamma: 3 };
  const RIGHT = ["0", "90", "180", "270"];

  function number(text, fallback) {
    const v = parseFloat(text);
    return Number.isFinite(v) ? v : fallback;
  }

  function toOps(f) {
    const ops = [];
    const rot = f.rotate === "custom" ? number(f.angle, 0) : parseInt(f.rotate, 10) || 0;
    if (rot) ops.push({ op: "rotate", angle: rot });
    if (f.flip) ops.push({ op: "flip", direction: f.flip });
    const alpha = number(f.alpha, 1), beta = number(f.beta, 0);
    if (alpha !== 1) ops.push(beta ? { op: "contrast", alpha, beta } : { op: "contrast", alpha });
    else if (beta) ops.push({ op: "brightness", beta });
    const gamma = number(f.gamma, 1);
    if (gamma !== 1) ops.push({ op: "gamma", gamma });
    return ops;
  }

  function fieldOf(op) { // the fields one operation fills, or null when they cannot hold it
    if (op.op === "rotate" && Number.isFinite(op.angle) && op.angle) {
      const a = String(((op.angle % 360) + 360) % 360);
      return RIGHT.includes(a) ? { rotate: a } : { rotate: "custom", angle: String(op.angle) };
    }
    if (op.op === "flip" && (op.direction === undefined || ["horizontal", "vertical", "both"].includes(op.direction)) && Object.keys(op).length <= 2) {
      return { flip: op.direction || "horizontal" };
    }
    const extra = Object.keys(op).some((k) => !["op", "alpha", "beta", "additive", "gamma"].includes(k));
    if (extra) return null;
    if (op.op === "contrast" && Number.isFinite(op.alpha) && op.alpha !== 1 && op.additive === undefined && op.gamma === undefined) {
      const beta = op.beta === undefined ? 0 : op.beta;
      return Number.isFinite(beta) ? { alpha: String(op.alpha), beta: String(beta) } : null;
    }
    if (op.op === "brightness" && Number.isFinite(op.beta) && op.beta && (op.additive === undefined || op.additive === true) && op.alpha === undefined && op.gamma === undefined) {
      return { beta: String(op.beta) };
    }
    if (op.op === "gamma" && Number.isFinite(op.gamma) && op.gamma !== 1 && Object.keys(op).length === 2) return { gamma: String(op.gamma) };
    return null;
  }

  function fromOps(ops) {
    const fields = { rotate: "0", angle: "0", flip: "", alpha: "1", beta: "0", gamma: "1" };
    const extra = [];
    let slot = -1;
    for (const op of ops || []) {
      const f = extra.length || !op || typeof op !== "object" ? null : fieldOf(op);
      if (f && SLOTS[op.op] > slot) {
        Object.assign(fields, f);
        slot = SLOTS[op.op];
      } else extra.push(op);
    }
    return { fields, extra };
  }

  window.RecoveryFields = { toOps, fromOps };
})();
