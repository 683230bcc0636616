/** Grapheme clusters: what a reader sees as one character (an emoji with its modifiers, a flag). */
const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/** Where the grapheme cluster holding the code unit at `index` ends. */
export function graphemeEnd(text: string, index: number): number {
  const segment = graphemes.segment(text).containing(index);
  return segment ? segment.index + segment.segment.length : text.length;
}

/**
 * `text` cut to at most `max` UTF-16 code units, on a grapheme boundary: never half an emoji, a
 * lone surrogate or a letter without its accent. Lengths are UTF-16 units, as Slack's limits
 * are counted (docs/slack.md#block-kit).
 */
export function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  const segment = graphemes.segment(text).containing(max);
  return text.slice(0, segment ? segment.index : max);
}
