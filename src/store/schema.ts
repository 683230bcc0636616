import type { Generated } from 'kysely';
import type { InstallationId } from './keys.js';

/** The two databases the store runs on. */
export type Dialect = 'sqlite' | 'postgres';

/**
 * The bot's tables, the same on SQLite and PostgreSQL. Times are milliseconds since the epoch
 * (`bigint`, read back as numbers); structured values are JSON text.
 */
export interface Tables {
  /** One row per invoice being polled, however many channels watch it. */
  watched_invoices: {
    /** The installation whose key checks it: '' for the one workspace (many workspaces: its id). */
    installation_id: Generated<InstallationId>;
    invoice_id: string;
    /** The invoice as last seen (`InvoiceSnapshot` as JSON). */
    snapshot: string;
    /** When the first of its watches started: the cadence slows down from here. */
    watched_since: number;
    next_poll_at: number;
    /** Failed checks in a row, for backing off. */
    failures: number;
    /** When the first of those failed checks was made; null after a check that read the invoice. */
    failing_since: number | null;
    lease_owner: string | null;
    lease_until: number | null;
    /**
     * 1 from a Replace key until a check reads the invoice with the new key: a check that finds
     * the invoice unknown then ends its watches for that reason, not as "no longer known".
     */
    account_replaced: Generated<number>;
  };
  /** A channel watching an invoice: its live card, its thread, who started it. */
  watches: {
    id: string;
    /** The installation it belongs to: '' for the one workspace (many workspaces: its id). */
    installation_id: Generated<InstallationId>;
    team_id: string;
    channel_id: string;
    invoice_id: string;
    watcher_id: string;
    /** The live message the bot keeps current (`chat.update`); '' while pending. */
    card_ts: string;
    /** Where change notices go: the live card's thread; while pending, the thread the card is posted in, or ''. */
    thread_ts: string;
    /**
     * 'pending' from before its card is posted until the card is known to be in Slack (then
     * 'active', with `card_ts`), or known not to be (then the row is deleted).
     */
    state: 'pending' | 'active' | 'ended';
    started_at: number;
    /** When it ends whatever happens (WATCH_MAX_DAYS). */
    ends_at: number;
    ended_at: number | null;
    end_reason: string | null;
  };
  /**
   * Messages to send to Slack, written in the same transaction as the decision to send them.
   * Each lane (a channel) is delivered in order, one message at a time.
   */
  outbox: {
    id: Generated<number>;
    /** The installation whose token sends it: '' for the one workspace (many workspaces: its id). */
    installation_id: Generated<InstallationId>;
    lane: string;
    method: 'chat.postMessage' | 'chat.update';
    channel: string;
    thread_ts: string | null;
    /** The message to edit, for chat.update. */
    ts: string | null;
    /** `{ text, blocks }` as JSON. */
    message: string;
    watch_id: string | null;
    /** The feed subscription this message belongs to: checked before it goes out (docs in src/feed/). */
    subscription_id: string | null;
    created_at: number;
    next_attempt_at: number;
    attempts: number;
    /** Set just before a post goes out: a post that was attempted but never confirmed is looked for before it is sent again. */
    attempted_at: number | null;
    lease_owner: string | null;
    lease_until: number | null;
    done_at: number | null;
    /** `sent`, `found` (posted before a crash, confirmed afterwards) or `dropped: <why>`. */
    result: string | null;
  };
  /** Each installation's (each key's) background budget, all instances together (src/store/pace.ts). */
  background_pace: {
    installation_id: InstallationId;
    /** When the key's next background call may start (epoch ms): every call reserves one slot. */
    next_slot_at: number;
  };
  /** Small facts shared by all instances, e.g. that the payment service rejects the key. */
  service_state: {
    key: string;
    value: string;
    updated_at: number;
  };
  /** A channel receiving the payments feed and its daily digest. */
  feed_subscriptions: {
    id: string;
    /** The installation whose key reads it and whose token posts it: '' for the one workspace. */
    installation_id: Generated<InstallationId>;
    team_id: string;
    channel_id: string;
    subscriber_id: string;
    digest_hour: number;
    digest_minute: number;
    /** IANA time zone of the digest time. */
    digest_zone: string;
    state: 'active' | 'ended';
    created_at: number;
    ended_at: number | null;
    end_reason: string | null;
    next_digest_at: number;
    lease_owner: string | null;
    lease_until: number | null;
    /** When the channel was told the payment service rejects the key; cleared once it works again. */
    key_notice_at: number | null;
    /** The balance reading (`balance_history.id`) the last digest sent showed; null before the first. */
    last_digest_reading_id: Generated<number | null>;
    /** The last feed change (`feed_changes.id`) the last digest sent counted; 0 when there was none. */
    last_digest_change_id: Generated<number | null>;
    /** The "as of" time the last digest sent showed: said in the next one, never used to choose what it names. */
    last_digest_as_of: Generated<number | null>;
  };
  /** Each reading of the balance that differed from the one before (`StoredBalance` as JSON). */
  balance_history: {
    id: Generated<number>;
    /** The installation whose balance it is: '' for the one workspace. */
    installation_id: Generated<InstallationId>;
    taken_at: number;
    balances: string;
  };
  /** Each rise and fall the feed announced, for the digest's counts. */
  feed_changes: {
    id: Generated<number>;
    /** The installation whose feed announced it: '' for the one workspace. */
    installation_id: Generated<InstallationId>;
    at: number;
    currency: string;
    direction: 'rise' | 'fall';
  };
  /** Work done by one instance at a time however many run: each installation's balance poll. */
  singletons: {
    /** The installation it is done for: '' for the one workspace. */
    installation_id: Generated<InstallationId>;
    name: string;
    next_run_at: number;
    lease_owner: string | null;
    lease_until: number | null;
    last_success_at: number | null;
  };
  /**
   * A workspace (or, for an organisation-wide install, an organisation) that installed the app
   * with "Add to Slack". Every secret here is a sealed value (src/store/sealing.ts).
   */
  installations: {
    /** The team id; the enterprise id for an organisation-wide install. */
    id: InstallationId;
    team_id: string | null;
    enterprise_id: string | null;
    /** 1 for an organisation-wide install, 0 otherwise. */
    is_enterprise_install: number;
    app_id: string | null;
    /** Sealed; null once Slack said the token was revoked. */
    bot_token: string | null;
    /** Sealed; only with token rotation. */
    bot_refresh_token: string | null;
    /** Milliseconds since the epoch, with token rotation. */
    bot_token_expires_at: number | null;
    bot_id: string;
    bot_user_id: string;
    /** Comma-separated, as Slack lists them. */
    bot_scopes: string;
    installer_user_id: string;
    /** The workspace's payment service API key, sealed; null until it is connected. */
    payment_api_key: string | null;
    payment_key_connected_by: string | null;
    payment_key_connected_at: number | null;
    created_at: number;
    updated_at: number;
  };
  /** Slack event ids already handled, so a retried event is acted on once. */
  seen_events: {
    id: string;
    seen_at: number;
  };
  /** The coin each person chose for their App Home's week of one coin (src/store/home-coins.ts). */
  home_coin_choices: {
    installation_id: InstallationId;
    user_id: string;
    coin: string;
  };
  /** The installation's last sighting of each invoice it watched or looked up: was it paid (1) or not (0). */
  invoices_seen: {
    installation_id: Generated<InstallationId>;
    invoice_id: string;
    paid: number;
    seen_at: number;
  };
  /**
   * An invoice the bot saw turn paid in a conversation (a watch's check: `how` 'watched'), or saw
   * paid there first (a lookup: 'seen'), for the feed's posts and digests in that conversation.
   */
  invoices_paid: {
    /** The database's numbering: the order they are listed in. */
    id: Generated<number>;
    installation_id: Generated<InstallationId>;
    channel_id: string;
    invoice_id: string;
    title: string;
    /** The exact digits the service sent. */
    amount: string;
    currency: string;
    /** The payment page, as the service sent it ('' when it sent none). */
    link: string;
    how: 'watched' | 'seen';
    /** When the bot saw it (the store's clock). */
    paid_at: number;
    /** 1 once a feed post in the conversation listed it. */
    listed: Generated<number>;
    /** 1 once a digest in the conversation named it: each is named in one digest. */
    digested: Generated<number>;
  };
  /** The states a watched invoice was seen in (issue 41, its side panel): the latest few per invoice. */
  invoice_states_seen: {
    /** The order they were seen in, as the database numbered them. */
    id: Generated<number>;
    /** The installation whose watch saw it: '' for the one workspace. */
    installation_id: Generated<InstallationId>;
    invoice_id: string;
    status: string;
    pay_status: string;
    /** When it was seen (epoch ms), to show; never to order by. */
    seen_at: number;
  };
  /** What a feed's channel tuned in its Settings modal (src/feed/settings.ts); none is the defaults. */
  feed_settings: {
    subscription_id: string;
    /** The installation whose feed it is: '' for the one workspace. */
    installation_id: Generated<InstallationId>;
    /** JSON array of the coins posted; null for every coin. */
    coins: string | null;
    /** JSON object: coin id → the exact decimal below which a movement is held. */
    minimums: string;
    style: 'full' | 'condensed';
    digest: 'daily' | 'weekly' | 'off';
    /** ISO weekday of a weekly digest: 1 Monday … 7 Sunday. */
    weekday: number;
    /** Raised by every save; a save is written only over the version it read. */
    version: number;
    updated_at: number;
  };
  /** A movement below its channel's minimum, held until a post or digest shows it. */
  feed_held: {
    /** Assigned by the database: the order movements were held in. */
    id: Generated<number>;
    /** The installation whose feed held it: '' for the one workspace. */
    installation_id: Generated<InstallationId>;
    subscription_id: string;
    currency: string;
    /** The exact signed change, as text. */
    amount: string;
    held_at: number;
    /** 1 once a feed post showed it. */
    posted: Generated<number>;
    /** 1 once a digest showed it in its held sums: each is in one digest. */
    digested: Generated<number>;
  };
}
