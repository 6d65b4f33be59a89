/* Where a point of one image lands in another (docs/annotation.md, "A drawn box into a call's arguments").
 * Every registry tool that moves pixels is an affine map of the plane, written here to match
 * annotation/imagetools (geometry.py, adapt.py's zoom_in): rotate counter-clockwise about the centre on a
 * canvas grown to the rotated bounds, flip, crop, zoom_in (cut, then scale), resize, pyramid, translate.
 * Every other tool keeps its input's frame (it only recolours or draws); a declared tool or an unknown
 * one has no known geometry. Coordinates are continuous: a pixel i covers [i, i + 1). No DOM here. */
(function () {
  "use strict";
  // [a, b, c, d, e, f]: x' = a x + b y + c, y' = d x + e y + f
  const IDENTITY = [1, 0, 0, 0, 1, 0];
  const GEOMETRY = new Set(["rotate", "flip", "crop", "zoom_in", "resize", "pyramid", "translate"]);

  function compose(second, first) {
    const [a2, b2, c2, d2, e2, f2] = second, [a1, b1, c1, d1, e1, f1] = first;
    return [a2 * a1 + b2 * d1, a2 * b1 + b2 * e1, a2 * c1 + b2 * f1 + c2,
      d2 * a1 + e2 * d1, d2 * b1 + e2 * e1, d2 * c1 + e2 * f1 + f2];
  }
  function invert([a, b, c, d, e, f]) {
    const det = a * e - b * d;
    return [e / det, -b / det, (b * f - e * c) / det, -d / det, a / det, (d * c - a * f) / det];
  }
  function apply([a, b, c, d, e, f], [x, y]) { return [a * x + b * y + c, d * x + e * y + f]; }

  function rotation(angle, [w, h]) {
    const quarters = angle / 90;
    const exact = Math.abs(quarters - Math.round(quarters)) < 1e-9;
    const r = (angle * Math.PI) / 180;
    let cos = Math.cos(r), sin = Math.sin(r);
    let size;
    if (exact) {
      cos = Math.round(cos); sin = Math.round(sin);
      size = Math.round(quarters) % 2 ? [h, w] : [w, h];
    } else {
      const c = Math.abs(cos), s = Math.abs(sin);
      size = [Math.ceil(w * c + h * s - 1e-6), Math.ceil(w * s + h * c - 1e-6)];
    }
    const [W, H] = size; // p' = R (p - centre) + new centre, R counter-clockwise with y pointing down
    return { matrix: [cos, sin, W / 2 - cos * w / 2 - sin * h / 2, -sin, cos, H / 2 + sin * w / 2 - cos * h / 2], size };
  }

  function boxArg(args) {
    const b = args.bbox || args.bbox_2d;
    if (Array.isArray(b) && b.length === 4 && b.every(Number.isFinite)) return b;
    if (["x", "y", "width", "height"].every((k) => Number.isFinite(args[k]))) return [args.x, args.y, args.x + args.width, args.y + args.height];
    return null;
  }

  function scaled([w, h], [W, H]) { return { matrix: [W / w, 0, 0, 0, H / h, 0], size: [W, H] }; }

  // One step of a chain: the map from its input's pixels to its output's and the output's size, or null.
  function step(tool, args, size, keepsFrame) {
    args = args || {};
    const [w, h] = size;
    if (!GEOMETRY.has(tool)) return keepsFrame ? { matrix: IDENTITY, size } : null;
    switch (tool) {
      case "rotate":
        return Number.isFinite(Number(args.angle)) ? rotation(Number(args.angle), size) : null;
      case "flip": {
        const d = args.direction || "horizontal", fx = d !== "vertical", fy = d !== "horizontal";
        return { matrix: [fx ? -1 : 1, 0, fx ? w : 0, 0, fy ? -1 : 1, fy ? h : 0], size };
      }
      case "crop":
      case "zoom_in": {
        const b = boxArg(args);
        if (!b) return null;
        const x1 = Math.floor(b[0]), y1 = Math.floor(b[1]), x2 = Math.ceil(b[2]), y2 = Math.ceil(b[3]);
        const scale = tool === "zoom_in" && Number.isFinite(args.scale) ? args.scale : 1;
        const W = scale === 1 ? x2 - x1 : Math.max(1, Math.round((x2 - x1) * scale));
        const H = scale === 1 ? y2 - y1 : Math.max(1, Math.round((y2 - y1) * scale));
        const sx = W / (x2 - x1), sy = H / (y2 - y1);
        return { matrix: [sx, 0, -x1 * sx, 0, sy, -y1 * sy], size: [W, H] };
      }
      case "resize": {
        if (args.preset) { const f = args.preset === "half" ? 0.5 : 2; return scaled(size, [Math.max(1, Math.round(w * f)), Math.max(1, Math.round(h * f))]); }
        if (!args.width && !args.height) return null;
        const W = args.width || Math.max(1, Math.round(w * args.height / h));
        const H = args.height || Math.max(1, Math.round(h * args.width / w));
        return scaled(size, [W, H]);
      }
      case "pyramid": {
        let [W, H] = size;
        for (let k = 0; k < (args.levels || 1); k++) [W, H] = args.mode === "pyr_up" ? [W * 2, H * 2] : [Math.ceil(W / 2), Math.ceil(H / 2)];
        return scaled(size, [W, H]);
      }
      case "translate": {
        const d = Number(args.distance) || 0;
        const dx = { left: -d, right: d }[args.direction] || 0, dy = { up: -d, down: d }[args.direction] || 0;
        return { matrix: [1, 0, dx, 0, 1, dy], size };
      }
    }
    return null;
  }

  // A box [x1, y1, x2, y2] through a map: the bounds of its four corners (a turn by a non-right angle
  // gives a larger box that holds the whole of it), whole pixels outward.
  function mapBox(matrix, [x1, y1, x2, y2]) {
    const pts = [[x1, y1], [x2, y1], [x1, y2], [x2, y2]].map((p) => apply(matrix, p));
    const xs = pts.map((p) => p[0]), ys = pts.map((p) => p[1]);
    const snap = (v) => Math.round(v * 1e6) / 1e6; // 59.99999999 is 60, not 59
    return [Math.floor(snap(Math.min(...xs))), Math.floor(snap(Math.min(...ys))), Math.ceil(snap(Math.max(...xs))), Math.ceil(snap(Math.max(...ys)))];
  }

  window.Frames = { IDENTITY, compose, invert, apply, step, mapBox };
})();
