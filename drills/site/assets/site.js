// The Stage 0 page: EX·01 playground, its roofline plot, EX·06's chip switch, the
// "Can you" ticks (localStorage) and the mastery header. No formula lives here:
// FLOPs and bytes are cubic polynomials in N exported from generator/model/costs.py by
// drills/site/data.py; intensity, ridge, T_math, T_comms, floor, attainable and the verdict are
// generator/model/formulas.py's expressions, exported as data and evaluated below; numbers print
// like generator/model/units.py (Python's format(), half-even rounding).
"use strict";
(function () {
  const DATA = JSON.parse(document.getElementById("site-data").textContent);

  // ---- Python-compatible number formatting (exact decimal of a double, half-even) ----
  function exact(x) { // x > 0 finite -> [BigInt n, k] with x == n / 10**k exactly
    const view = new DataView(new ArrayBuffer(8));
    view.setFloat64(0, x);
    const hi = view.getUint32(0), lo = view.getUint32(4);
    let e = (hi >>> 20) & 0x7ff;
    let m = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
    if (e === 0) e = 1; else m |= 1n << 52n;
    e -= 1075;
    return e >= 0 ? [m << BigInt(e), 0] : [m * 5n ** BigInt(-e), -e];
  }
  function roundAt(x, d) { // round |x| to d decimals (d may be negative): BigInt of x * 10**d
    const [n, k] = exact(x);
    const cut = k - d;
    if (cut <= 0) return n * 10n ** BigInt(-cut);
    const p = 10n ** BigInt(cut), q = n / p, r = n % p, half = p / 2n;
    return (r > half || (r === half && q % 2n === 1n)) ? q + 1n : q;
  }
  function place(digits, d) { // integer string scaled by 10**-d -> decimal string
    if (d <= 0) return digits + "0".repeat(-d);
    digits = digits.padStart(d + 1, "0");
    return digits.slice(0, -d) + "." + digits.slice(-d);
  }
  function special(x) {
    if (Number.isNaN(x)) return "nan";
    if (!Number.isFinite(x)) return x > 0 ? "inf" : "-inf";
    return null;
  }
  function fixed(x, d) { // Python f"{x:.{d}f}"
    const s = special(x); if (s) return s;
    if (x === 0) return place("0", d);
    const sign = x < 0 ? "-" : "";
    return sign + place(roundAt(Math.abs(x), d).toString(), d);
  }
  function sig(x, p) { // x > 0 rounded to p significant digits -> [digit string of length p, exponent]
    const [n, k] = exact(x);
    let exp = n.toString().length - 1 - k;
    let q = roundAt(x, p - 1 - exp).toString();
    if (q.length > p) { exp += 1; q = q.slice(0, p); }
    return [q, exp];
  }
  function expo(sign, digits, exp, strip) {
    let mant = digits.length > 1 ? digits[0] + "." + digits.slice(1) : digits;
    if (strip && mant.includes(".")) mant = mant.replace(/0+$/, "").replace(/\.$/, "");
    return sign + mant + "e" + (exp < 0 ? "-" : "+") + String(Math.abs(exp)).padStart(2, "0");
  }
  function efmt(x, d) { // Python f"{x:.{d}e}"
    const s = special(x); if (s) return s;
    if (x === 0) return expo("", "0".repeat(d + 1), 0, false);
    const [digits, exp] = sig(Math.abs(x), d + 1);
    return expo(x < 0 ? "-" : "", digits, exp, false);
  }
  function gfmt(x, p) { // Python f"{x:.{p}g}"
    const s = special(x); if (s) return s;
    if (p === 0) p = 1;
    if (x === 0) return Object.is(x, -0) ? "-0" : "0";
    const sign = x < 0 ? "-" : "";
    const [digits, exp] = sig(Math.abs(x), p);
    if (exp < -4 || exp >= p) return expo(sign, digits, exp, true);
    let out = place(digits, p - 1 - exp);
    if (out.includes(".")) out = out.replace(/0+$/, "").replace(/\.$/, "");
    return sign + out;
  }
  function si(value, unit, digits = 3) { // generator.model.units.si
    if (value === 0 || !Number.isFinite(value)) return gfmt(value, 6) + " " + unit;
    const scale = DATA.si_scale;
    for (const [factor, prefix] of scale) {
      if (Math.abs(value) >= factor * 0.9995) return gfmt(value / factor, digits) + " " + prefix + unit;
    }
    const [factor, prefix] = scale[scale.length - 1];
    return gfmt(value / factor, digits) + " " + prefix + unit;
  }
  const seconds = (v) => si(v, "s");
  function intensityNumber(x) { // generator.model.units.intensity_number
    if (Math.abs(x) >= 1e6) return sci(x);
    return Math.abs(x) >= 1000 ? fixed(x, 0) : gfmt(x, 4);
  }
  function sci(value, digits = 4) { // generator.model.units.sci
    if (value === 0) return "0";
    if (Number.isInteger(value) && Math.abs(value) < 1e6) return String(value);
    let [mant, e] = efmt(value, digits - 1).split("e");
    mant = mant.replace(/0+$/, "").replace(/\.$/, "");
    return mant + "e" + String(parseInt(e, 10));
  }

  // ---- the model: generator.model.costs via exported polynomials, generator.model.roofline's formulas ----
  const chips = Object.fromEntries(DATA.chips.map((c) => [c.name, c]));
  const ops = Object.fromEntries(DATA.ops.map((o) => [o.name, o]));
  const poly = (c, n) => c[0] + c[1] * n + c[2] * n * n + c[3] * n * n * n;
  // generator.model.formulas: an expression is a name, ["str", text] or [operator, ...operands]
  const OPERATORS = {
    "/": (a, b) => a / b, "*": (a, b) => a * b, "+": (a, b) => a + b,
    max: (a, b) => Math.max(a, b), min: (a, b) => Math.min(a, b), ">=": (a, b) => a >= b,
  };
  function evaluate(expr, values) {
    if (typeof expr === "string") return values[expr];
    const [head, ...args] = expr;
    if (head === "str") return args[0];
    if (head === "if") return evaluate(args[0], values) ? evaluate(args[1], values) : evaluate(args[2], values);
    return OPERATORS[head](evaluate(args[0], values), evaluate(args[1], values));
  }
  function roofline(given) { // every formula, in order, over the given quantities
    const values = Object.assign({}, given);
    for (const [name, expr] of DATA.formulas) values[name] = evaluate(expr, values);
    return values;
  }

  function compute(chipName, opName, n, dtype) {
    const chip = chips[chipName], op = ops[opName];
    if (!chip || !op || !op.by_dtype[dtype]) return { error: "unknown chip, op or dtype" };
    if (!Number.isInteger(n) || n < 1 || n > DATA.max_n) {
      return { error: `N must be a whole number from 1 to ${DATA.max_n}` };
    }
    const cost = op.by_dtype[dtype], k = chip.ceilings[cost.compute_dtype];
    if (k.error) return { error: k.error };
    const flops = poly(cost.flops, n), bytes = poly(cost.bytes, n);
    const peak = k.peak_flops_per_s, bw = k.hbm_bytes_per_s;
    const r = roofline({ flops, bytes, peak, bw });
    const intensity = r.intensity, ridge = r.ridge, tMath = r.t_math, tComms = r.t_comms;
    const floor = r.floor, upper = r.upper, bound = r.verdict, attainable = r.attainable;
    const fill = (t) => t.split("{N}").join(String(n));
    const dims = op.shape.map((d) => (d === "N" ? n : d));
    const worked = [
      `FLOPs      = ${cost.flops_formula} = ${fill(cost.flops_working)} = ${sci(flops)}`,
      `bytes      = ${cost.bytes_formula} = ${fill(cost.bytes_working)} = ${sci(bytes)}`,
      `intensity  = FLOPs / bytes = ${sci(flops)} / ${sci(bytes)} = ${intensityNumber(intensity)} FLOPs/byte`,
      `ridge      = peak / HBM bandwidth = ${sci(peak)} FLOP/s / ${sci(bw)} B/s = ${intensityNumber(ridge)} FLOPs/byte (${k.dtype})`,
      `verdict    = intensity ${bound === "compute" ? ">=" : "<"} ridge -> ${bound}-bound`,
      `T_math     = FLOPs / peak = ${sci(flops)} / ${sci(peak)} = ${seconds(tMath)}`,
      `T_comms    = bytes / HBM bandwidth = ${sci(bytes)} / ${sci(bw)} = ${seconds(tComms)}`,
      `floor      = max(T_math, T_comms) = ${seconds(floor)}   (upper bound: T_math + T_comms = ${seconds(upper)})`,
      `attainable = min(peak, intensity × bandwidth) = min(${sci(peak)}, ${sci(r.memory_roof)}) = ${si(attainable, "FLOP/s")}`,
      `constants  : ${k.name} ${k.dtype} peak ${sci(peak)} FLOP/s, HBM ${sci(bw)} B/s — ${k.source}`,
      `convention : ${cost.convention}`,
    ];
    return {
      intensity, attainable, floor, t_math: tMath, t_comms: tComms, bound, flops, bytes, ridge, peak, bw,
      text: { intensity: `${intensityNumber(intensity)} FLOPs/byte`, verdict: `${bound}-bound`,
              attainable: si(attainable, "FLOP/s"), floor: seconds(floor) },
      header: `chip: ${chip.display}   op: ${cost.op} [${dims.join(",")}]   dtype: ${cost.compute_dtype}`,
      worked,
    };
  }

  // ---- EX·01: the playground ----
  const $ = (id) => document.getElementById(id);
  const SVGNS = "http://www.w3.org/2000/svg";
  function svgEl(name, attrs, text) {
    const el = document.createElementNS(SVGNS, name);
    for (const [a, v] of Object.entries(attrs)) el.setAttribute(a, String(v));
    if (text !== undefined) el.textContent = text;
    return el;
  }

  // The plot is drawn in CSS pixels: its viewBox is set to the size it is shown at, so
  // text sized in px renders at that size on every screen (redrawn on resize).
  const decadeLabel = (d) => `1e${d}`;  // one style on both axes: 1e-1 ... 1e4, 1e10 ... 1e15
  let lastResult = null;
  function plot(r) { // log-log roofline: the chip's roof, its ridge, the op's point
    lastResult = r;
    const svg = $("ex01-plot");
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    if (!r || r.error) return;
    const shownW = Math.round(svg.getBoundingClientRect().width) || 420;
    const W = Math.max(240, shownW), H = Math.round(Math.min(320, Math.max(230, W * 0.7)));
    svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
    const L = 62, R = 14, T = 24, B = 44, CHAR = 7.2; // CHAR: px per character of 12 px text (an upper bound)
    const decade = (v, up) => Math.pow(10, up ? Math.ceil(Math.log10(v)) : Math.floor(Math.log10(v)));
    const shown = r.intensity > 0 ? r.intensity : null;
    const x0 = decade(Math.min(0.1, shown ? shown / 3 : 0.1), false);
    const x1 = decade(Math.max(1e4, shown ? shown * 3 : 1e4, r.ridge * 10), true);
    const y1 = decade(r.peak * 2, true), y0 = decade(Math.min(x0 * r.bw, r.peak / 1e4), false);
    const X = (v) => L + (Math.log10(v) - Math.log10(x0)) / (Math.log10(x1) - Math.log10(x0)) * (W - L - R);
    const Y = (v) => H - B - (Math.log10(v) - Math.log10(y0)) / (Math.log10(y1) - Math.log10(y0)) * (H - T - B);
    svg.appendChild(svgEl("rect", { x: L, y: T, width: W - L - R, height: H - T - B, class: "frame" }));
    const dx0 = Math.round(Math.log10(x0)), dx1 = Math.round(Math.log10(x1));
    const dy0 = Math.round(Math.log10(y0)), dy1 = Math.round(Math.log10(y1));
    // a tick at every decade; a label on every decade where the labels fit side by side
    const xGap = (W - L - R) / (dx1 - dx0), widest = Math.max(decadeLabel(dx0).length, decadeLabel(dx1).length) * CHAR + 6;
    const xStep = Math.max(1, Math.ceil(widest / xGap));
    for (let d = dx0; d <= dx1; d++) {
      const x = X(10 ** d);
      svg.appendChild(svgEl("line", { x1: x, x2: x, y1: H - B, y2: H - B + 5, class: "tickmark" }));
      if ((d - dx0) % xStep === 0) {
        svg.appendChild(svgEl("text", { x, y: H - B + 18, class: "tick xtick", "text-anchor": "middle" }, decadeLabel(d)));
      }
    }
    const yStep = Math.max(1, Math.ceil(16 / ((H - T - B) / (dy1 - dy0))));
    for (let d = dy0; d <= dy1; d++) {
      const y = Y(10 ** d);
      svg.appendChild(svgEl("line", { x1: L - 5, x2: L, y1: y, y2: y, class: "tickmark" }));
      if ((d - dy0) % yStep === 0) {
        svg.appendChild(svgEl("text", { x: L - 7, y: y + 4, class: "tick ytick", "text-anchor": "end" }, decadeLabel(d)));
      }
    }
    svg.appendChild(svgEl("text", { x: (L + W - R) / 2, y: H - 8, class: "axis", "text-anchor": "middle" }, "intensity (FLOPs/byte, log)"));
    svg.appendChild(svgEl("text", { x: 14, y: (T + H - B) / 2, class: "axis", "text-anchor": "middle",
      transform: `rotate(-90 14 ${(T + H - B) / 2})` }, "FLOP/s (log)"));
    const roof = `${X(x0)},${Y(x0 * r.bw)} ${X(r.ridge)},${Y(r.peak)} ${X(x1)},${Y(r.peak)}`;
    svg.appendChild(svgEl("polyline", { points: roof, class: "roof" }));
    svg.appendChild(svgEl("line", { x1: X(r.ridge), x2: X(r.ridge), y1: Y(r.peak), y2: H - B, class: "ridge" }));
    // the same numbers the worked arithmetic prints (sci for the peak, intensityNumber for the ridge)
    svg.appendChild(svgEl("text", { x: W - R - 4, y: Y(r.peak) - 6, class: "label", id: "ex01-peak-label",
      "text-anchor": "end" }, `peak ${sci(r.peak)} FLOP/s`));
    const ridgeLeft = X(r.ridge) > (L + W - R) / 2;
    svg.appendChild(svgEl("text", { x: X(r.ridge) + (ridgeLeft ? -5 : 5), y: H - B - 8, class: "label", id: "ex01-ridge-label",
      "text-anchor": ridgeLeft ? "end" : "start" }, `ridge ${intensityNumber(r.ridge)}`));
    if (shown) {
      svg.appendChild(svgEl("circle", { cx: X(shown), cy: Y(r.attainable), r: 5, class: `point ${r.bound}`, id: "ex01-point" }));
    } else {
      svg.appendChild(svgEl("text", { x: L + 6, y: T + 16, class: "label", id: "ex01-point" }, "intensity 0: off the log scale"));
    }
  }

  function readInputs() {
    const raw = $("ex01-n").value.trim();
    const n = /^[0-9]+$/.test(raw) ? Number(raw) : NaN;
    return [$("ex01-chip").value, $("ex01-op").value, n, $("ex01-dtype").value];
  }

  function update() {
    const r = compute(...readInputs());
    const outs = { intensity: "ex01-intensity", verdict: "ex01-verdict", attainable: "ex01-attainable", floor: "ex01-floor" };
    for (const [key, id] of Object.entries(outs)) $(id).textContent = r.error ? "—" : r.text[key];
    $("ex01-error").textContent = r.error || "";
    $("ex01-header").textContent = r.error ? "" : r.header;
    $("ex01-worked").textContent = r.error ? "" : r.worked.join("\n");
    $("ex01-n-label").textContent = $("ex01-n").value;
    plot(r);
  }

  // ---- EX·06: show the selected chip's hierarchy ----
  function showHierarchy() {
    const chosen = $("ex06-chip").value;
    for (const block of document.querySelectorAll("[data-ex06-chip]")) {
      block.hidden = block.getAttribute("data-ex06-chip") !== chosen;
    }
  }

  // ---- Can you: ticks in this browser's localStorage only ----
  const STORE_KEY = "rudrite-kernels/stage-0/can-you";
  function loadTicks() {
    try {
      const parsed = JSON.parse(window.localStorage.getItem(STORE_KEY) || "[]");
      return Array.isArray(parsed) ? parsed.filter((v) => Number.isInteger(v)) : [];
    } catch (e) { return []; }
  }
  function saveTicks(ticks) {
    try { window.localStorage.setItem(STORE_KEY, JSON.stringify(ticks)); } catch (e) { /* storage off: ticks last this visit */ }
  }
  function canYouBoxes() { return Array.from($("canyou").querySelectorAll("input[type=checkbox]")); }
  function refreshCounts() {
    const boxes = canYouBoxes(), ticked = boxes.filter((b) => b.checked).length;
    $("canyou-count").textContent = `${ticked}/${boxes.length}`;
    const canYouDone = ticked === boxes.length;
    $("mastery-canyou").classList.toggle("done", canYouDone);
    const done = [canYouDone, $("mastery-lab").classList.contains("done"), $("mastery-gate").classList.contains("done")];
    $("mastery-count").textContent = `${done.filter(Boolean).length}/${done.length}`;
  }

  function init() {
    const d = DATA.defaults;
    $("ex01-chip").value = d.chip; $("ex01-op").value = d.op; $("ex01-n").value = String(d.n); $("ex01-dtype").value = d.dtype;
    for (const id of ["ex01-chip", "ex01-op", "ex01-n", "ex01-dtype"]) {
      $(id).addEventListener("input", update);
      $(id).addEventListener("change", update);
    }
    update();
    let resizing = null;
    window.addEventListener("resize", () => {
      if (resizing) window.cancelAnimationFrame(resizing);
      resizing = window.requestAnimationFrame(() => plot(lastResult));
    });
    $("ex06-chip").addEventListener("change", showHierarchy);
    showHierarchy();
    const ticks = new Set(loadTicks());
    for (const box of canYouBoxes()) {
      const n = Number(box.getAttribute("data-n"));
      box.checked = ticks.has(n);
      box.addEventListener("change", () => {
        const now = new Set(loadTicks());
        if (box.checked) now.add(n); else now.delete(n);
        saveTicks(Array.from(now).sort((a, b) => a - b));
        refreshCounts();
      });
    }
    refreshCounts();
  }

  // The parity test calls these; the page itself uses them through update().
  window.drillSite = { compute, format: { fixed, gfmt, efmt, si, sci, seconds, intensityNumber } };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init); else init();
})();
