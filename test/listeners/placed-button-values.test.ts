import { describe, expect, it } from 'vitest';
import { parseButtonValue } from '../../src/listeners/actions/button-value.js';
import { DEMO_INVOICE_IDS } from '../../src/sandbox/data.js';

/** The Watch and Share in thread buttons' values (`<id> [<thread ts> [<try>]]`) the bot did not write. */
const OPEN = DEMO_INVOICE_IDS.open;
const THREAD = '1700000000.000500';

describe('a Watch or Share in thread value the bot did not write', () => {
  it('is not read when its id is no invoice id', () => {
    expect(parseButtonValue('placed', `order-1042 ${THREAD}`)).toBeUndefined();
  });

  it('is not read with a part after the try', () => {
    expect(parseButtonValue('placed', `${OPEN} ${THREAD} 1 more`)).toBeUndefined();
  });

  it('is not read when its thread is no message ts', () => {
    expect(parseButtonValue('placed', `${OPEN} yesterday 1`)).toBeUndefined();
  });

  it('is read with a thread and a try, as the bot writes them', () => {
    expect(parseButtonValue('placed', `${OPEN} ${THREAD} 2`)).toEqual({
      id: OPEN,
      threadTs: THREAD,
      attempt: 2,
    });
  });
});
