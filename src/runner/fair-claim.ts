/** A claim reads and leases again at most this often when other instances took what it chose. */
const CLAIM_ROUNDS = 4;

/** A due row a claim may take, with the installation it belongs to. */
interface Candidate {
  installation_id: string;
}

/** One claim shared fairly between installations: what `claimFairly` reads, chooses and leases. */
export interface FairClaim<C extends Candidate, R extends Candidate> {
  /** The most rows the claim takes. */
  limit: number;
  /** This instance's items still running, by installation. */
  busy: ReadonlyMap<string, number>;
  /**
   * Due rows free to claim, each installation's numbered by its turns and every installation's
   * first turn before anyone's second: enough for `room` more, with rows to spare for the walk,
   * which skips installations already at their room.
   */
  candidates(room: number): Promise<C[]>;
  /**
   * How many of the candidate's installation's items this instance may run at once, when
   * `several` installations have work due (busy ones counted).
   */
  room(candidate: C, several: boolean): number;
  /** Leases the chosen rows still free (a `leasing` statement): another instance may have been quicker. */
  lease(chosen: C[]): Promise<R[]>;
  /** A row's key, the same for a candidate and the row leased from it. */
  tag(row: C | R): string;
}

/**
 * Takes up to `limit` rows across installations, fairly: rounds of reading candidates, walking
 * them turn by turn (each installation within its room) and leasing what was chosen; another
 * round only for what other instances took meanwhile. Two statements a round. Resolves with the
 * rows leased, in the order the walks chose them.
 */
export async function claimFairly<C extends Candidate, R extends Candidate>(
  claim: FairClaim<C, R>,
): Promise<R[]> {
  const { limit, busy, tag } = claim;
  const claimed: R[] = [];
  /** Each chosen row's place in the order the walks chose them. */
  const place = new Map<string, number>();
  let several = false;
  // A round that leased all it chose ends the claim; one that leased less can have taken no more than the limit.
  for (let round = 0; round < CLAIM_ROUNDS; round += 1) {
    const rows = await claim.candidates(limit - claimed.length);
    const first = rows[0]?.installation_id;
    several ||= rows.some((c) => c.installation_id !== first);
    /** What this claim took of each installation so far: leased by earlier rounds, chosen by this one. */
    const taken = new Map<string, number>();
    for (const r of claimed) taken.set(r.installation_id, (taken.get(r.installation_id) ?? 0) + 1);
    const chosen: C[] = [];
    for (const c of rows) {
      if (claimed.length + chosen.length === limit) break;
      const mine = taken.get(c.installation_id) ?? 0;
      if (mine >= claim.room(c, several) - (busy.get(c.installation_id) ?? 0)) continue;
      taken.set(c.installation_id, mine + 1);
      place.set(tag(c), place.size);
      chosen.push(c);
    }
    if (chosen.length === 0) break;
    const leased = await claim.lease(chosen);
    claimed.push(...leased);
    if (leased.length === chosen.length) break;
  }
  // RETURNING has no order of its own.
  return claimed.sort((a, b) => (place.get(tag(a)) ?? 0) - (place.get(tag(b)) ?? 0));
}
