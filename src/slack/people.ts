import { webApi } from '@slack/bolt';
import type { Directory, Membership } from '../access.js';

/** The part of the Web API client the directory uses: `users.info` (scope `users:read`). */
export interface UsersClient {
  users: {
    info(args: { user: string }): Promise<{
      user?: {
        team_id?: string;
        enterprise_user?: { enterprise_id?: string };
        tz?: string;
        is_restricted?: boolean;
        is_ultra_restricted?: boolean;
      };
    }>;
  };
}

interface DirectoryOptions {
  /** How long an answer is kept; a person's team does not change, whether they are a guest may. */
  ttlMs?: number;
  /** The most people kept; the oldest answer goes first. */
  max?: number;
  clock?: () => number;
  /** Told of each call and how it ended, for the metrics. */
  onCall?: (result: 'ok' | 'error') => void;
}

const HOUR_MS = 3_600_000;

/**
 * Slack's directory, through `users.info`: a person's own team (`user.team_id`), on Enterprise
 * Grid their organisation (`user.enterprise_user.enterprise_id`), and their time zone
 * (`user.tz`), and whether they are a guest (`is_restricted`, `is_ultra_restricted`). Answers, and concurrent asks, are shared per person for `ttlMs`, at most `max`
 * people at once. A person Slack does not know (`user_not_found`) is `undefined`; any other
 * failure is thrown and not kept.
 */
export function createDirectory(client: UsersClient, opts: DirectoryOptions = {}): Directory {
  const { ttlMs = HOUR_MS, max = 5000, clock = Date.now, onCall } = opts;
  const known = new Map<string, { at: number; answer: Promise<Membership | undefined> }>();

  async function ask(userId: string): Promise<Membership | undefined> {
    try {
      const { user } = await client.users.info({ user: userId });
      onCall?.('ok');
      return {
        teamId: user?.team_id,
        enterpriseId: user?.enterprise_user?.enterprise_id,
        timeZone: user?.tz,
        guest: user?.is_restricted === true || user?.is_ultra_restricted === true,
      };
    } catch (error) {
      onCall?.('error');
      if (error instanceof webApi.WebAPIPlatformError && error.data.error === 'user_not_found')
        return undefined;
      throw error;
    }
  }

  return (userId) => {
    const now = clock();
    const kept = known.get(userId);
    if (kept && now - kept.at < ttlMs) return kept.answer;
    known.delete(userId);
    if (known.size >= max) known.delete(known.keys().next().value as string);
    const answer = ask(userId);
    known.set(userId, { at: now, answer });
    answer.catch(() => {
      if (known.get(userId)?.answer === answer) known.delete(userId);
    });
    return answer;
  };
}
