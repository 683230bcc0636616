import { describe, expect, it } from 'vitest';
import { pageInputs, viewState } from '../../src/demo/modal.js';
import { renderModal } from '../../src/demo/render-modal.js';
import { DEMO_NAMES } from '../../src/demo/workspace.js';

/** The demo's modal drawn by the page itself, and what Save sends the bot, as Slack does. */

const option = (text: string, value: string) => ({ text: { type: 'plain_text', text }, value });
const VIEW = {
  type: 'modal',
  title: { type: 'plain_text', text: 'Feed settings' },
  submit: { type: 'plain_text', text: 'Save' },
  close: { type: 'plain_text', text: 'Cancel' },
  private_metadata: 'sub-1',
  blocks: [
    {
      type: 'input',
      block_id: 'coins',
      optional: true,
      label: { type: 'plain_text', text: 'Coins <b>posted</b>' },
      element: {
        type: 'multi_static_select',
        action_id: 'value',
        options: [option('<script>x</script>', 'BTC'), option('Tether', 'USDT')],
        initial_options: [option('Tether', 'USDT')],
      },
    },
    {
      type: 'input',
      block_id: 'style',
      label: { type: 'plain_text', text: 'Posts' },
      element: {
        type: 'radio_buttons',
        action_id: 'value',
        options: [option('Full', 'full'), option('Condensed', 'condensed')],
        initial_option: option('Full', 'full'),
      },
    },
    {
      type: 'input',
      block_id: 'at',
      label: { type: 'plain_text', text: 'Time' },
      element: { type: 'timepicker', action_id: 'value', initial_time: '09:00' },
    },
    {
      type: 'input',
      block_id: 'when',
      label: { type: 'plain_text', text: 'When' },
      element: { type: 'datepicker', action_id: 'value' },
    },
  ],
};

describe('the demo’s modal', () => {
  it('draws each input, escaping every text, and marks the initial choices', () => {
    const html = renderModal({ view: VIEW, errors: {}, typed: {} }, DEMO_NAMES);
    expect(html).toContain('Coins &lt;b&gt;posted&lt;/b&gt; <span class="muted">(optional)</span>');
    expect(html).toContain(
      '<option value="BTC">&lt;script&gt;x&lt;/script&gt;</option><option value="USDT" selected>Tether</option>',
    );
    expect(html).toContain('<input type="radio" name="radio-style" value="full" checked> Full');
    expect(html).toContain('type="time" value="09:00"');
    expect(html).toContain('An input element of type <code>datepicker</code> is not shown by this demo');
    expect(html).not.toContain('<script>');
  });

  it('keeps what was typed when the bot answers with errors, the error under its input', () => {
    const typed = pageInputs({
      style: { type: 'radio_buttons', value: 'condensed' },
      coins: { type: 'multi_static_select', values: ['BTC'] },
    });
    const html = renderModal(
      { view: VIEW, errors: { style: 'Choose <one>' }, typed: typed ?? {} },
      DEMO_NAMES,
    );
    expect(html).toContain('value="condensed" checked');
    expect(html).toContain('<option value="BTC" selected>');
    expect(html).toContain('<div class="bk-input-error" role="alert">Choose &lt;one&gt;</div>');
  });

  it('sends the inputs as Slack’s view.state.values: options whole, by block and action id', () => {
    const typed = pageInputs({
      coins: { type: 'multi_static_select', values: ['USDT', 'nope'] },
      style: { type: 'radio_buttons', value: 'condensed' },
      at: { type: 'timepicker', value: '10:30' },
    });
    expect(viewState(VIEW, typed ?? {})).toEqual({
      coins: { value: { type: 'multi_static_select', selected_options: [option('Tether', 'USDT')] } },
      style: { value: { type: 'radio_buttons', selected_option: option('Condensed', 'condensed') } },
      at: { value: { type: 'timepicker', selected_time: '10:30' } },
      when: { value: { type: 'datepicker', value: null } },
    });
    expect(pageInputs('not an object')).toBeUndefined();
  });
});
