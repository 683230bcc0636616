/**
 * Edits between two words: insertions, deletions, substitutions, and two neighbours swapped
 * (`wtach`), each counting one (optimal string alignment).
 */
function distance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  const at = (i: number, j: number) => rows[i]?.[j] ?? Number.POSITIVE_INFINITY;
  for (let i = 1; i <= a.length; i += 1) {
    for (let j = 1; j <= b.length; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, at(i - 2, j - 2) + 1);
      const row = rows[i];
      if (row) row[j] = best;
    }
  }
  return at(a.length, b.length);
}

/**
 * The word of `known` that `typed` most likely meant: one edit away for a short word, two for a
 * longer one (`wach` is `watch`, `subscibe` is `subscribe`); `undefined` when none is that close,
 * so a word that is merely different (`foo`) is not taken for a typo.
 */
export function nearestWord<W extends string>(typed: string, known: readonly W[]): W | undefined {
  const word = typed.toLowerCase();
  // Anything much longer than a command word is not one mistyped (an id, a link, a sentence).
  if (word.length > 20) return undefined;
  let nearest: { word: W; edits: number } | undefined;
  for (const candidate of known) {
    const edits = distance(word, candidate);
    if (edits <= (candidate.length <= 4 ? 1 : 2) && (!nearest || edits < nearest.edits))
      nearest = { word: candidate, edits };
  }
  return nearest?.word;
}
