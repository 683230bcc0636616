import type { EntityMetadata } from '@slack/types';
import { describe, expect, it } from 'vitest';
import { entityProblems } from './entity-kit.js';

const valid: EntityMetadata = {
  entity_type: 'slack#/entities/item',
  external_ref: { id: 'workspace:x' },
  url: 'https://pay.example.com/pay/x',
  entity_payload: {
    attributes: { title: { text: 'Order' } },
    custom_fields: [{ key: 'status', label: 'Status', type: 'string', value: 'Open' }],
    display_order: ['status'],
  },
};
const button = (n: number) => ({ text: `B${n}`, action_id: `b${n}` });

describe('the Work Object checker', () => {
  it('passes a valid entity, and finds what Slack would drop or not show', () => {
    expect(entityProblems(valid)).toEqual([]);
    expect(entityProblems(valid, { unfurl: true })).toEqual(['chat.unfurl needs app_unfurl_url']);
    const bad: EntityMetadata = {
      ...valid,
      url: 'javascript:alert(1)',
      entity_payload: {
        attributes: { title: { text: ' ' } },
        custom_fields: [
          { key: 'a', label: 'A', type: 'string', value: '' },
          { key: 'a', label: '', type: 'slack#/types/timestamp', value: 1.5 },
        ],
        display_order: ['b'],
        actions: { primary_actions: [1, 2, 3].map(button), overflow_actions: [1, 2, 3, 4, 5, 6].map(button) },
      },
    };
    expect(entityProblems(bad)).toEqual([
      'url javascript:alert(1) is not http(s)',
      'attributes.title.text is empty',
      'custom_fields keys repeat: a,a',
      'custom field a is an empty string',
      'custom field a has no label',
      'custom field a is not whole seconds',
      'display_order names b, no field',
      '3 primary actions',
      '6 overflow actions',
      'action ids repeat: b1,b2,b3,b1,b2,b3,b4,b5,b6',
    ]);
  });
});
