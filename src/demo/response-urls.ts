import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { withAttachmentBlocks } from './render-data.js';
import { BOT_USER, isObject, type Json, str, type Workspace } from './workspace.js';

/**
 * The demo Slack's response_urls (docs/slack.md#response-url): the address each command, click
 * and shortcut carries for the bot's replies, and what a reply does to the channel.
 */

/** A response_url takes this many posts, within 30 minutes (docs/slack.md#response-url). */
const RESPONSE_URL_POSTS = 5;
const RESPONSE_URL_MS = 30 * 60_000;

/** Where a reply goes: the message it may replace or delete, and the thread it is posted in. */
interface ReplyTarget {
  sourceTs: string | undefined;
  threadTs: string | undefined;
}

/** A message sent to a response_url, or in a command's acknowledgement. */
export function respond(workspace: Workspace, target: ReplyTarget, body: Json): void {
  const source = workspace.find(target.sourceTs);
  if (body.delete_original === true) {
    if (source) workspace.messages = workspace.messages.filter((m) => m !== source);
  } else if (body.replace_original === true && source) {
    source.text = str(body.text) ?? '';
    source.blocks = withAttachmentBlocks(body);
  } else {
    workspace.add({
      user: BOT_USER,
      text: str(body.text) ?? '',
      blocks: withAttachmentBlocks(body),
      ephemeral: body.response_type !== 'in_channel',
      metadata: body.metadata,
      threadTs: str(body.thread_ts) ?? target.threadTs,
    });
    return;
  }
  workspace.changed();
}

export class ResponseUrls {
  /** Each response_url by its id: where its posts go and how many it may still take. */
  readonly #targets = new Map<string, ReplyTarget & { left: number; until: number }>();

  /** `base` is the address the ids follow: `http://127.0.0.1:<port>/response/`. */
  constructor(
    private readonly workspace: Workspace,
    private readonly base: string,
  ) {}

  /** A new response_url for replies to `sourceTs`, in the thread `threadTs`. */
  create(sourceTs: string | undefined, threadTs: string | undefined): string {
    const id = randomUUID();
    this.#targets.set(id, {
      sourceTs,
      threadTs,
      left: RESPONSE_URL_POSTS,
      until: Date.now() + RESPONSE_URL_MS,
    });
    return `${this.base}${id}`;
  }

  /**
   * Answers a post of `raw` to the response_url `id`; false, answering nothing, when there is no
   * such response_url. A body that is not JSON throws.
   */
  answer(id: string, raw: string, res: ServerResponse): boolean {
    const target = this.#targets.get(id);
    if (!target) return false;
    if (target.left <= 0 || Date.now() > target.until) {
      res.writeHead(404).end('used_url');
      return true;
    }
    const body: unknown = JSON.parse(raw);
    if (!isObject(body)) {
      res.writeHead(400).end('invalid_payload');
      return true;
    }
    target.left -= 1;
    respond(this.workspace, target, body);
    res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    return true;
  }
}
