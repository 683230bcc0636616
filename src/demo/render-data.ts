/**
 * The demo page's drawing of Block Kit's data blocks (render.ts dispatches here): a
 * `data_visualization` chart as inline SVG drawn by the page itself (line, area, bar, pie),
 * a `table` and a `data_table` as HTML tables with their alignment, header and caption. Every
 * string is HTML-escaped; nothing is loaded from outside.
 */
import { escapeHtml } from './html.js';

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
const text = (value: unknown) => escapeHtml(typeof value === 'string' ? value : String(value ?? ''));

const WIDTH = 520;
const HEIGHT = 220;
// Room on the right for half of the last day's label, centred under its point.
const PAD = { left: 70, right: 24, top: 12, bottom: 40 };
const COLOURS = ['#1264a3', '#e01e5a', '#2eb67d', '#ecb22e', '#36c5f0', '#8b5cf6'];

interface Series {
  name: string;
  values: number[];
}

/**
 * The y axis's bounds: from 0 (or the lowest value below it) to the highest value, whatever its
 * size (a balance of 0.0123 BTC fills the plot); 1 above a line flat at the bottom, so it is not
 * on the frame.
 */
function bounds(series: readonly Series[]): { low: number; high: number } {
  const all = series.flatMap((s) => s.values).filter(Number.isFinite);
  const low = Math.min(0, ...all);
  const high = Math.max(low, ...all);
  return { low, high: high > low ? high : low + 1 };
}

/** Axes, labels and one line, area or set of bars per series. */
function xyChart(
  kind: string,
  categories: readonly string[],
  series: readonly Series[],
  yLabel: string,
): string {
  const { low, high } = bounds(series);
  const plotW = WIDTH - PAD.left - PAD.right;
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const step = plotW / Math.max(1, categories.length - (kind === 'bar' ? 0 : 1));
  const x = (i: number) => PAD.left + (kind === 'bar' ? step * (i + 0.5) : step * i);
  const y = (v: number) => PAD.top + plotH - ((v - low) / (high - low)) * plotH;
  const marks = series.map((s, n) => {
    const colour = COLOURS[n % COLOURS.length];
    const points = s.values.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`);
    if (kind === 'bar') {
      const w = (step * 0.8) / series.length;
      return s.values
        .map(
          (v, i) =>
            `<rect x="${(x(i) - step * 0.4 + n * w).toFixed(1)}" y="${Math.min(y(v), y(0)).toFixed(1)}" width="${w.toFixed(1)}" height="${Math.abs(y(0) - y(v)).toFixed(1)}" fill="${colour}"><title>${escapeHtml(s.name)} ${categories[i] ?? ''}: ${v}</title></rect>`,
        )
        .join('');
    }
    const area =
      kind === 'area'
        ? `<polygon points="${x(0).toFixed(1)},${y(low).toFixed(1)} ${points.join(' ')} ${x(s.values.length - 1).toFixed(1)},${y(low).toFixed(1)}" fill="${colour}" fill-opacity="0.25"/>`
        : '';
    const dots = s.values
      .map(
        (v, i) =>
          `<circle cx="${x(i).toFixed(1)}" cy="${y(v).toFixed(1)}" r="3" fill="${colour}"><title>${escapeHtml(s.name)} ${categories[i] ?? ''}: ${v}</title></circle>`,
      )
      .join('');
    return `${area}<polyline points="${points.join(' ')}" fill="none" stroke="${colour}" stroke-width="2"/>${dots}`;
  });
  const labels = categories
    .map(
      (c, i) =>
        `<text x="${x(i).toFixed(1)}" y="${HEIGHT - PAD.bottom + 16}" text-anchor="middle" font-size="11">${c}</text>`,
    )
    .join('');
  const axis = `<line x1="${PAD.left}" y1="${PAD.top + plotH}" x2="${WIDTH - PAD.right}" y2="${PAD.top + plotH}" stroke="#bbb"/><line x1="${PAD.left}" y1="${PAD.top}" x2="${PAD.left}" y2="${PAD.top + plotH}" stroke="#bbb"/>`;
  const ticks = `<text x="${PAD.left - 6}" y="${PAD.top + 10}" text-anchor="end" font-size="11">${high}</text><text x="${PAD.left - 6}" y="${PAD.top + plotH}" text-anchor="end" font-size="11">${low}</text>`;
  const unit =
    yLabel === ''
      ? ''
      : `<text x="12" y="${PAD.top + plotH / 2}" font-size="11" transform="rotate(-90 12 ${PAD.top + plotH / 2})" text-anchor="middle">${yLabel}</text>`;
  return `${axis}${ticks}${unit}${labels}${marks.join('')}`;
}

/** A pie's slices, each its share of the sum, with a legend. */
function pieChart(segments: readonly { label: string; value: number }[]): string {
  const total = segments.reduce((sum, s) => sum + Math.max(0, s.value), 0) || 1;
  const [cx, cy, r] = [110, HEIGHT / 2, 90];
  let angle = -Math.PI / 2;
  return segments
    .map((s, i) => {
      const share = Math.max(0, s.value) / total;
      const end = angle + share * 2 * Math.PI;
      const large = share > 0.5 ? 1 : 0;
      const path = `M${cx},${cy} L${(cx + r * Math.cos(angle)).toFixed(1)},${(cy + r * Math.sin(angle)).toFixed(1)} A${r},${r} 0 ${large} 1 ${(cx + r * Math.cos(end)).toFixed(1)},${(cy + r * Math.sin(end)).toFixed(1)} Z`;
      angle = end;
      const colour = COLOURS[i % COLOURS.length];
      return `<path d="${path}" fill="${colour}"/><rect x="240" y="${20 + i * 20}" width="12" height="12" fill="${colour}"/><text x="258" y="${30 + i * 20}" font-size="12">${s.label} · ${s.value}</text>`;
    })
    .join('');
}

function chart(value: Json): string {
  const body = isObject(value.chart) ? value.chart : {};
  const axis = isObject(body.axis_config) ? body.axis_config : {};
  const drawing =
    body.type === 'pie'
      ? pieChart(
          list(body.segments).map((s) => ({
            label: text(isObject(s) && s.label),
            value: Number(isObject(s) && s.value),
          })),
        )
      : xyChart(
          text(body.type),
          list(axis.categories).map(text),
          list(body.series).map((s) => ({
            name: text(isObject(s) && s.name),
            values: list(isObject(s) && s.data).map((p) => Number(isObject(p) && p.value)),
          })),
          axis.y_label === undefined ? '' : text(axis.y_label),
        );
  const legend = list(body.series)
    .map(
      (s, n) =>
        `<span class="bk-chart-key" style="color:${COLOURS[n % COLOURS.length]}">● ${text(isObject(s) && s.name)}</span>`,
    )
    .join(' ');
  return `<figure class="bk-chart"><figcaption><strong>${text(value.title)}</strong> ${legend}</figcaption><svg role="img" aria-label="${text(value.title)}" viewBox="0 0 ${WIDTH} ${HEIGHT}" width="${WIDTH}" height="${HEIGHT}" xmlns="http://www.w3.org/2000/svg">${drawing}</svg></figure>`;
}

/** A cell's text: `raw_text`, `raw_number`, or the words of a `rich_text`. */
function cellText(cell: unknown): string {
  if (!isObject(cell)) return '';
  if (cell.type === 'raw_text') return text(cell.text);
  if (cell.type === 'raw_number') return text(cell.value);
  const words: string[] = [];
  const visit = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(visit);
    else if (isObject(v)) {
      if (typeof v.text === 'string') words.push(v.text);
      else Object.values(v).forEach(visit);
    }
  };
  visit(cell.elements);
  return text(words.join(''));
}

/** A `table` or a `data_table`: the first row as the header, each column aligned as set. */
function table(value: Json, caption: string): string {
  const aligns = list(value.column_settings).map((s) =>
    isObject(s) && typeof s.align === 'string' ? s.align : 'left',
  );
  const rows = list(value.rows).map((row) => list(row).map(cellText));
  const cell = (tag: string, content: string, i: number) =>
    `<${tag} style="text-align:${aligns[i] ?? 'left'};padding:2px 10px;border-bottom:1px solid #ddd">${content}</${tag}>`;
  const [head = [], ...body] = rows;
  return `<table class="bk-table" style="border-collapse:collapse;font-variant-numeric:tabular-nums">${caption}<thead><tr>${head.map((c, i) => cell('th', c, i)).join('')}</tr></thead><tbody>${body.map((r) => `<tr>${r.map((c, i) => cell('td', c, i)).join('')}</tr>`).join('')}</tbody></table>`;
}

/** The HTML of a data block, or `undefined` when `value` is another kind of block. */
export function dataBlock(value: Json): string | undefined {
  switch (value.type) {
    case 'data_visualization':
      return chart(value);
    case 'table':
      return table(value, '');
    case 'data_table':
      return table(value, `<caption>${text(value.caption)}</caption>`);
    default:
      return undefined;
  }
}

/** A message's blocks with the blocks of its attachments after them (where a `table` goes), for the page to draw. */
export function withAttachmentBlocks(body: { blocks?: unknown; attachments?: unknown }): unknown[] {
  const attached = list(body.attachments).flatMap((a) => (isObject(a) ? list(a.blocks) : []));
  return [...list(body.blocks), ...attached];
}

/**
 * A `static_select` (the App Home's coin menu) as the page shows it: its options, the initial one
 * chosen. The demo draws it only; a choice in it is not sent back to the bot.
 */
export function selectElement(value: Json): string {
  const initial = isObject(value.initial_option) ? value.initial_option.value : undefined;
  const options = list(value.options).map((o) => {
    const label = isObject(o) && isObject(o.text) ? text(o.text.text) : '';
    const chosen = isObject(o) && o.value === initial ? ' selected' : '';
    return `<option value="${isObject(o) ? text(o.value) : ''}"${chosen}>${label}</option>`;
  });
  return `<select class="bk-select" disabled title="Choosing here is not sent to the bot in the demo">${options.join('')}</select>`;
}
