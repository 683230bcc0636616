/**
 * The Block Kit checker's part for charts and tables (block-kit.ts dispatches here), encoding
 * Slack's reference on its own (docs/slack.md#charts-and-tables), not the bot's constants:
 * `data_visualization` (title ≤ 50; 1–6 series with unique names ≤ 20; 1–20 points a series, one
 * per category, labels ≤ 20; axis labels ≤ 50; at most two charts a message), `table` (only in
 * attachments, one a message, ≤ 100 rows of ≤ 20 cells, ≤ 10,000 characters, no empty cell) and
 * `data_table` (a caption; a header and 1–100 rows; ≤ 20 columns; page size 1–100).
 */

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const isText = (v: unknown, max: number) => typeof v === 'string' && v.trim() !== '' && v.length <= max;

export const MAX_CHARTS = 2;

function seriesProblems(chart: Json, where: string): string[] {
  const problems: string[] = [];
  const axis = chart.axis_config;
  if (!isObject(axis) || !Array.isArray(axis.categories)) return [`${where}: axis_config.categories`];
  const categories = axis.categories as unknown[];
  if (!categories.every((c) => isText(c, 20))) problems.push(`${where}: a category over 20 chars`);
  for (const label of ['x_label', 'y_label'])
    if (axis[label] !== undefined && !isText(axis[label], 50)) problems.push(`${where}: ${label}`);
  const series = chart.series;
  if (!Array.isArray(series) || series.length < 1 || series.length > 6)
    return [...problems, `${where}: 1..6 series`];
  const names = new Set<string>();
  for (const [i, s] of series.entries()) {
    const at = `${where}.series[${i}]`;
    if (!isObject(s) || !isText(s.name, 20)) {
      problems.push(`${at}: name`);
      continue;
    }
    if (names.has(s.name as string)) problems.push(`${at}: duplicate name`);
    names.add(s.name as string);
    const data = s.data;
    if (!Array.isArray(data) || data.length < 1 || data.length > 20) {
      problems.push(`${at}: 1..20 points`);
      continue;
    }
    if (data.length !== categories.length) problems.push(`${at}: one point per category`);
    for (const [j, p] of data.entries()) {
      if (!isObject(p) || !isText(p.label, 20) || !categories.includes(p.label))
        problems.push(`${at}.data[${j}]: label`);
      if (!isObject(p) || typeof p.value !== 'number' || !Number.isFinite(p.value))
        problems.push(`${at}.data[${j}]: value`);
    }
  }
  return problems;
}

/** Every string in `value`, however deep. */
const strings = (value: unknown): string[] =>
  typeof value === 'string'
    ? [value]
    : Array.isArray(value)
      ? value.flatMap(strings)
      : isObject(value)
        ? Object.values(value).flatMap(strings)
        : [];

export function chartProblems(value: Json, where: string): string[] {
  const problems: string[] = [];
  if (!isText(value.title, 50)) problems.push(`${where}: title 1..50 chars`);
  // A chart's title and labels are plain text on one line.
  if (strings(value).some((s) => /\p{Cc}/u.test(s))) problems.push(`${where}: a control character`);
  const chart = value.chart;
  if (!isObject(chart)) return [...problems, `${where}: no chart`];
  switch (chart.type) {
    case 'line':
    case 'bar':
    case 'area':
      return [...problems, ...seriesProblems(chart, `${where}.chart`)];
    case 'pie': {
      const segments = chart.segments;
      if (!Array.isArray(segments) || segments.length < 1 || segments.length > 6)
        return [...problems, `${where}: 1..6 segments`];
      for (const s of segments)
        if (!isObject(s) || !isText(s.label, 20) || typeof s.value !== 'number' || !(s.value > 0))
          problems.push(`${where}: segment`);
      return problems;
    }
    default:
      return [...problems, `${where}: chart type ${String(chart.type)}`];
  }
}

const cellText = (cell: unknown): string | undefined =>
  isObject(cell) && (cell.type === 'raw_text' || cell.type === 'raw_number')
    ? String(cell.type === 'raw_number' ? cell.value : cell.text)
    : undefined;

function rowsProblems(rows: unknown, where: string, minRows: number, maxRows: number): string[] {
  if (!Array.isArray(rows) || rows.length < minRows || rows.length > maxRows)
    return [`${where}: ${minRows}..${maxRows} rows`];
  const problems: string[] = [];
  const width = Array.isArray(rows[0]) ? rows[0].length : 0;
  let chars = 0;
  for (const [i, row] of rows.entries()) {
    if (!Array.isArray(row) || row.length < 1 || row.length > 20 || row.length !== width) {
      problems.push(`${where}.rows[${i}]: 1..20 cells, as many as the first row`);
      continue;
    }
    for (const cell of row) {
      const text = cellText(cell);
      if (text === undefined || text.trim() === '')
        problems.push(`${where}.rows[${i}]: an empty or unknown cell`);
      else chars += text.length;
    }
  }
  if (chars > 10_000) problems.push(`${where}: ${chars} characters in cells > 10000`);
  return problems;
}

function tableProblems(value: Json, where: string): string[] {
  const problems = rowsProblems(value.rows, where, 1, 100);
  const settings = value.column_settings;
  if (settings !== undefined) {
    if (!Array.isArray(settings) || settings.length > 20) problems.push(`${where}: column_settings`);
    else if (
      !settings.every(
        (s) => isObject(s) && ['left', 'center', 'right', undefined].includes(s.align as string),
      )
    )
      problems.push(`${where}: align`);
  }
  return problems;
}

export function dataTableProblems(value: Json, where: string): string[] {
  const problems = rowsProblems(value.rows, where, 2, 101);
  if (typeof value.caption !== 'string' || value.caption.trim() === '') problems.push(`${where}: caption`);
  const size = value.page_size;
  if (size !== undefined && (typeof size !== 'number' || size < 1 || size > 100))
    problems.push(`${where}: page_size`);
  return problems;
}

/** Problems of a message's attachments: only a `table` block there, one a message. */
export function attachmentProblems(attachments: unknown): string[] {
  if (attachments === undefined) return [];
  if (!Array.isArray(attachments)) return ['attachments: not a list'];
  const blocks = attachments.flatMap((a) => (isObject(a) && Array.isArray(a.blocks) ? a.blocks : [a]));
  const problems = blocks.flatMap((b, i) =>
    isObject(b) && b.type === 'table'
      ? tableProblems(b, `attachments.blocks[${i}]`)
      : [`attachments[${i}]: not a table`],
  );
  if (blocks.length > 1) problems.push('attachments: more than one table');
  return problems;
}

/** The cells of a message's table (in its attachments), row by row, as a reader sees them. */
export function tableRows(message: unknown): string[][] {
  const attachments = isObject(message) && Array.isArray(message.attachments) ? message.attachments : [];
  return attachments
    .flatMap((a) => (isObject(a) && Array.isArray(a.blocks) ? a.blocks : []))
    .flatMap((b) => (isObject(b) && b.type === 'table' && Array.isArray(b.rows) ? b.rows : []))
    .map((row) => (Array.isArray(row) ? row.map((cell) => cellText(cell) ?? '') : []));
}

/** A `static_select` (the App Home's coin): 1–100 options, text ≤ 75, values ≤ 150 and unique, the initial one among them. */
export function selectProblems(value: Json, where: string, actionIds: Set<string>): string[] {
  const problems: string[] = [];
  const actionId = value.action_id;
  if (typeof actionId !== 'string' || actionId === '' || actionId.length > 255)
    problems.push(`${where}: action_id`);
  else if (actionIds.has(actionId)) problems.push(`${where}: duplicate action_id ${actionId}`);
  else actionIds.add(actionId);
  const placeholder = value.placeholder;
  if (
    placeholder !== undefined &&
    !(isObject(placeholder) && placeholder.type === 'plain_text' && isText(placeholder.text, 150))
  )
    problems.push(`${where}: placeholder`);
  const options = value.options;
  if (!Array.isArray(options) || options.length < 1 || options.length > 100)
    return [...problems, `${where}: 1..100 options`];
  const values = new Set<string>();
  for (const [i, o] of options.entries()) {
    const ok =
      isObject(o) &&
      isObject(o.text) &&
      o.text.type === 'plain_text' &&
      isText(o.text.text, 75) &&
      isText(o.value, 150);
    if (!ok) problems.push(`${where}.options[${i}]`);
    else if (values.has(o.value as string)) problems.push(`${where}.options[${i}]: duplicate value`);
    else values.add(o.value as string);
  }
  const initial = value.initial_option;
  if (initial !== undefined && !options.some((o) => JSON.stringify(o) === JSON.stringify(initial)))
    problems.push(`${where}: initial_option not among the options`);
  return problems;
}
