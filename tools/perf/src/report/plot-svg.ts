/**
 * A small hand-written SVG line chart (no dependencies): several series of (x, y) points with
 * labels, linear x, linear or log y, axes with round ticks, a legend.
 */

export interface PlotPoint {
  readonly x: number;
  readonly y: number;
  /** Drawn next to the point (e.g. the concurrency). */
  readonly label?: string;
  /** Drawn as a hollow marker (e.g. a load level that never measured stably); the legend says so. */
  readonly hollow?: boolean;
}

export interface PlotSeries {
  readonly name: string;
  readonly points: readonly PlotPoint[];
  /** Dashed line (e.g. p99 beside a solid p50). */
  readonly dashed?: boolean;
  /** Markers without a line joining them (a scatter, e.g. every candidate `tritium tune` measured). */
  readonly markersOnly?: boolean;
}

export interface PlotSpec {
  readonly title: string;
  readonly xLabel: string;
  readonly yLabel: string;
  readonly series: readonly PlotSeries[];
  readonly logY?: boolean;
  /** Legend text for hollow markers (default "unstable"). */
  readonly hollowLabel?: string;
  readonly width?: number;
  readonly height?: number;
}

const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf'];

function escapeXml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** Round tick values covering [min, max] (1-2-5 steps). */
export function niceTicks(min: number, max: number, target = 6): number[] {
  if (!(max > min)) return [min];
  const raw = (max - min) / target;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw)!;
  const ticks: number[] = [];
  for (let v = Math.ceil(min / step) * step; v <= max + step * 1e-9 && ticks.length < 50; v += step) ticks.push(Number(v.toPrecision(12)));
  return ticks;
}

function fmt(v: number): string {
  if (v >= 1000) return `${Number((v / 1000).toPrecision(3))}k`;
  return String(Number(v.toPrecision(3)));
}

export function plotSvg(spec: PlotSpec): string {
  const width = spec.width ?? 760;
  const height = spec.height ?? 460;
  const m = { left: 70, right: 170, top: 40, bottom: 55 };
  const pw = width - m.left - m.right;
  const ph = height - m.top - m.bottom;
  const all = spec.series.flatMap((s) => s.points).filter((p) => Number.isFinite(p.x) && Number.isFinite(p.y));
  const xMax = Math.max(1, ...all.map((p) => p.x)) * 1.05;
  const yPos = all.map((p) => p.y).filter((y) => y > 0);
  const log = spec.logY === true && yPos.length > 0;
  const yMinRaw = log ? Math.min(...yPos) : 0;
  const yMaxRaw = Math.max(1e-9, ...all.map((p) => p.y));
  const lo = log ? Math.floor(Math.log10(yMinRaw)) : 0;
  const hi = log ? Math.ceil(Math.log10(yMaxRaw)) + (Math.log10(yMaxRaw) % 1 === 0 ? 0 : 0) : yMaxRaw * 1.1;
  const sx = (x: number) => m.left + (x / xMax) * pw;
  const sy = (y: number) =>
    log ? m.top + ph - ((Math.log10(Math.max(y, 10 ** lo)) - lo) / Math.max(1, hi - lo)) * ph : m.top + ph - (y / hi) * ph;

  const parts: string[] = [];
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`);
  parts.push(`<rect width="${width}" height="${height}" fill="white"/>`);
  parts.push(`<text x="${m.left + pw / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold">${escapeXml(spec.title)}</text>`);
  // Grid and ticks.
  for (const t of niceTicks(0, xMax)) {
    const x = sx(t);
    parts.push(`<line x1="${x.toFixed(1)}" y1="${m.top}" x2="${x.toFixed(1)}" y2="${m.top + ph}" stroke="#eee"/>`);
    parts.push(`<text x="${x.toFixed(1)}" y="${m.top + ph + 18}" text-anchor="middle">${fmt(t)}</text>`);
  }
  const yTicks = log ? Array.from({ length: hi - lo + 1 }, (_, i) => 10 ** (lo + i)) : niceTicks(0, hi);
  for (const t of yTicks) {
    const y = sy(t);
    parts.push(`<line x1="${m.left}" y1="${y.toFixed(1)}" x2="${m.left + pw}" y2="${y.toFixed(1)}" stroke="#eee"/>`);
    parts.push(`<text x="${m.left - 8}" y="${(y + 4).toFixed(1)}" text-anchor="end">${fmt(t)}</text>`);
  }
  parts.push(`<rect x="${m.left}" y="${m.top}" width="${pw}" height="${ph}" fill="none" stroke="#333"/>`);
  parts.push(`<text x="${m.left + pw / 2}" y="${height - 14}" text-anchor="middle">${escapeXml(spec.xLabel)}</text>`);
  parts.push(`<text x="18" y="${m.top + ph / 2}" text-anchor="middle" transform="rotate(-90 18 ${m.top + ph / 2})">${escapeXml(spec.yLabel)}</text>`);
  // Series.
  spec.series.forEach((s, i) => {
    const color = COLORS[i % COLORS.length];
    const pts = s.points.filter((p) => Number.isFinite(p.x) && Number.isFinite(p.y));
    const path = pts.map((p) => `${sx(p.x).toFixed(1)},${sy(p.y).toFixed(1)}`).join(' ');
    if (!s.markersOnly) parts.push(`<polyline points="${path}" fill="none" stroke="${color}" stroke-width="2"${s.dashed ? ' stroke-dasharray="6 4"' : ''}/>`);
    for (const p of pts) {
      const fill = p.hollow ? `fill="white" stroke="${color}" stroke-width="1.5"` : `fill="${color}"`;
      parts.push(`<circle cx="${sx(p.x).toFixed(1)}" cy="${sy(p.y).toFixed(1)}" r="${p.hollow ? 4.5 : 3.5}" ${fill}/>`);
      if (p.label) parts.push(`<text x="${(sx(p.x) + 6).toFixed(1)}" y="${(sy(p.y) - 6).toFixed(1)}" font-size="10" fill="${color}">${escapeXml(p.label)}</text>`);
    }
    const ly = m.top + 10 + i * 20;
    parts.push(`<line x1="${m.left + pw + 14}" y1="${ly}" x2="${m.left + pw + 38}" y2="${ly}" stroke="${color}" stroke-width="2"${s.dashed ? ' stroke-dasharray="6 4"' : ''}/>`);
    parts.push(`<text x="${m.left + pw + 44}" y="${ly + 4}">${escapeXml(s.name)}</text>`);
  });
  if (all.some((p) => p.hollow)) {
    const ly = m.top + 10 + spec.series.length * 20;
    parts.push(`<circle cx="${m.left + pw + 26}" cy="${ly}" r="4.5" fill="white" stroke="#333" stroke-width="1.5"/>`);
    parts.push(`<text x="${m.left + pw + 44}" y="${ly + 4}">${escapeXml(spec.hollowLabel ?? 'unstable')}</text>`);
  }
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
