/**
 * The input elements a modal may hold, checked as Slack's reference states their limits
 * (docs/slack.md#modals): plain-text inputs, static selects (one or many), radio buttons and
 * time pickers. Used by ./block-kit.ts for every `input` block.
 */

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A plain_text object of 1..max characters. */
function plainText(value: unknown, where: string, max: number): string[] {
  if (!isObject(value) || value.type !== 'plain_text') return [`${where}: must be plain_text`];
  if (typeof value.text !== 'string' || value.text.trim() === '') return [`${where}: empty text`];
  return value.text.length > max ? [`${where}: ${value.text.length} chars > ${max}`] : [];
}

/** Option objects: text up to 75 characters, value up to 150, values unique. */
function optionProblems(options: unknown, where: string, max: number): string[] {
  if (!Array.isArray(options) || options.length === 0 || options.length > max)
    return [`${where}: 1..${max} options`];
  const values = new Set<unknown>();
  return options.flatMap((o, i) => {
    const at = `${where}[${i}]`;
    if (!isObject(o)) return [`${at}: not an object`];
    const problems = plainText(o.text, `${at}.text`, 75);
    if (typeof o.value !== 'string' || o.value.length === 0 || o.value.length > 150)
      problems.push(`${at}: value of 1..150 chars`);
    if (values.has(o.value)) problems.push(`${at}: duplicate value`);
    values.add(o.value);
    return problems;
  });
}

/** Whether an initial option is one of the options, as Slack requires (it compares them whole). */
const among = (initial: unknown, options: unknown) =>
  Array.isArray(options) && options.some((o) => JSON.stringify(o) === JSON.stringify(initial));

/** What Slack would refuse in an input block's element. */
export function inputElementProblems(element: unknown, where: string): string[] {
  if (!isObject(element)) return [`${where}: not an object`];
  const problems: string[] = [];
  if (typeof element.action_id !== 'string' || element.action_id.length > 255)
    problems.push(`${where}: action_id`);
  if (element.placeholder !== undefined)
    problems.push(...plainText(element.placeholder, `${where}.placeholder`, 150));
  switch (element.type) {
    case 'plain_text_input': {
      const max = element.max_length;
      if (max !== undefined && (typeof max !== 'number' || max < 1 || max > 3000))
        problems.push(`${where}: max_length`);
      const initial = element.initial_value;
      if (
        initial !== undefined &&
        (typeof initial !== 'string' || initial.length > (typeof max === 'number' ? max : 3000))
      )
        problems.push(`${where}: initial_value`);
      return problems;
    }
    case 'static_select':
    case 'radio_buttons': {
      const max = element.type === 'radio_buttons' ? 10 : 100;
      problems.push(...optionProblems(element.options, `${where}.options`, max));
      if (element.initial_option !== undefined && !among(element.initial_option, element.options))
        problems.push(`${where}: initial_option is not one of the options`);
      return problems;
    }
    case 'multi_static_select': {
      problems.push(...optionProblems(element.options, `${where}.options`, 100));
      const initial = element.initial_options;
      if (
        initial !== undefined &&
        (!Array.isArray(initial) || !initial.every((o) => among(o, element.options)))
      )
        problems.push(`${where}: initial_options are not all options`);
      return problems;
    }
    case 'timepicker': {
      const initial = element.initial_time;
      if (
        initial !== undefined &&
        (typeof initial !== 'string' || !/^([01]\d|2[0-3]):[0-5]\d$/.test(initial))
      )
        problems.push(`${where}: initial_time is not HH:mm`);
      return problems;
    }
    default:
      return [...problems, `${where}: unsupported input element ${String(element.type)}`];
  }
}

/** A modal view's own limits: title, submit and close up to 24 characters, private_metadata 3,000, callback_id 255. */
export function modalFieldProblems(view: Record<string, unknown>): string[] {
  const problems: string[] = [];
  if (view.type !== 'modal') problems.push('view: not a modal');
  problems.push(...plainText(view.title, 'title', 24));
  for (const button of ['submit', 'close'] as const)
    if (view[button] !== undefined) problems.push(...plainText(view[button], button, 24));
  const hasInput = Array.isArray(view.blocks) && view.blocks.some((b) => isObject(b) && b.type === 'input');
  if (hasInput && view.submit === undefined) problems.push('submit: required with input blocks');
  const meta = view.private_metadata;
  if (meta !== undefined && (typeof meta !== 'string' || meta.length > 3000))
    problems.push('private_metadata');
  const id = view.callback_id;
  if (id !== undefined && (typeof id !== 'string' || id.length > 255)) problems.push('callback_id');
  return problems;
}
