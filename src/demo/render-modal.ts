import { escapeHtml, renderBlocks, renderPlain } from './render.js';
import { type DemoModal, isObject, type Json, type PageInput, str } from './workspace.js';

/**
 * A modal as Slack draws it, by the page itself: its title, its blocks (input blocks as form
 * fields a person fills in: text inputs, selects of one or many, radio buttons, a time picker;
 * any other block as in a message), each input's error from the bot under it, and Cancel and
 * the submit button. What the person typed is kept when the bot answers with errors.
 */

interface RenderNames {
  users: Readonly<Record<string, string>>;
  channels: Readonly<Record<string, string>>;
}

const plain = (value: unknown) =>
  isObject(value) ? renderPlain(str(value.text) ?? '', value.emoji !== false) : '';
type Option = { text?: unknown; value?: unknown };
const options = (element: Json): Option[] =>
  Array.isArray(element.options) ? (element.options as Option[]) : [];
const optionValue = (o: unknown) => (isObject(o) ? String(o.value ?? '') : undefined);
const attr = (name: string, value: string | number) => ` ${name}="${escapeHtml(String(value))}"`;

/** The chosen values of a select or radio group: what was typed, or what the bot set first. */
function chosen(element: Json, typed: PageInput | undefined): string[] {
  if (typed) {
    if (typed.type === 'multi_static_select') return typed.values ?? [];
    return typed.value == null ? [] : [typed.value];
  }
  if (Array.isArray(element.initial_options))
    return element.initial_options.flatMap((o) => optionValue(o) ?? []);
  const first = optionValue(element.initial_option);
  return first === undefined ? [] : [first];
}

function field(element: Json, blockId: string, typed: PageInput | undefined): string {
  const type = str(element.type) ?? '';
  const picked = chosen(element, typed);
  const optionTags = (placeholder: boolean) =>
    (placeholder && picked.length === 0
      ? `<option value="" selected disabled>${plain(element.placeholder) || 'Choose'}</option>`
      : '') +
    options(element)
      .map((o) => {
        const value = String(o.value ?? '');
        return `<option${attr('value', value)}${picked.includes(value) ? ' selected' : ''}>${plain(o.text)}</option>`;
      })
      .join('');
  switch (type) {
    case 'plain_text_input': {
      const value = typed?.value ?? str(element.initial_value) ?? '';
      const max = typeof element.max_length === 'number' ? attr('maxlength', element.max_length) : '';
      return element.multiline === true
        ? `<textarea class="bk-field-input" rows="4"${max}>${escapeHtml(value)}</textarea>`
        : `<input class="bk-field-input" type="text"${attr('value', value)}${max}>`;
    }
    case 'static_select':
      return `<select class="bk-field-input">${optionTags(true)}</select>`;
    case 'multi_static_select':
      return `<select class="bk-field-input" multiple${attr('size', Math.min(6, options(element).length))}${attr('title', str(isObject(element.placeholder) ? element.placeholder.text : '') ?? '')}>${optionTags(false)}</select>`;
    case 'radio_buttons':
      return `<div class="bk-radios">${options(element)
        .map((o) => {
          const value = String(o.value ?? '');
          return `<label class="bk-radio"><input type="radio"${attr('name', `radio-${blockId}`)}${attr('value', value)}${picked.includes(value) ? ' checked' : ''}> ${plain(o.text)}</label>`;
        })
        .join('')}</div>`;
    case 'timepicker':
      return `<input class="bk-field-input" type="time"${attr('value', typed?.value ?? str(element.initial_time) ?? '')}>`;
    default:
      return `<div class="bk-unknown">An input element of type <code>${escapeHtml(type || 'none')}</code> is not shown by this demo</div>`;
  }
}

function inputBlock(block: Json, modal: DemoModal): string {
  const element = isObject(block.element) ? block.element : {};
  const blockId = str(block.block_id) ?? '';
  const error = modal.errors[blockId];
  const optional = block.optional === true ? ' <span class="muted">(optional)</span>' : '';
  const hint = block.hint === undefined ? '' : `<div class="bk-hint">${plain(block.hint)}</div>`;
  return `<div class="bk-input${error ? ' bk-input-invalid' : ''}"${attr('data-block-id', blockId)}${attr('data-action-id', str(element.action_id) ?? '')}${attr('data-type', str(element.type) ?? '')}><label class="bk-label">${plain(block.label)}${optional}</label>${field(element, blockId, modal.typed[blockId])}${hint}${error ? `<div class="bk-input-error" role="alert">${escapeHtml(error)}</div>` : ''}</div>`;
}

/** The modal as HTML: a form the page's script submits (`/demo/submit`) or closes. */
export function renderModal(modal: DemoModal, names: RenderNames): string {
  const { view } = modal;
  const blocks = (Array.isArray(view.blocks) ? view.blocks : [])
    .map((b) => (isObject(b) && b.type === 'input' ? inputBlock(b, modal) : renderBlocks([b], names)))
    .join('');
  const submit =
    view.submit === undefined
      ? ''
      : `<button type="submit" class="bk-primary">${plain(view.submit)}</button>`;
  const close = `<button type="button" data-modal-close>${plain(view.close) || 'Close'}</button>`;
  return `<form id="modal-form" class="modal" aria-modal="true" role="dialog"><div class="modal-title">${plain(view.title)}</div><div class="modal-body">${blocks}</div><div class="modal-actions">${close}${submit}</div></form>`;
}
