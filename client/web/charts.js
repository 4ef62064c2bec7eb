// The profile's two charts, drawn here as SVG: a player's score deal by deal, and
// their wins by week. No chart library and nothing fetched elsewhere (the page's
// policy allows neither); the numbers come from the `profile` reply as they are,
// so a chart shows one mark per point it was given: a dot per deal, a bar per week.
// Colours come from style.css through classes (an inline style would be refused).

const SVG = "http://www.w3.org/2000/svg";
const W = 640;
const H = 200;
const PAD = { left: 44, right: 12, top: 12, bottom: 28 };

function el(tag, attrs = {}, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== null && v !== undefined) node.setAttribute(k, String(v));
  for (const c of children) if (c) node.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
  return node;
}

function frame(label) {
  return el("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": label, class: "chart", preserveAspectRatio: "xMidYMid meet" });
}

function day(t) {
  return new Date(t * 1000).toISOString().slice(5, 10); // MM-DD, in UTC as the weeks are
}

/** From [lo, hi] to [a, b]; a flat range maps to the middle. */
function scale(lo, hi, a, b) {
  return (v) => (hi === lo ? (a + b) / 2 : a + ((v - lo) * (b - a)) / (hi - lo));
}

/**
 * The score of each deal, oldest first: `points` is the reply's `scores`,
 * [[t, score], …]. Deals are spaced evenly (a gap of days is not a gap in play),
 * with the zero line drawn when scores cross it.
 */
export function scoreChart(points, what = "Score", noun = "deal") {
  const svg = frame(`${what} over the last ${points.length} ${noun}${points.length === 1 ? "" : "s"}`);
  svg.dataset.points = String(points.length);
  if (!points.length) {
    svg.appendChild(el("text", { x: W / 2, y: H / 2, class: "chart-empty", "text-anchor": "middle" }, `No ${noun}s yet`));
    return svg;
  }
  const scores = points.map((p) => p[1]);
  const lo = Math.min(0, ...scores);
  const hi = Math.max(0, ...scores);
  const x = scale(0, Math.max(1, points.length - 1), PAD.left, W - PAD.right);
  const y = scale(lo, hi, H - PAD.bottom, PAD.top);
  svg.appendChild(el("line", { x1: PAD.left, x2: W - PAD.right, y1: y(0), y2: y(0), class: "chart-axis" }));
  for (const v of new Set([lo, hi])) {
    svg.appendChild(el("text", { x: PAD.left - 6, y: y(v) + 4, "text-anchor": "end", class: "chart-label" }, String(v)));
  }
  const xs = points.length === 1 ? [(PAD.left + W - PAD.right) / 2] : points.map((_, i) => x(i));
  svg.appendChild(el("polyline", { points: points.map((p, i) => `${xs[i].toFixed(1)},${y(p[1]).toFixed(1)}`).join(" "), class: "chart-line" }));
  points.forEach((p, i) => {
    const dot = el("circle", { cx: xs[i].toFixed(1), cy: y(p[1]).toFixed(1), r: 3, class: "chart-dot" },
      el("title", {}, `${day(p[0])}: ${p[1]}`));
    svg.appendChild(dot);
  });
  svg.appendChild(el("text", { x: PAD.left, y: H - 8, class: "chart-label" }, day(points[0][0])));
  svg.appendChild(el("text", { x: W - PAD.right, y: H - 8, "text-anchor": "end", class: "chart-label" }, day(points[points.length - 1][0])));
  return svg;
}

/**
 * Wins by week, oldest first: `weeks` is the reply's [[week_start, wins, deals], …].
 * A bar per week: its deals behind, its wins in front.
 */
export function weeksChart(weeks) {
  const svg = frame(`Wins by week over the last ${weeks.length} weeks`);
  svg.dataset.points = String(weeks.length);
  const most = Math.max(1, ...weeks.map((w) => w[2]));
  const slot = (W - PAD.left - PAD.right) / Math.max(1, weeks.length);
  const y = scale(0, most, H - PAD.bottom, PAD.top);
  svg.appendChild(el("line", { x1: PAD.left, x2: W - PAD.right, y1: y(0), y2: y(0), class: "chart-axis" }));
  svg.appendChild(el("text", { x: PAD.left - 6, y: y(most) + 4, "text-anchor": "end", class: "chart-label" }, String(most)));
  weeks.forEach(([start, wins, deals], i) => {
    const x0 = PAD.left + i * slot + slot * 0.15;
    const w = slot * 0.7;
    const g = el("g", { class: "chart-week" },
      el("title", {}, `week of ${day(start)}: ${wins} win${wins === 1 ? "" : "s"} in ${deals} deal${deals === 1 ? "" : "s"}`));
    g.appendChild(el("rect", { x: x0.toFixed(1), y: y(deals).toFixed(1), width: w.toFixed(1), height: (y(0) - y(deals)).toFixed(1), class: "chart-deals" }));
    g.appendChild(el("rect", { x: x0.toFixed(1), y: y(wins).toFixed(1), width: w.toFixed(1), height: (y(0) - y(wins)).toFixed(1), class: "chart-bar" }));
    svg.appendChild(g);
  });
  if (weeks.length) {
    svg.appendChild(el("text", { x: PAD.left, y: H - 8, class: "chart-label" }, day(weeks[0][0])));
    svg.appendChild(el("text", { x: W - PAD.right, y: H - 8, "text-anchor": "end", class: "chart-label" }, day(weeks[weeks.length - 1][0])));
  }
  return svg;
}

/**
 * A daily run against the leader's: for each card home (1st, 2nd, …), the
 * seconds each run took to get it there, one line a run, and a mark where the
 * gap opened (the `daily_compare` reply as it is).
 */
export function compareChart(compare, words) {
  const you = compare.you.home_at;
  const them = compare.leader.home_at;
  const svg = frame(`${words.compareTitle}: ${words.compareAxis}`);
  svg.classList.add("compare-chart");
  svg.dataset.you = String(you.length);
  svg.dataset.leader = String(them.length);
  const cards = Math.max(1, you.length, them.length);
  const hi = Math.max(1, ...you, ...them);
  const x = scale(1, Math.max(2, cards), PAD.left, W - PAD.right);
  const y = scale(0, hi, H - PAD.bottom, PAD.top);
  svg.appendChild(el("line", { x1: PAD.left, x2: W - PAD.right, y1: y(0), y2: y(0), class: "chart-axis" }));
  svg.appendChild(el("text", { x: PAD.left - 6, y: y(hi) + 4, "text-anchor": "end", class: "chart-label" }, `${Math.round(hi)} s`));
  svg.appendChild(el("text", { x: PAD.left - 6, y: y(0) + 4, "text-anchor": "end", class: "chart-label" }, "0"));
  svg.appendChild(el("text", { x: W - PAD.right, y: H - 8, "text-anchor": "end", class: "chart-label" }, `card ${cards}`));
  const line = (times, cls, label) => {
    if (!times.length) return;
    const pts = times.map((t, i) => `${x(i + 1).toFixed(1)},${y(t).toFixed(1)}`).join(" ");
    svg.appendChild(el("polyline", { points: pts, class: cls }, el("title", {}, label)));
  };
  line(them, "compare-leader", words.leader(compare.leader.name));
  line(you, "compare-you", words.you);
  const gap = compare.gap;
  if (gap && gap.you !== null) {
    svg.appendChild(el("circle", { cx: x(gap.card).toFixed(1), cy: y(gap.you).toFixed(1), r: 5, class: "compare-gap", id: "compare-gap" },
      el("title", {}, words.gap(gap))));
  }
  return svg;
}
